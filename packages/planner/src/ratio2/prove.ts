/**
 * The residency proof of the ratio-2 pair-state ring (docs/reference/ratio2-pair-ring.md#4-the-proof): the shared
 * breadth-first search over the pair-ring model, every counterexample replayed in the pair-ring simulator, the
 * largest verify width a ring serves, and the bound derived by hand that the proofs are checked against.
 */
import { writePad } from "../pad.js";
import { type ResidencyBatch, concretizeOn } from "../prove/replay.js";
import { type ProofCounts, proofCounts, scanDraftTokens } from "../prove/prove.js";
import { type SearchControl, searchModel } from "../prove/search.js";
import type { ResidencyViolation } from "../residency.js";
import { type PairRingConfig, type PairVerifyWriter, pairRingConfig } from "./access.js";
import { fusedVerifyAccepts } from "./addressing.js";
import { pairRingModel } from "./effects.js";
import { PairRingSimulator } from "./simulator.js";

export interface PairRingProofOptions extends PairRingConfig, SearchControl {}

/** What SGLang's own guards say about this ring and verify width, next to the proof. */
export interface PairRingGuards {
  /** The c2 verify kernel's host check `ring_size > draft_len`. */
  kernelCheck: boolean;
  /** `get_compress_state_write_pad(2, R₂)` (window 2): R₂ when R₂ > 2, else 0. */
  writePad: number;
  /** SGLang's unit-test contract `write_pad(2, R₂) >= D`. */
  padServes: boolean;
}

export interface PairRingProof extends ProofCounts {
  ring: Required<PairRingConfig>;
  /** The width the hand-derived bound says this ring serves (`pairRingServedDraftTokens`). */
  derivedMaxDraftTokens: number;
  guards: PairRingGuards;
  counterexample: { batches: ResidencyBatch[]; violation: ResidencyViolation } | null;
}

/**
 * The largest verify width a pair ring serves, derived by hand (the proofs check it). Only the partner of an odd
 * prefix is read from the ring, and it is the last committed position of the batch before:
 * - `torch` keeps a block's last R₂ rows; with accept 1 at an even prefix the committed position is row 0, kept
 *   only while D ≤ R₂; rows are distinct slots and all reads precede the writes, so nothing else can fail.
 * - `verify-fused` stores every even row, concurrently with the read. Two rows k apart share a slot when R₂ | k;
 *   with even R₂ the first row's partner and row R₂ - 1 share one and are both even-position accesses, so D ≤ R₂ - 1
 *   (the kernel's `ring_size > draft_len`); with odd R₂ a same-slot pair of even positions is 2·R₂ apart, so
 *   D ≤ 2·R₂ - 1.
 */
export function pairRingServedDraftTokens(ringSize: number, verifyWriter: PairVerifyWriter = "torch"): number {
  const c = pairRingConfig({ compressRatio: 2, ringSize, verifyWriter });
  if (c.verifyWriter === "torch") return c.ringSize;
  return c.ringSize % 2 === 0 ? c.ringSize - 1 : 2 * c.ringSize - 1;
}

function guardsOf(ringSize: number, draftTokens: number): PairRingGuards {
  const pad = writePad(2, ringSize);
  return { kernelCheck: fusedVerifyAccepts(ringSize, draftTokens), writePad: pad, padServes: pad >= draftTokens };
}

/** The exhaustive proof for one pair ring and verify width, with a shortest counterexample when it fails. */
export function provePairRing(o: PairRingProofOptions): PairRingProof {
  const ring = pairRingConfig(o);
  const started = performance.now();
  const r = searchModel(pairRingModel(ring), o);
  const counterexample = r.path === null ? null : concretizeOn(new PairRingSimulator(ring), 0, r.path);
  return {
    ...proofCounts(r, o, started),
    ring,
    derivedMaxDraftTokens: pairRingServedDraftTokens(ring.ringSize, ring.verifyWriter),
    guards: guardsOf(ring.ringSize, o.draftTokens),
    counterexample,
  };
}

export interface PairRingMaxDraftTokens {
  /** Largest verify width proved (0: not even one token). */
  maxDraftTokens: number;
  proof: PairRingProof | null;
  /** The failed proof at maxDraftTokens + 1. */
  failure: PairRingProof;
  proofs: number;
  complete: boolean;
  seconds: number;
}

/** The largest verify width a pair ring serves, by proofs (from the derived bound, up or down as they say). */
export function findPairRingMaxDraftTokens(o: Omit<PairRingProofOptions, "draftTokens">): PairRingMaxDraftTokens {
  const started = performance.now();
  const ring = pairRingConfig({ ...o, compressRatio: 2 });
  let proofs = 0;
  const at = (d: number): PairRingProof => {
    proofs++;
    return provePairRing({ ...o, draftTokens: d });
  };
  const start = Math.max(1, pairRingServedDraftTokens(ring.ringSize, ring.verifyWriter));
  const found = scanDraftTokens(start, at);
  return {
    maxDraftTokens: found.max,
    proof: found.proof,
    failure: found.failure,
    proofs,
    complete: found.failure.complete,
    seconds: (performance.now() - started) / 1000,
  };
}
