/**
 * `proveResidency`: the exhaustive residency proof for one ring and draft count, with a shortest counterexample
 * (replayed in the simulator, which explains it) when it fails; `findMaxDraftTokens`: the largest draft count a
 * ring serves.
 */
import { validateRing } from "../inputs.js";
import { type ResidencyBatch, concretizePath } from "./replay.js";
import type { ResidencyViolation } from "../residency.js";
import {
  type ModelSearchResult,
  type ProofProgress,
  type ResidencyProofOptions,
  type SearchControl,
  proofCacheFor,
  resolvePad,
  searchResidency,
} from "./search.js";

/** What every proof reports of its search, whichever ring it searched (`proofCounts`). */
export interface ProofCounts {
  proved: boolean;
  /**
   * False when the options' deadline stopped the search: nothing is proved, but every batch sequence of at most
   * `depth` batches was checked and none loses a committed position.
   */
  complete: boolean;
  /** Breadth-first levels explored in full (batches per sequence checked). */
  depth: number;
  /** Canonical states reached (each is every concrete state with the same observable future). */
  states: number;
  /** Successor computations (one per batch and accept length per state). */
  transitions: number;
  seconds: number;
  draftTokens: number;
  adaptive: boolean;
  /** Prefill chunks explored per state: 1..chunkLengths tokens. */
  chunkLengths: number;
}

export interface ResidencyProof extends ProofCounts {
  ring: { compressRatio: number; ringSize: number; swaPageSize: number; useReqRing: boolean };
  writePad: number;
  /** Where the pad came from: "forced" (an explicit pad) or the pad formula. */
  padSource: string;
  /** A shortest batch sequence from an empty ring to a violation, and the violation, or null when proved. */
  counterexample: { batches: ResidencyBatch[]; violation: ResidencyViolation } | null;
}

export function proveResidency(o: ResidencyProofOptions): ResidencyProof {
  validateRing(o);
  const started = performance.now();
  const r = searchResidency(o);
  const ring = {
    compressRatio: o.compressRatio,
    ringSize: o.ringSize,
    swaPageSize: o.swaPageSize,
    useReqRing: o.useReqRing ?? false,
  };
  const counterexample = r.path === null ? null : concretizePath({ ...ring, writePad: r.writePad }, r.path);
  return {
    ...proofCounts(r, o, started),
    ring,
    writePad: r.writePad,
    padSource: o.writePad !== undefined ? "forced" : (o.padFormula ?? "derived"),
    counterexample,
  };
}

/** The counts of a search, for its proof. */
export function proofCounts(r: ModelSearchResult, o: SearchControl, started: number): ProofCounts {
  return {
    proved: r.proved,
    complete: r.complete,
    depth: r.depth,
    states: r.states,
    transitions: r.transitions,
    seconds: (performance.now() - started) / 1000,
    draftTokens: o.draftTokens,
    adaptive: o.adaptive ?? false,
    chunkLengths: r.chunkLengths,
  };
}

export interface MaxDraftTokens {
  /** Largest draft count proved (0: not even one draft token). */
  maxDraftTokens: number;
  /** The proof at maxDraftTokens (null when it is 0) and the failed one at maxDraftTokens + 1. */
  proof: ResidencyProof | null;
  failure: ResidencyProof;
  /** Proofs run. */
  proofs: number;
  /**
   * False when the deadline stopped a proof: `failure` is that incomplete proof, and `maxDraftTokens` the largest
   * D proved before it (a lower bound).
   */
  complete: boolean;
  seconds: number;
}

/**
 * Scans draft counts from the ring's pad (at least 1): up while proved, down while not, and reports the largest
 * D that proves with D + 1 failing. `draftTokens` in the options is ignored; `adaptive` applies.
 */
export function findMaxDraftTokens(
  o: Omit<ResidencyProofOptions, "draftTokens">,
  onProof?: (p: ResidencyProof) => void,
  onProgress?: (d: number, p: ProofProgress) => void,
): MaxDraftTokens {
  const started = performance.now();
  const base = { ...o, draftTokens: 1 };
  validateRing(base);
  const cache = proofCacheFor(base);
  let proofs = 0;
  const at = (d: number): ResidencyProof => {
    proofs++;
    const p = proveResidency({ ...o, draftTokens: d, cache, onProgress: onProgress && ((x) => onProgress(d, x)) });
    onProof?.(p);
    return p;
  };
  const result = (max: number, proof: ResidencyProof | null, failure: ResidencyProof): MaxDraftTokens => ({
    maxDraftTokens: max,
    proof,
    failure,
    proofs,
    seconds: elapsed(started),
    complete: failure.complete,
  });
  const found = scanDraftTokens(Math.max(1, resolvePad(base)), at);
  return result(found.max, found.proof, found.failure);
}

/** What a draft-count scan found: the largest D proved, its proof, and the failed proof at the next D. */
export interface DraftTokenScan<P> {
  max: number;
  proof: P | null;
  failure: P;
}

/**
 * Scans draft counts from `start`: up while proved, down while not; the largest D that proves with D + 1 failing.
 * An incomplete proof ends the scan with what was proved before it (the proof at `start` incomplete: 0).
 */
export function scanDraftTokens<P extends { proved: boolean; complete: boolean }>(
  start: number,
  at: (draftTokens: number) => P,
): DraftTokenScan<P> {
  let d = start;
  let cur = at(d);
  if (!cur.complete) return { max: 0, proof: null, failure: cur };
  if (cur.proved) {
    for (;;) {
      const next = at(d + 1);
      if (!next.proved) return { max: d, proof: cur, failure: next };
      d++;
      cur = next;
    }
  }
  for (;;) {
    if (d === 1) return { max: 0, proof: null, failure: cur };
    const prev = at(d - 1);
    if (!prev.complete) return { max: 0, proof: null, failure: prev };
    if (prev.proved) return { max: d - 1, proof: prev, failure: cur };
    d--;
    cur = prev;
  }
}

function elapsed(started: number): number {
  return (performance.now() - started) / 1000;
}
