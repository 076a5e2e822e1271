/**
 * Reference math of online c128 compression (§1, §3.2, §4.1, §4.2).
 *
 * A state row is `[max | sum | acc]`, each `H` long, per channel d:
 *   max[d] = running max of s_j[d] = score_j[d] + ape[pos_j][d] over the open chunk's tokens,
 *   sum[d] = Σ exp(s_j[d] − max[d]),
 *   acc[d] = Σ exp(s_j[d] − max[d]) · kv_j[d] / sum[d]   (the normalized weighted mean, not the numerator).
 *
 * Two precisions:
 *   - `*F32`: float32 semantics (every intermediate rounded with Math.fround; exp evaluated in float64 then
 *     rounded, i.e. a correctly rounded expf), the same operation order as the CUDA kernels, so CPU and GPU
 *     results are comparable with a stated tolerance;
 *   - `*F64`: a float64 oracle for tests.
 */
import { CHUNK_TOKENS } from "./constants.js";

const f = Math.fround;

/** A dense input row `[kv(H) | score(H)]` and the ape row of its in-chunk position. */
export interface TokenInput {
  kvScore: ArrayLike<number>;
  ape: ArrayLike<number>;
}

/** The cleared row (max = −∞, sum = 0, acc = 0): an identity of the update rule (§3.2). */
export function clearedRow(headDim: number): Float64Array {
  const row = new Float64Array(3 * headDim);
  row.fill(Number.NEGATIVE_INFINITY, 0, headDim);
  return row;
}

/**
 * §4.1 single-token update of one channel in float32 semantics. Returns the new (m, σ, a) through `out`.
 * `pos` is the token's position in its chunk; `pos == 0` re-initializes and ignores the old state.
 */
export function updateChannelF32(
  m: number,
  sigma: number,
  a: number,
  k: number,
  s: number,
  pos: number,
  out: Float64Array,
): void {
  if (pos === 0) {
    out[0] = f(s);
    out[1] = 1;
    out[2] = f(k);
    return;
  }
  const m2 = Math.max(m, s);
  const alpha = f(sigma * f(Math.exp(f(m - m2))));
  const beta = f(Math.exp(f(s - m2)));
  const sigma2 = f(alpha + beta);
  out[0] = m2;
  out[1] = sigma2;
  out[2] = f(f(f(a * alpha) + f(k * beta)) / sigma2);
}

/** The same update in float64 (oracle). */
export function updateChannelF64(
  m: number,
  sigma: number,
  a: number,
  k: number,
  s: number,
  pos: number,
  out: Float64Array,
): void {
  if (pos === 0) {
    out[0] = s;
    out[1] = 1;
    out[2] = k;
    return;
  }
  const m2 = Math.max(m, s);
  const alpha = sigma * Math.exp(m - m2);
  const beta = Math.exp(s - m2);
  const sigma2 = alpha + beta;
  out[0] = m2;
  out[1] = sigma2;
  out[2] = (a * alpha + k * beta) / sigma2;
}

/**
 * Applies §4.1 to a whole row in place (`row` is `[max|sum|acc]`), token at in-chunk position `pos`.
 * `precision` picks float32 semantics or the float64 oracle. Returns `row` (its `acc` is the emitted entry when
 * `pos == 127`).
 */
export function updateRow<T extends Float32Array | Float64Array>(
  row: T,
  token: TokenInput,
  pos: number,
  precision: "f32" | "f64",
): T {
  const h = row.length / 3;
  const tmp = new Float64Array(3);
  const upd = precision === "f32" ? updateChannelF32 : updateChannelF64;
  for (let d = 0; d < h; d++) {
    const s = precision === "f32" ? f(token.kvScore[h + d]! + token.ape[d]!) : token.kvScore[h + d]! + token.ape[d]!;
    upd(row[d]!, row[h + d]!, row[2 * h + d]!, token.kvScore[d]!, s, pos, tmp);
    row[d] = tmp[0]!;
    row[h + d] = tmp[1]!;
    row[2 * h + d] = tmp[2]!;
  }
  return row;
}

/**
 * Folds tokens at consecutive in-chunk positions `firstPos, firstPos+1, …` (all inside one chunk) onto `start`
 * (or onto re-init when `firstPos == 0`). Returns a new row.
 */
export function foldRow(
  start: Float64Array | Float32Array | null,
  tokens: readonly TokenInput[],
  firstPos: number,
  precision: "f32" | "f64",
  headDim: number,
): Float64Array {
  const row = start ? Float64Array.from(start) : clearedRow(headDim);
  for (let i = 0; i < tokens.length; i++) updateRow(row, tokens[i]!, firstPos + i, precision);
  return row;
}

/**
 * Segment softmax statistics of §4.2 step 1 (tokens of one chunk), float32 semantics when `precision == "f32"`:
 * m2 = max s_j, σ2 = Σ exp(s_j − m2), a2 = Σ exp(s_j − m2)·k_j / σ2 (sums in token order).
 */
export function segmentStats(tokens: readonly TokenInput[], precision: "f32" | "f64", headDim: number): Float64Array {
  const r = precision === "f32" ? f : (x: number) => x;
  const row = new Float64Array(3 * headDim);
  for (let d = 0; d < headDim; d++) {
    let m = Number.NEGATIVE_INFINITY;
    for (const t of tokens) m = Math.max(m, r(t.kvScore[headDim + d]! + t.ape[d]!));
    let sum = 0;
    let num = 0;
    for (const t of tokens) {
      const e = r(Math.exp(r(r(t.kvScore[headDim + d]! + t.ape[d]!) - m)));
      sum = r(sum + e);
      num = r(num + r(e * t.kvScore[d]!));
    }
    row[d] = m;
    row[headDim + d] = sum;
    row[2 * headDim + d] = r(num / sum);
  }
  return row;
}

/** §4.2 step 2: merges a stored partial row `a` (earlier tokens) with segment stats `b` (later tokens). */
export function mergeRows(a: ArrayLike<number>, b: ArrayLike<number>, precision: "f32" | "f64"): Float64Array {
  const r = precision === "f32" ? f : (x: number) => x;
  const h = a.length / 3;
  const row = new Float64Array(3 * h);
  for (let d = 0; d < h; d++) {
    const m1 = a[d]!;
    const m2 = b[d]!;
    const m = Math.max(m1, m2);
    const w1 = r(a[h + d]! * r(Math.exp(r(m1 - m))));
    const w2 = r(b[h + d]! * r(Math.exp(r(m2 - m))));
    const s = r(w1 + w2);
    row[d] = m;
    row[h + d] = s;
    row[2 * h + d] = r(r(r(a[2 * h + d]! * w1) + r(b[2 * h + d]! * w2)) / s);
  }
  return row;
}

/**
 * Offline softmax pooling (§1), float64: out[d] = Σ_j softmax_j(score_j[d] + ape_j[d]) · kv_j[d] over the
 * given tokens (a full chunk gives the compressed entry; a prefix gives the open chunk's weighted mean).
 * Also returns the max and sum so a state row can be compared as a whole.
 */
export function offlinePool(tokens: readonly TokenInput[], headDim: number): Float64Array {
  return segmentStats(tokens, "f64", headDim);
}

/** Chunk position of the token at global position `p`. */
export function chunkPos(p: number): number {
  return p % CHUNK_TOKENS;
}

// ---- bf16 -------------------------------------------------------------------------------------------------

const bfScratch = new Float32Array(1);
const bfBits = new Uint32Array(bfScratch.buffer);

/** float → bf16 bits, round to nearest even (NaN stays NaN). */
export function toBf16Bits(x: number): number {
  bfScratch[0] = x;
  const u = bfBits[0]!;
  if ((u & 0x7fffffff) > 0x7f800000) return ((u >>> 16) | 0x40) & 0xffff;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/** bf16 bits → number (exact). */
export function fromBf16Bits(b: number): number {
  bfBits[0] = (b & 0xffff) << 16;
  return bfScratch[0]!;
}

export function roundBf16(x: number): number {
  return fromBf16Bits(toBf16Bits(x));
}

// ---- comparison -------------------------------------------------------------------------------------------

export interface ErrorStats {
  maxAbsError: number;
  /** max |x − y| / |y| over elements with |y| ≥ relFloor (default 1e-2) (small references would make the ratio meaningless). */
  maxRelError: number;
  /** elements that break |x − y| ≤ atol + rtol·|y| (allclose). */
  violations: number;
}

export function compareRows(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: { atol: number; rtol: number },
  into?: ErrorStats,
  relFloor = 1e-2,
): ErrorStats {
  const st = into ?? { maxAbsError: 0, maxRelError: 0, violations: 0 };
  for (let i = 0; i < expected.length; i++) {
    const x = actual[i]!;
    const y = expected[i]!;
    if (x === y) continue; // covers ±∞ == ±∞
    const abs = Math.abs(x - y);
    if (!(abs <= tol.atol + tol.rtol * Math.abs(y))) st.violations++;
    if (Number.isNaN(abs)) {
      st.maxAbsError = Number.POSITIVE_INFINITY;
      continue;
    }
    if (abs > st.maxAbsError) st.maxAbsError = abs;
    if (Math.abs(y) >= relFloor) {
      const rel = abs / Math.abs(y);
      if (rel > st.maxRelError) st.maxRelError = rel;
    }
  }
  return st;
}

/** Stated tolerances (allclose form) of a state row against the float64 sequential reference. */
export const STATE_TOLERANCE: Record<"fp32" | "bf16", { atol: number; rtol: number }> = {
  // fp32: the spec's 2e-4 (§ Invariants); measured max errors are ~1e-6 (see README).
  fp32: { atol: 2e-4, rtol: 2e-4 },
  // bf16: 8-bit mantissa, half-ulp 2^-9 ≈ 2e-3 relative per store. A row is re-rounded at every commit/store,
  // and a rounded max m (|m| up to ~6 → half-ulp 2^-6) shifts exp(m_old − m_new) in the next fold, so errors of
  // σ and acc compound over a chunk (up to ~64 stores). Measured worst cases: |Δσ| ≈ 0.5 at σ ≈ 60 (~1%), |Δacc|
  // ≈ 0.03. Stated bound: 5e-2 abs + 5e-2 rel (about 25 bf16 half-ulps).
  bf16: { atol: 5e-2, rtol: 5e-2 },
};
