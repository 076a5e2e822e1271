/**
 * The sequential references of one request's open chunk in one layer (docs/reference/online-mtp.md §5.4):
 *   - exact: the float64 fold of the committed tokens, never rounded (offline pooling of the prefix);
 *   - rounded: the float64 fold with a bf16 rounding of (max, sum, acc) at exactly the kernels' store points (a
 *     commit stores bank a = bank 0 folded with the a accepted tokens; an extend stores its trailing segment);
 * with, per channel, the derived bound of a kernel row against each: against `exact` the accumulated rounding bound
 * (`storeBound` per store, `foldStepBound` per token), against `rounded` the spread the fp32 arithmetic between two
 * stores allows (zero when both stores provably round to the same bf16 value).
 */
import {
  elementBounds,
  f32MeanError,
  f32ScoreError,
  f32WeightError,
  foldStepBound,
  roundedSpread,
  storeBound,
} from "./bf16-bound.js";
import { CHUNK_TOKENS } from "./constants.js";
import { type ErrorStats, REL_FLOOR, type TokenInput, bf16RoundOf, foldMaxError, updateChannel } from "./math.js";

const exact = (x: number): number => x;
const ELEMENTS = ["max", "sum", "acc"] as const;
export type StateElement = (typeof ELEMENTS)[number];

/** One element of a kernel row outside its bound. */
export interface RowViolation {
  kind: "bf16-vs-exact" | "bf16-vs-rounded";
  element: StateElement;
  channel: number;
  actual: number;
  expected: number;
  error: number;
  bound: number;
}

/** Largest error and largest error/bound ratio of each element kind, over the rows compared. */
export interface RowErrorStats {
  rows: number;
  maxError: Record<StateElement, number>;
  maxBound: Record<StateElement, number>;
  /** max of error / bound against the exact reference (<= 1 when every element is inside). */
  maxRatio: Record<StateElement, number>;
  /** max over elements of |kernel − rounded reference| in that element's bf16 ulps. */
  maxRoundedUlps: number;
  /** max |σ~ − σ| / σ and the largest relative bound e^(L + M) − 1 (sum is a count of tokens near the max). */
  maxRelSumError: number;
  maxRelSumBound: number;
}

export function emptyRowErrorStats(): RowErrorStats {
  return {
    rows: 0,
    maxError: { max: 0, sum: 0, acc: 0 },
    maxBound: { max: 0, sum: 0, acc: 0 },
    maxRatio: { max: 0, sum: 0, acc: 0 },
    maxRoundedUlps: 0,
    maxRelSumError: 0,
    maxRelSumBound: 0,
  };
}

/** |x − y| with NaN reported as +∞ (an unordered comparison is never inside a bound). */
function distance(x: number, y: number): number {
  if (x === y) return 0;
  const d = Math.abs(x - y);
  return Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
}

function bf16Ulp(x: number): number {
  const a = Math.abs(bf16RoundOf(x));
  if (a === 0 || !Number.isFinite(a)) return 2 ** -133;
  return 2 ** (Math.floor(Math.log2(a)) - 7);
}

export class ChunkReference {
  readonly headDim: number;
  /** In-chunk position of the next token. */
  pos = 0;
  /** bf16 stores of this chunk's row so far. */
  roundings = 0;
  private readonly tracked: boolean;
  // exact fold
  private readonly em: Float64Array;
  private readonly es: Float64Array;
  private readonly ea: Float64Array;
  // rounded reference: live (since the last store) and stored
  private readonly lm: Float64Array;
  private readonly ls: Float64Array;
  private readonly la: Float64Array;
  private readonly qm: Float64Array;
  private readonly qs: Float64Array;
  private readonly qa: Float64Array;
  // bound against exact: log weight, mean, max (live), max bound and exact max at the last store, max |s|
  private readonly bL: Float64Array;
  private readonly bE: Float64Array;
  private readonly bM: Float64Array;
  private readonly bMStored: Float64Array;
  private readonly emStored: Float64Array;
  private readonly sAbs: Float64Array;
  private readonly fresh: Uint8Array;
  // bound against rounded: stored element spreads and live log weight, mean and max windows
  private readonly dM: Float64Array;
  private readonly dS: Float64Array;
  private readonly dA: Float64Array;
  private readonly rL: Float64Array;
  private readonly rE: Float64Array;
  private readonly rM: Float64Array;
  private readonly tmp = new Float64Array(3);
  private readonly tmp2 = new Float64Array(3);

  /** `bf16`: also run the rounded reference and the bounds (an fp32 state only needs the exact fold). */
  constructor(headDim: number, bf16: boolean) {
    this.headDim = headDim;
    this.tracked = bf16;
    const n = () => new Float64Array(headDim);
    this.em = n();
    this.es = n();
    this.ea = n();
    const m = bf16 ? n : () => new Float64Array(0);
    this.lm = m();
    this.ls = m();
    this.la = m();
    this.qm = m();
    this.qs = m();
    this.qa = m();
    this.bL = m();
    this.bE = m();
    this.bM = m();
    this.bMStored = m();
    this.emStored = m();
    this.sAbs = m();
    this.fresh = new Uint8Array(bf16 ? headDim : 0);
    this.dM = m();
    this.dS = m();
    this.dA = m();
    this.rL = m();
    this.rE = m();
    this.rM = m();
  }

  /** The exact row `[max | sum | acc]` (a copy). */
  exactRow(): Float64Array {
    const h = this.headDim;
    const row = new Float64Array(3 * h);
    row.set(this.em, 0);
    row.set(this.es, h);
    row.set(this.ea, 2 * h);
    return row;
  }

  /**
   * Folds one committed token (`[kv | score]` and its ape row) at the next position; a token at position 0 starts
   * a new chunk. The row is not stored: call `store()` where the kernel stores it.
   */
  append(token: TokenInput): void {
    const pos = this.pos;
    const out = this.tmp;
    const h = this.headDim;
    for (let d = 0; d < h; d++) {
      const k = token.kvScore[d]!;
      const s = token.kvScore[h + d]! + token.ape[d]!;
      const m0 = this.em[d]!;
      const s0 = this.es[d]!;
      const a0 = this.ea[d]!;
      updateChannel(exact, m0, s0, a0, k, s, pos, out);
      this.em[d] = out[0]!;
      this.es[d] = out[1]!;
      this.ea[d] = out[2]!;
      if (this.tracked) this.trackStep(d, k, s, pos, m0, s0, a0);
    }
    if (pos === 0) this.roundings = 0;
    this.pos = (pos + 1) % CHUNK_TOKENS;
  }

  private trackStep(d: number, k: number, s: number, pos: number, m0: number, s0: number, a0: number): void {
    const es = f32ScoreError(s);
    if (pos === 0) {
      this.lm[d] = s;
      this.ls[d] = 1;
      this.la[d] = k;
      this.bL[d] = es;
      this.bE[d] = 0;
      this.bM[d] = es;
      this.fresh[d] = 1;
      this.sAbs[d] = Math.abs(s);
      this.rL[d] = es;
      this.rE[d] = 0;
      this.rM[d] = es;
      return;
    }
    const o = this.tmp2;
    // against exact: λ is the exact row's old weight fraction
    const lambda = (s0 * Math.exp(m0 - this.em[d]!)) / this.es[d]!;
    foldStepBound(this.bL[d]!, this.bE[d]!, lambda, a0, k, f32WeightError(s, m0, this.em[d]!), f32MeanError(a0, k), o);
    this.bL[d] = o[0]!;
    this.bE[d] = o[1]!;
    this.bM[d] = Math.max(this.bM[d]!, es);
    if (s + es > this.emStored[d]! - this.bMStored[d]!) this.fresh[d] = 1;
    this.sAbs[d] = Math.max(this.sAbs[d]!, Math.abs(s));
    // against rounded: the same step on the rounded reference's live row
    const qm0 = this.lm[d]!;
    const qs0 = this.ls[d]!;
    const qa0 = this.la[d]!;
    updateChannel(exact, qm0, qs0, qa0, k, s, pos, this.tmp);
    this.lm[d] = this.tmp[0]!;
    this.ls[d] = this.tmp[1]!;
    this.la[d] = this.tmp[2]!;
    const lq = (qs0 * Math.exp(qm0 - this.lm[d]!)) / this.ls[d]!;
    foldStepBound(this.rL[d]!, this.rE[d]!, lq, qa0, k, f32WeightError(s, qm0, this.lm[d]!), f32MeanError(qa0, k), o);
    this.rL[d] = o[0]!;
    this.rE[d] = o[1]!;
    this.rM[d] = Math.max(this.rM[d]!, es);
  }

  /** A kernel store of this row (bf16): rounds the rounded reference and adds one rounding to the bounds. */
  store(): void {
    this.roundings++;
    if (!this.tracked) return;
    const o = this.tmp2;
    for (let d = 0; d < this.headDim; d++) {
      const sErr = f32ScoreError(this.sAbs[d]!);
      storeBound(this.bL[d]!, this.bE[d]!, this.bM[d]!, this.em[d]!, this.ea[d]!, this.fresh[d] === 1, sErr, o);
      this.bL[d] = o[0]!;
      this.bE[d] = o[1]!;
      this.bM[d] = o[2]!;
      this.bMStored[d] = o[2]!;
      this.emStored[d] = this.em[d]!;
      this.fresh[d] = 0;
      const ws = this.ls[d]! * Math.expm1(this.rL[d]! + this.rM[d]!);
      const dm = roundedSpread(this.lm[d]!, this.rM[d]!);
      const ds = roundedSpread(this.ls[d]!, ws);
      const da = roundedSpread(this.la[d]!, this.rE[d]!);
      this.qm[d] = this.lm[d] = bf16RoundOf(this.lm[d]!);
      this.qs[d] = this.ls[d] = bf16RoundOf(this.ls[d]!);
      this.qa[d] = this.la[d] = bf16RoundOf(this.la[d]!);
      this.dM[d] = dm;
      this.dS[d] = ds;
      this.dA[d] = da;
      this.rL[d] = (ds < this.qs[d]! ? -Math.log1p(-ds / this.qs[d]!) : Number.POSITIVE_INFINITY) + dm;
      this.rE[d] = da;
      this.rM[d] = dm;
    }
  }

  /** The bound on the live mean (`acc`) per channel: what an entry emitted now would carry. */
  meanBound(): Float64Array {
    return Float64Array.from(this.bE);
  }

  /**
   * Compares a kernel row (bank 0 after the store) with both references; calls `onViolation` for each element
   * outside its bound and folds the errors into `stats` (and, when given, the max errors against the exact reference
   * into `exactErr`, as `compareRows` would). Returns the number of elements outside.
   */
  checkRow(
    actual: ArrayLike<number>,
    stats: RowErrorStats,
    onViolation: (v: RowViolation) => void,
    exactErr?: ErrorStats,
  ): number {
    const h = this.headDim;
    const eb = this.tmp;
    // per channel [max, sum, acc] of the exact reference, the rounded reference and its bound
    const ex = [0, 0, 0];
    const q = [0, 0, 0];
    const qb = [0, 0, 0];
    let bad = 0;
    stats.rows++;
    for (let d = 0; d < h; d++) {
      elementBounds(this.bL[d]!, this.bE[d]!, this.bM[d]!, this.es[d]!, eb);
      ex[0] = this.em[d]!;
      ex[1] = this.es[d]!;
      ex[2] = this.ea[d]!;
      q[0] = this.qm[d]!;
      q[1] = this.qs[d]!;
      q[2] = this.qa[d]!;
      qb[0] = this.dM[d]!;
      qb[1] = this.dS[d]!;
      qb[2] = this.dA[d]!;
      const relSum = distance(actual[h + d]!, ex[1]!) / ex[1]!;
      if (relSum > stats.maxRelSumError) stats.maxRelSumError = relSum;
      if (eb[1]! / ex[1]! > stats.maxRelSumBound) stats.maxRelSumBound = eb[1]! / ex[1]!;
      for (let e = 0; e < 3; e++) {
        const el = ELEMENTS[e]!;
        const x = actual[e * h + d]!;
        const err = distance(x, ex[e]!);
        if (exactErr && x !== ex[e]!) foldMaxError(exactErr, Math.abs(x - ex[e]!), ex[e]!, REL_FLOOR);
        const bound = eb[e]!;
        if (err > stats.maxError[el]) stats.maxError[el] = err;
        if (bound > stats.maxBound[el]) stats.maxBound[el] = bound;
        const ratio = err === 0 ? 0 : err / bound;
        if (ratio > stats.maxRatio[el]) stats.maxRatio[el] = ratio;
        if (!(err <= bound)) {
          bad++;
          onViolation({
            kind: "bf16-vs-exact",
            element: el,
            channel: d,
            actual: x,
            expected: ex[e]!,
            error: err,
            bound,
          });
        }
        const errQ = distance(x, q[e]!);
        const ulps = errQ / bf16Ulp(q[e]!);
        if (ulps > stats.maxRoundedUlps) stats.maxRoundedUlps = ulps;
        if (!(errQ <= qb[e]!)) {
          bad++;
          onViolation({
            kind: "bf16-vs-rounded",
            element: el,
            channel: d,
            actual: x,
            expected: q[e]!,
            error: errQ,
            bound: qb[e]!,
          });
        }
      }
    }
    return bad;
  }

  /**
   * The derived bound (per channel) of an entry the kernel emits when it closes this chunk by merging the stored row
   * with the fp32 statistics of `rest` (the chunk's remaining tokens): the exact bound folded on through those tokens
   * without a store (the merge is the sequential fold, docs/reference/online-mtp.md §5.2).
   */
  emittedBound(rest: readonly TokenInput[]): Float64Array {
    const copy = this.clone();
    for (const t of rest) copy.append(t);
    return copy.meanBound();
  }

  private arrays(): (Float64Array | Uint8Array)[] {
    const { em, es, ea, lm, ls, la, qm, qs, qa, bL, bE, bM, bMStored, emStored, sAbs, fresh } = this;
    const { dM, dS, dA, rL, rE, rM } = this;
    return [em, es, ea, lm, ls, la, qm, qs, qa, bL, bE, bM, bMStored, emStored, sAbs, fresh, dM, dS, dA, rL, rE, rM];
  }

  private clone(): ChunkReference {
    const c = new ChunkReference(this.headDim, this.tracked);
    c.pos = this.pos;
    c.roundings = this.roundings;
    const from = this.arrays();
    for (const [i, a] of c.arrays().entries()) a.set(from[i]!);
    return c;
  }
}
