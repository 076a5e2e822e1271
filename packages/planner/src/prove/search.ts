/**
 * Breadth-first model checking of ring residency over canonical states (docs/residency-proof.md). Transitions
 * are the batches the residency checker knows; a `ProofModel` gives their effects: for c4/c128 planned by the real
 * planner (see effects.ts), for the ratio-2 pair ring by its write rules (ratio2/effects.ts). Invariant R1 is
 * checked at every ring read. Breadth-first order makes the first violation a shortest counterexample.
 */
import { PlannerError } from "../errors.js";
import { optionalBoolean, requireInteger } from "../inputs.js";
import { padForFormula, type PadFormula } from "../pad.js";
import { type BatchEffect, WindowSlots, decodeEffect, prefillEffect } from "./effects.js";
import { type ProofRing, RingGeometry } from "./geometry.js";

/** What any search takes besides its ring: the draft counts, and the bounds on its work. */
export interface SearchControl {
  /** Draft tokens per verify (the largest, with `adaptive`). */
  draftTokens: number;
  /** Every draft count 1..draftTokens at each verify. */
  adaptive?: boolean;
  /** Refuse to explore more canonical states than this (default 20,000,000). */
  maxStates?: number;
  /** Called every few thousand states (progress bars). */
  onProgress?: (p: ProofProgress) => void;
  /**
   * Stop when `performance.now()` reaches this (a time limit): the result is then incomplete (`complete: false`),
   * with every batch sequence of at most `depth` batches checked.
   */
  deadline?: number;
}

export interface ResidencyProofOptions extends ProofRing, SearchControl {
  /** Explicit pad (wins over `padFormula`). */
  writePad?: number;
  /** Default `derived`. */
  padFormula?: PadFormula;
  /** Plan effects to reuse across proofs of the same ring and pad (e.g. several draft counts). */
  cache?: ProofCache;
}

/** How a ring's states reduce: the part of `RingGeometry` the search itself reads. */
export interface StateGeometry {
  readonly cr: number;
  /** Paged c4: radix resumes at SWA-page boundaries are transitions. */
  readonly paged: boolean;
  readonly swaPageSize: number;
  /** First committed position a batch starting at prefix `p` can read from the ring. */
  windowStart(p: number): number;
  /** Canonical index of an absolute prefix (planned at that index as a prefix). */
  canonical(p: number): number;
}

/** The batch effects at one canonical prefix. */
export interface PrefixPlanner {
  chunk(tokens: number): BatchEffect;
  verify(draftTokens: number): BatchEffect;
  decode(): BatchEffect;
}

/** What the search explores: a ring's reduction, its batches' effects, and the chunk lengths that suffice. */
export interface ProofModel {
  /** Names the ring (and pad) that effects cached under it belong to. */
  readonly key: string;
  readonly geometry: StateGeometry;
  /** Prefill chunks 1..maxChunk are explored at every state. */
  readonly maxChunk: number;
  at(canonical: number): PrefixPlanner;
}

/** Plan effects per canonical prefix, reusable by every proof of one ring and pad. */
export class ProofCache {
  readonly effects: Array<PrefixEffects | undefined> = [];
  constructor(readonly key: string) {}
}

function cacheKey(o: ProofRing, pad: number): string {
  return `${o.compressRatio}/${o.ringSize}/${o.swaPageSize}/${o.useReqRing ?? false}/${pad}`;
}

let lastCache: ProofCache | null = null;
/** Without an explicit cache, consecutive proofs of one ring and pad share the last one. */
function sharedCache(key: string): ProofCache {
  if (lastCache?.key !== key) lastCache = new ProofCache(key);
  return lastCache;
}

/** A cache for proofs of this ring and pad. */
export function proofCacheFor(o: ResidencyProofOptions): ProofCache {
  return new ProofCache(cacheKey(o, resolvePad(o)));
}

export interface ProofProgress {
  states: number;
  /** States explored (their successors computed) so far. */
  explored: number;
  depth: number;
  /** Canonical prefixes whose batch effects are planned (of canonicalCount). */
  planned: number;
  seconds: number;
}

/** One step of an abstract path: what the counterexample's batch was, before it is made concrete. */
export type AbstractStep =
  | { kind: "prefill"; tokens: number }
  | { kind: "verify"; draftTokens: number; accept: number }
  | { kind: "decode" }
  | { kind: "radixResume" }
  /** A radix resume to the page end that the previous batch completed `end` positions after its prefix. */
  | { kind: "radixResumeTo"; end: number };

/** What a search over any model finds. */
export interface ModelSearchResult {
  proved: boolean;
  /** False when the deadline stopped the search: `proved` is then false and `path` null. */
  complete: boolean;
  states: number;
  transitions: number;
  depth: number;
  /** Shortest path to a violation: its last step shows it. */
  path: AbstractStep[] | null;
  chunkLengths: number;
}

export interface SearchResult extends ModelSearchResult {
  writePad: number;
}

const TRANSITION_PREFILL = 0;
const TRANSITION_VERIFY = 1;
const TRANSITION_DECODE = 2;
const TRANSITION_RESUME = 3;

/** Per canonical prefix: every batch's effect, computed on first use. */
interface PrefixEffects {
  planner: PrefixPlanner;
  chunks: BatchEffect[];
  /** By draft count. */
  verifies: Map<number, BatchEffect>;
  decode: BatchEffect;
}

/** The resolved pad, from the options' `writePad` or `padFormula`. */
export function resolvePad(o: ResidencyProofOptions): number {
  if (o.writePad !== undefined) return requireInteger("writePad", o.writePad, 0, 65535);
  return padForFormula(o.padFormula ?? "derived", o.compressRatio, o.ringSize);
}

/**
 * Longest prefill chunk explored. Beyond pad + window + 2 chunks every chunk's reads, clobbers and final window
 * are those of the chunk one period shorter (docs/residency-proof.md); paged rings add a period so that one
 * whole interior SWA page is completed.
 */
export function chunkBound(g: RingGeometry, pad: number): number {
  return chunkSpread(g, pad) + (g.paged ? 2 : 1) * g.period;
}

/** From this chunk length on, a chunk's reads and its final window no longer overlap (docs/residency-proof.md). */
export function chunkSpread(g: RingGeometry, pad: number): number {
  return Math.min(pad, g.ringSize + 1) + g.window + 2 * g.cr;
}

/** A canonical state: the prefix modulo the addressing's period and the window's validity bits. */
export interface CanonicalState {
  canonical: number;
  /** Bit j: the slot of position windowStart(P) + j holds that position's committed value. */
  bits: bigint;
}

const BIG: bigint[] = [];
const LOW: bigint[] = [];
function big(i: number): bigint {
  while (BIG.length <= i) {
    BIG.push(BigInt(BIG.length));
    LOW.push((1n << BIG[BIG.length - 1]!) - 1n);
  }
  return BIG[i]!;
}
function low(i: number): bigint {
  big(i);
  return LOW[i]!;
}
function shift(x: bigint, k: number): bigint {
  return k >= 0 ? x << big(k) : x >> big(-k);
}

/** The empty ring at prefix 0 (positions below 0 count as valid: nothing reads them). */
export function initialState(g: StateGeometry): CanonicalState {
  const p = 0;
  return { canonical: 0, bits: low(p - g.windowStart(p)) };
}

/** Whether every ring read of the batch finds its position's committed value (invariant R1). */
export function readsHold(s: CanonicalState, eff: BatchEffect): boolean {
  if (eff.unconditional) return false;
  const avail = eff.readsAfterWrite ? s.bits & ~eff.clobber : s.bits;
  return (eff.readMask & ~avail) === 0n;
}

/**
 * The state after the batch commits `accept` tokens (reads must hold), and whether it completed an SWA page
 * whose tail is not all valid (a radix resume there would read it).
 */
export function successor(
  g: StateGeometry,
  s: CanonicalState,
  eff: BatchEffect,
  accept: number,
): { state: CanonicalState; badTail: number | null } {
  const p = s.canonical;
  const ws = g.windowStart(p);
  const after = s.bits & ~eff.clobber;
  const p2 = p + accept;
  const ws2 = g.windowStart(p2);
  const bits = (shift(after, ws - ws2) | shift(eff.written & low(accept), p - ws2)) & low(p2 - ws2);
  let badTail: number | null = null;
  for (const t of eff.tails) {
    if (t.end > accept) break;
    if ((after & t.oldMask) !== t.oldMask || (eff.written & t.batchMask) !== t.batchMask) {
      badTail = t.end;
      break;
    }
  }
  return { state: { canonical: g.canonical(p2), bits }, badTail };
}

/**
 * A radix resume (paged c4, prefix past the first page) lands on prefix 0 of a page, whose window is the
 * previous page's tail: the live window's bits when the tail is still in it, else all valid (a completed tail
 * outside the window was checked when its page was completed).
 */
export function resumeSuccessor(g: StateGeometry, s: CanonicalState): CanonicalState {
  const p = s.canonical;
  const ws = g.windowStart(p);
  const b = Math.floor(p / g.swaPageSize) * g.swaPageSize;
  const bits = ws <= b - g.cr ? shift(s.bits, ws - (b - g.cr)) & low(g.cr) : low(g.cr);
  return { canonical: g.canonical(b), bits };
}

/** The effect of a batch at a canonical prefix, planned fresh (tests and one-off steps; the search caches). */
export function batchEffect(
  g: RingGeometry,
  canonical: number,
  batch: { kind: "prefill"; tokens: number } | { kind: "decode" },
  pad: number,
): BatchEffect {
  const w = new WindowSlots(g, canonical);
  return batch.kind === "decode" ? decodeEffect(w) : prefillEffect(w, batch.tokens, pad);
}

/** The c4/c128 model: every batch planned by the real planner at the canonical prefix. */
function plannerModel(g: RingGeometry, pad: number): ProofModel {
  return {
    key: cacheKey(g.planOptions(), pad),
    geometry: g,
    maxChunk: chunkBound(g, pad),
    at(canonical) {
      const w = new WindowSlots(g, canonical);
      return {
        chunk: (tokens) => prefillEffect(w, tokens, pad),
        verify: (draftTokens) => prefillEffect(w, draftTokens, pad),
        decode: () => decodeEffect(w),
      };
    },
  };
}

export function searchResidency(o: ResidencyProofOptions): SearchResult {
  const g = new RingGeometry(o);
  const pad = resolvePad(o);
  const model = plannerModel(g, pad);
  const cache = o.cache ?? sharedCache(model.key);
  if (cache.key !== model.key) {
    throw new PlannerError(
      "INVALID_ARGUMENT",
      "cache",
      cache.key,
      `was built for another ring or pad than ${model.key}`,
    );
  }
  return { ...new ResidencySearch(o, model, cache).run(), writePad: pad };
}

/** The same breadth-first search over any model (its effects cached for this search only). */
export function searchModel(model: ProofModel, o: SearchControl): ModelSearchResult {
  return new ResidencySearch(o, model, new ProofCache(model.key)).run();
}

/** The search's controls, checked: the draft counts, the state bound, the deadline. */
function searchSetup(o: SearchControl, model: ProofModel, cache: ProofCache) {
  const draft = requireInteger("draftTokens", o.draftTokens, 1, 65535);
  const maxStates = requireInteger("maxStates", o.maxStates ?? 20_000_000, 1, 1e9);
  const adaptive = optionalBoolean("adaptive", o.adaptive);
  const draftCounts = adaptive ? Array.from({ length: draft }, (_, i) => i + 1) : [draft];
  const deadline = deadlineOf(o.deadline);
  return { g: model.geometry, model, maxStates, draftCounts, maxChunk: model.maxChunk, deadline, cache };
}

/** The canonical states found so far: each with its parent and the transition that reached it (kind, a, b). */
class StateStore {
  readonly states: CanonicalState[];
  private readonly parent: number[] = [-1];
  private readonly tKind: number[] = [-1];
  private readonly tA: number[] = [0];
  private readonly tB: number[] = [0];
  private readonly visited = new Map<string, number>();

  constructor(
    initial: CanonicalState,
    private readonly maxStates: number,
  ) {
    this.states = [initial];
  }

  /** Adds a state not seen before; past `maxStates` the proof is refused. */
  add(st: CanonicalState, from: number, kind: number, a: number, b: number): void {
    const key = `${st.canonical}:${st.bits.toString(36)}`;
    if (this.visited.has(key)) return;
    if (this.states.length >= this.maxStates) {
      throw new PlannerError(
        "SIMULATION",
        "maxStates",
        this.maxStates,
        "the residency proof's state space exceeds maxStates; raise it or prove a smaller ring",
      );
    }
    this.visited.set(key, this.states.length);
    this.states.push(st);
    this.parent.push(from);
    this.tKind.push(kind);
    this.tA.push(a);
    this.tB.push(b);
  }

  /** The abstract steps from the initial state to state `s`. */
  pathTo(s: number): AbstractStep[] {
    const steps: AbstractStep[] = [];
    for (let x = s; this.parent[x]! >= 0; x = this.parent[x]!) {
      steps.push(stepOf(this.tKind[x]!, this.tA[x]!, this.tB[x]!));
    }
    return steps.reverse();
  }
}

/** One breadth-first proof: the effects it plans, the states it stores, the first violation it meets. */
class ResidencySearch {
  private readonly setup: ReturnType<typeof searchSetup>;
  private readonly store: StateStore;
  private readonly started = performance.now();
  private planned = 0;
  private explored = 0;
  private depth = 0;
  private transitions = 0;
  private lastReport = 0;
  private violationAt: { state: number; step: AbstractStep } | null = null;
  private tailCandidate: { state: number; step: AbstractStep; end: number } | null = null;

  constructor(
    private readonly o: SearchControl,
    model: ProofModel,
    cache: ProofCache,
  ) {
    this.setup = searchSetup(o, model, cache);
    this.store = new StateStore(initialState(this.setup.g), this.setup.maxStates);
  }

  run(): ModelSearchResult {
    let complete = true;
    try {
      this.levels();
    } catch (error) {
      if (error !== STOPPED) throw error;
      complete = false;
      this.violationAt = null;
      this.tailCandidate = null;
    }
    const path = this.counterexample();
    return {
      proved: complete && path === null,
      complete,
      states: this.store.states.length,
      transitions: this.transitions,
      depth: this.depth,
      path,
      chunkLengths: this.setup.maxChunk,
    };
  }

  /** Level by level until a violation, a bad page tail (at the end of its level) or no new state. */
  private levels(): void {
    let levelStart = 0;
    let levelEnd = 1;
    while (levelStart < levelEnd) {
      for (let s = levelStart; s < levelEnd; s++) {
        this.explored = s;
        if ((s & 255) === 0) {
          this.report();
          if (this.pastDeadline()) throw STOPPED;
        }
        if (!this.explore(s)) return;
      }
      if (this.tailCandidate !== null) return;
      this.depth++;
      levelStart = levelEnd;
      levelEnd = this.store.states.length;
    }
  }

  /** Every batch from state `s`; false (with `violationAt` set) when one breaks R1. */
  private explore(s: number): boolean {
    const { g, draftCounts, maxChunk } = this.setup;
    const c = this.store.states[s]!.canonical;
    const eff = this.effectsOf(c);
    for (let t = 1; t <= maxChunk; t++) {
      if (!this.apply(s, eff.chunks[t - 1]!, 0, TRANSITION_PREFILL, t)) {
        this.violationAt = { state: s, step: { kind: "prefill", tokens: t } };
        return false;
      }
    }
    if (s === 0) return true; // the first batch of a request is a prefill
    for (const d of draftCounts) {
      if (!this.apply(s, eff.verifies.get(d)!, d, TRANSITION_VERIFY, d)) {
        this.violationAt = { state: s, step: { kind: "verify", draftTokens: d, accept: 1 } };
        return false;
      }
    }
    if (!this.apply(s, eff.decode, 0, TRANSITION_DECODE, 1)) {
      this.violationAt = { state: s, step: { kind: "decode" } };
      return false;
    }
    if (g.paged && c >= g.swaPageSize) {
      this.transitions++;
      this.store.add(resumeSuccessor(g, this.store.states[s]!), s, TRANSITION_RESUME, 0, 0);
    }
    return true;
  }

  /** Applies an effect for accepts 1..accepts (0: the one accept `a`); returns false when R1 fails. */
  private apply(s: number, eff: BatchEffect, accepts: number, kind: number, a: number): boolean {
    const st = this.store.states[s]!;
    if (!readsHold(st, eff)) return false;
    const first = accepts === 0 ? a : 1;
    const last = accepts === 0 ? a : accepts;
    for (let acc = first; acc <= last; acc++) {
      this.transitions++;
      const next = successor(this.setup.g, st, eff, acc);
      if (next.badTail !== null && this.tailCandidate === null) {
        const step: AbstractStep =
          kind === TRANSITION_VERIFY
            ? { kind: "verify", draftTokens: a, accept: acc }
            : kind === TRANSITION_DECODE
              ? { kind: "decode" }
              : { kind: "prefill", tokens: acc };
        this.tailCandidate = { state: s, step, end: next.badTail };
      }
      this.store.add(next.state, s, kind, kind === TRANSITION_VERIFY ? a : acc, acc);
    }
    return true;
  }

  /** The batch effects at canonical prefix `c`, planned on first use (and the verify widths asked for). */
  private effectsOf(c: number): PrefixEffects {
    const { model, maxChunk, draftCounts, cache } = this.setup;
    let e = cache.effects[c];
    if (e === undefined) {
      const planner = model.at(c);
      const chunks: BatchEffect[] = [];
      for (let t = 1; t <= maxChunk; t++) {
        if ((t & 15) === 0 && this.pastDeadline()) throw STOPPED;
        chunks.push(planner.chunk(t));
      }
      e = { planner, chunks, verifies: new Map(), decode: planner.decode() };
      cache.effects[c] = e;
      this.planned++;
      this.report();
    }
    for (const d of draftCounts) if (!e.verifies.has(d)) e.verifies.set(d, e.planner.verify(d));
    return e;
  }

  /** The shortest counterexample: to the violation, or to the bad page tail followed by a resume there. */
  private counterexample(): AbstractStep[] | null {
    if (this.violationAt !== null) return [...this.store.pathTo(this.violationAt.state), this.violationAt.step];
    const tc = this.tailCandidate;
    if (tc === null) return null;
    const resume: AbstractStep = { kind: "radixResumeTo", end: tc.end };
    return [...this.store.pathTo(tc.state), tc.step, resume, { kind: "prefill", tokens: this.setup.g.cr }];
  }

  private pastDeadline(): boolean {
    const { deadline } = this.setup;
    return deadline !== Number.POSITIVE_INFINITY && performance.now() >= deadline;
  }

  private report(): void {
    if (this.o.onProgress === undefined) return;
    const now = performance.now();
    if (now - this.lastReport < 200) return;
    this.lastReport = now;
    const { explored, depth, planned } = this;
    this.o.onProgress({
      states: this.store.states.length,
      explored,
      depth,
      planned,
      seconds: (now - this.started) / 1000,
    });
  }
}

function deadlineOf(deadline: unknown): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  if (typeof deadline !== "number" || Number.isNaN(deadline)) {
    throw new PlannerError("INVALID_TYPE", "deadline", deadline, "must be a performance.now() instant in ms");
  }
  return deadline;
}

/** Thrown inside the search when the deadline passes; caught by searchResidency alone. */
const STOPPED = Symbol("deadline");

function stepOf(kind: number, a: number, b: number): AbstractStep {
  switch (kind) {
    case TRANSITION_PREFILL:
      return { kind: "prefill", tokens: a };
    case TRANSITION_VERIFY:
      return { kind: "verify", draftTokens: a, accept: b };
    case TRANSITION_DECODE:
      return { kind: "decode" };
    default:
      return { kind: "radixResume" };
  }
}
