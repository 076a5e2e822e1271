/**
 * Reference math of online c128 compression (docs/reference/online-mtp.md §2, §4.1, §5.1, §5.2).
 *
 * A state row is `[max | sum | acc]`, each `H` long, per channel d:
 *   max[d] = running max of s_j[d] = score_j[d] + ape[pos_j][d] over the open chunk's tokens,
 *   sum[d] = Σ exp(s_j[d] − max[d]),
 *   acc[d] = Σ exp(s_j[d] − max[d]) · kv_j[d] / sum[d]   (the normalized weighted mean, not the numerator).
 *
 * Two precisions, one code path (every intermediate goes through a rounding function):
 *   - `"f32"`: float32 semantics (every intermediate rounded with Math.fround; exp evaluated in float64 then
 *     rounded, i.e. a correctly rounded expf), the same operation order as the CUDA kernels, so CPU and GPU
 *     results are comparable with a stated tolerance;
 *   - `"f64"`: a float64 oracle for tests (the rounding is the identity).
 * The exported helpers check their arguments; `updateChannel`, `bf16BitsOf`, `bf16ValueOf` and `bf16RoundOf` are the
 * unchecked inner steps the CPU backend and the bf16 reference run per element after validating their inputs.
 */
import {
  check,
  checkArray,
  checkFinite,
  checkFiniteElements,
  checkInt,
  checkNumber,
  checkOneOf,
  checkSameLength,
} from "./check.js";
import { CHUNK_TOKENS } from "./constants.js";

const f = Math.fround;
const exact = (x: number): number => x;

export type Precision = "f32" | "f64";
const PRECISIONS: readonly Precision[] = ["f32", "f64"];

/** A dense input row `[kv(H) | score(H)]` and the ape row of its in-chunk position. */
export interface TokenInput {
  kvScore: ArrayLike<number>;
  ape: ArrayLike<number>;
}

/** The cleared row (max = −∞, sum = 0, acc = 0): an identity of the update rule (docs/reference/online-mtp.md §4.2). */
export function clearedRow(headDim: number): Float64Array {
  checkHeadDim(headDim);
  const row = new Float64Array(3 * headDim);
  row.fill(Number.NEGATIVE_INFINITY, 0, headDim);
  return row;
}

/**
 * docs/reference/online-mtp.md §5.1 single-token update of one channel; `r` rounds every intermediate (`Math.fround`
 * for float32 semantics, the identity for the float64 oracle), so both precisions run the same operations in the same
 * order. Returns the new (m, σ, a) through `out`. `pos` is the token's position in its chunk; `pos == 0` re-initializes
 * and ignores the old state. Unchecked: the CPU backend calls it per channel after validating the launch.
 */
export function updateChannel(
  r: (x: number) => number,
  m: number,
  sigma: number,
  a: number,
  k: number,
  s: number,
  pos: number,
  out: Float64Array,
): void {
  if (pos === 0) {
    out[0] = r(s);
    out[1] = 1;
    out[2] = r(k);
    return;
  }
  const m2 = Math.max(m, s);
  const alpha = r(sigma * r(Math.exp(r(m - m2))));
  const beta = r(Math.exp(r(s - m2)));
  const sigma2 = r(alpha + beta);
  out[0] = m2;
  out[1] = sigma2;
  out[2] = r(r(r(a * alpha) + r(k * beta)) / sigma2);
}

/**
 * Applies docs/reference/online-mtp.md §5.1 to a whole row in place (`row` is `[max|sum|acc]`), token at in-chunk
 * position `pos`. `precision` picks float32 semantics or the float64 oracle. Returns `row` (its `acc` is the emitted
 * entry when `pos == 127`).
 */
export function updateRow<T extends Float32Array | Float64Array>(
  row: T,
  token: TokenInput,
  pos: number,
  precision: Precision,
): T {
  check(
    (row instanceof Float32Array || row instanceof Float64Array) && row.length > 0 && row.length % 3 === 0,
    "SHAPE",
    "row",
    row,
    "must be a Float32Array or Float64Array of 3·headDim elements ([max | sum | acc])",
  );
  const h = row.length / 3;
  checkToken(token, h, "token");
  checkPos(pos, "pos");
  checkOneOf(precision, PRECISIONS, "INVALID_ARGUMENT", "precision");
  updateRowUnchecked(row, token, pos, precision === "f32" ? f : exact);
  return row;
}

function updateRowUnchecked(
  row: Float32Array | Float64Array,
  token: TokenInput,
  pos: number,
  r: (x: number) => number,
) {
  const h = row.length / 3;
  const tmp = new Float64Array(3);
  for (let d = 0; d < h; d++) {
    const s = r(token.kvScore[h + d]! + token.ape[d]!);
    updateChannel(r, row[d]!, row[h + d]!, row[2 * h + d]!, token.kvScore[d]!, s, pos, tmp);
    row[d] = tmp[0]!;
    row[h + d] = tmp[1]!;
    row[2 * h + d] = tmp[2]!;
  }
}

/**
 * Folds tokens at consecutive in-chunk positions `firstPos, firstPos+1, …` (all inside one chunk) onto `start`
 * (or onto re-init when `firstPos == 0`). Returns a new row.
 */
export function foldRow(
  start: Float64Array | Float32Array | null,
  tokens: readonly TokenInput[],
  firstPos: number,
  precision: Precision,
  headDim: number,
): Float64Array {
  checkHeadDim(headDim);
  if (start !== null) checkRow(start, headDim, "start");
  checkTokens(tokens, headDim, 0);
  checkPos(firstPos, "firstPos");
  check(
    firstPos + tokens.length <= CHUNK_TOKENS,
    "INVALID_ARGUMENT",
    "tokens.length",
    tokens.length,
    `must fit in the chunk: firstPos + tokens.length <= ${CHUNK_TOKENS} (firstPos = ${firstPos})`,
  );
  checkOneOf(precision, PRECISIONS, "INVALID_ARGUMENT", "precision");
  const r = precision === "f32" ? f : exact;
  const row = start ? Float64Array.from(start) : clearedRow(headDim);
  for (let i = 0; i < tokens.length; i++) updateRowUnchecked(row, tokens[i]!, firstPos + i, r);
  return row;
}

/**
 * Segment softmax statistics of docs/reference/online-mtp.md §5.2 step 1 (tokens of one chunk), float32 semantics when
 * `precision == "f32"`: m2 = max s_j, σ2 = Σ exp(s_j − m2), a2 = Σ exp(s_j − m2)·k_j / σ2 (sums in token order).
 */
export function segmentStats(tokens: readonly TokenInput[], precision: Precision, headDim: number): Float64Array {
  checkHeadDim(headDim);
  checkTokens(tokens, headDim, 1);
  checkOneOf(precision, PRECISIONS, "INVALID_ARGUMENT", "precision");
  const r = precision === "f32" ? f : exact;
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

/**
 * docs/reference/online-mtp.md §5.2 step 2: merges a stored partial row `a` (earlier tokens) with segment stats `b`
 * (later tokens).
 */
export function mergeRows(a: ArrayLike<number>, b: ArrayLike<number>, precision: Precision): Float64Array {
  checkArrayLike(a, "a");
  const h = a.length / 3;
  checkHeadDim(h, "a.length / 3");
  checkRow(b, h, "b");
  checkOneOf(precision, PRECISIONS, "INVALID_ARGUMENT", "precision");
  const r = precision === "f32" ? f : exact;
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
 * Offline softmax pooling (docs/reference/online-mtp.md §2), float64: out[d] = Σ_j softmax_j(score_j[d] + ape_j[d]) ·
 * kv_j[d] over the given tokens (a full chunk gives the compressed entry; a prefix gives the open chunk's weighted
 * mean). Also returns the max and sum so a state row can be compared as a whole.
 */
export function offlinePool(tokens: readonly TokenInput[], headDim: number): Float64Array {
  return segmentStats(tokens, "f64", headDim);
}

/** Chunk position of the token at global position `p`. */
export function chunkPos(p: number): number {
  checkInt(p, 0, Number.MAX_SAFE_INTEGER, "INVALID_ARGUMENT", "p", "must be a non-negative integer position");
  return p % CHUNK_TOKENS;
}

// ---- bf16 -------------------------------------------------------------------------------------------------

const bfScratch = new Float32Array(1);
const bfBits = new Uint32Array(bfScratch.buffer);

/** float → bf16 bits, round to nearest even (NaN stays NaN, ±∞ stays ±∞). */
export function toBf16Bits(x: number): number {
  checkNumber(x, "x");
  return bf16BitsOf(x);
}

/** bf16 bits (an integer in [0, 0xffff]) → number (exact). */
export function fromBf16Bits(b: number): number {
  checkInt(b, 0, 0xffff, "INVALID_ARGUMENT", "b", "must be bf16 bits: an integer in [0, 0xffff]");
  return bf16ValueOf(b);
}

export function roundBf16(x: number): number {
  checkNumber(x, "x");
  return bf16RoundOf(x);
}

/** Unchecked `roundBf16`: the kernels' store (fp32 → bf16, round to nearest even; a float64 goes through fp32 first). */
export function bf16RoundOf(x: number): number {
  return bf16ValueOf(bf16BitsOf(x));
}

/** Unchecked `toBf16Bits`, for the CPU backend's stores. */
export function bf16BitsOf(x: number): number {
  bfScratch[0] = x;
  const u = bfBits[0]!;
  if ((u & 0x7fffffff) > 0x7f800000) return ((u >>> 16) | 0x40) & 0xffff;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Unchecked `fromBf16Bits` (`b` already 16 bits, as read from a Uint16Array), for the CPU backend's loads. */
export function bf16ValueOf(b: number): number {
  bfBits[0] = b << 16;
  return bfScratch[0]!;
}

// ---- comparison -------------------------------------------------------------------------------------------

export interface ErrorStats {
  maxAbsError: number;
  /** max |x − y| / |y| over elements with |y| ≥ relFloor (default 1e-2): small references make ratios meaningless. */
  maxRelError: number;
  /** elements that break |x − y| ≤ atol + rtol·|y| (allclose). */
  violations: number;
}

/** `compareRows`' default relFloor. */
export const REL_FLOOR = 1e-2;

export function compareRows(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: { atol: number; rtol: number },
  into?: ErrorStats,
  relFloor = REL_FLOOR,
): ErrorStats {
  checkArrayLike(actual, "actual");
  checkArrayLike(expected, "expected");
  checkSameLength(actual.length, expected.length, "actual.length", "expected.length");
  checkTolerance(tol, "tol");
  checkFinite(relFloor, "relFloor");
  return compareRowsOf(actual, expected, tol, into ?? { maxAbsError: 0, maxRelError: 0, violations: 0 }, relFloor);
}

/**
 * Unchecked `compareRows` (lengths already equal, tolerance already checked) that also reports each element outside
 * the tolerance, in index order, to `onViolation` (its |x − y|, NaN when unordered, and its bound).
 */
export function compareRowsOf(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: { atol: number; rtol: number },
  st: ErrorStats,
  relFloor = REL_FLOOR,
  onViolation?: (i: number, abs: number, bound: number) => void,
): ErrorStats {
  for (let i = 0; i < expected.length; i++) {
    const x = actual[i]!;
    const y = expected[i]!;
    if (x === y) continue; // covers ±∞ == ±∞
    const abs = Math.abs(x - y);
    const bound = tol.atol + tol.rtol * Math.abs(y);
    if (!(abs <= bound)) {
      st.violations++;
      onViolation?.(i, abs, bound);
    }
    foldMaxError(st, abs, y, relFloor);
  }
  return st;
}

/**
 * Folds one element's `abs` = |x − y| (x !== y) into the max errors of `st` (unchecked): an unordered pair (NaN) makes
 * the max abs error +∞ and leaves the max rel error; the rel error counts only when |y| >= relFloor.
 */
export function foldMaxError(st: ErrorStats, abs: number, y: number, relFloor: number): void {
  if (Number.isNaN(abs)) {
    st.maxAbsError = Number.POSITIVE_INFINITY;
    return;
  }
  if (abs > st.maxAbsError) st.maxAbsError = abs;
  if (Math.abs(y) >= relFloor) {
    const rel = abs / Math.abs(y);
    if (rel > st.maxRelError) st.maxRelError = rel;
  }
}

/** Stated tolerances (allclose form) of a state row against the float64 sequential reference. */
export const STATE_TOLERANCE: Record<"fp32" | "bf16", { atol: number; rtol: number }> = {
  // fp32: the bound of the invariants (docs/reference/online-mtp.md); measured errors are far below it (README).
  fp32: { atol: 2e-4, rtol: 2e-4 },
  // bf16: a row is re-rounded (half-ulp 2^-9 relative) at every commit and store, and a rounded max shifts
  // exp(m_old − m_new) in the next fold, so errors of σ and acc compound over a chunk of up to ~64 stores.
  bf16: { atol: 5e-2, rtol: 5e-2 },
};

// ---- argument checks ----------------------------------------------------------------------------------------

function checkHeadDim(headDim: number, field = "headDim"): void {
  checkInt(headDim, 1, 1 << 20, "SHAPE", field, "must be a positive integer head dim");
}

function checkPos(pos: number, field: string): void {
  checkInt(
    pos,
    0,
    CHUNK_TOKENS - 1,
    "INVALID_ARGUMENT",
    field,
    `must be an in-chunk position in [0, ${CHUNK_TOKENS - 1}]`,
  );
}

function checkArrayLike(v: unknown, field: string): asserts v is ArrayLike<number> {
  const ok = Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
  check(ok, "INVALID_TYPE", field, v, "must be an array or a typed array of numbers");
}

function checkRow(row: ArrayLike<number>, headDim: number, field: string): void {
  checkArrayLike(row, field);
  const n = 3 * headDim;
  check(row.length === n, "SHAPE", `${field}.length`, row.length, `must be 3·headDim = ${n} ([max | sum | acc])`);
}

function checkToken(t: TokenInput, headDim: number, field: string): void {
  check(typeof t === "object" && t !== null, "INVALID_TYPE", field, t, "must be an object { kvScore, ape }");
  checkArrayLike(t.kvScore, `${field}.kvScore`);
  checkArrayLike(t.ape, `${field}.ape`);
  const kvLen = t.kvScore.length;
  check(kvLen >= 2 * headDim, "SHAPE", `${field}.kvScore.length`, kvLen, `must be >= 2·headDim = ${2 * headDim}`);
  check(t.ape.length >= headDim, "SHAPE", `${field}.ape.length`, t.ape.length, `must be >= headDim = ${headDim}`);
  checkFiniteElements(t.kvScore, `${field}.kvScore`);
  checkFiniteElements(t.ape, `${field}.ape`);
}

function checkTokens(tokens: readonly TokenInput[], headDim: number, min: number): void {
  checkArray(tokens, "tokens");
  check(tokens.length >= min, "SHAPE", "tokens.length", tokens.length, `must be >= ${min}`);
  for (const [i, t] of tokens.entries()) checkToken(t, headDim, `tokens[${i}]`);
}

function checkTolerance(tol: { atol: number; rtol: number }, field: string): void {
  check(typeof tol === "object" && tol !== null, "INVALID_TYPE", field, tol, "must be an object { atol, rtol }");
  for (const key of ["atol", "rtol"] as const) {
    checkFinite(tol[key], `${field}.${key}`);
    check(tol[key] >= 0, "INVALID_ARGUMENT", `${field}.${key}`, tol[key], "must be >= 0");
  }
}
