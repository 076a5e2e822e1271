/**
 * The bf16 error bound of an online state row, derived from its roundings (docs/reference/online-mtp.md §5.4).
 *
 * Per channel a row `(m, σ, a)` stands for the total softmax weight T = σ·e^m and the weighted mean a. A kernel's row
 * differs from a reference row by three bounded quantities: ℓ = |ln(T̃ / T)| (log weight), |ã − a| (mean) and
 * |m̃ − m| (max). These functions propagate such bounds through one fp32 token step and one bf16 store
 * (docs/reference/online-mtp.md §5.1, §5.4); `elementBounds` turns them into bounds on the three stored elements.
 */
import { bf16RoundOf } from "./math.js";

/** bf16 unit roundoff: one round-to-nearest store moves a value by at most 2^-8 of its magnitude. */
export const BF16_UNIT_ROUNDOFF = 2 ** -8;
/** fp32 unit roundoff (one correctly rounded operation). */
export const F32_UNIT_ROUNDOFF = 2 ** -24;

const U = BF16_UNIT_ROUNDOFF;
const U32 = F32_UNIT_ROUNDOFF;
/** |ln(1 + δ)| for |δ| <= u: the log-weight error of one rounded σ. */
const LOG_U = -Math.log1p(-U);

/**
 * Log-weight error of one fp32 token step between two stores: the rounded s = score + ape, the two exponentials (CUDA
 * `__expf`: at most 2 + 1.173·|x| fp32 ulps, one ulp = 2^-23) and the multiply-add of σ. `mOld` is −∞ on a cleared
 * row (then α = 0 and only β counts).
 */
export function f32WeightError(s: number, mOld: number, mNew: number): number {
  const dOld = Number.isFinite(mOld) ? Math.abs(mOld - mNew) : 0;
  return 2 * U32 * (8 + 1.2 * (dOld + Math.abs(s - mNew))) + U32 * Math.abs(s);
}

/** Mean error of one fp32 token step: the products, the add and the division (or `__fdividef`), 12 fp32 roundings. */
export function f32MeanError(a: number, k: number): number {
  return 12 * U32 * Math.max(Math.abs(a), Math.abs(k));
}

/** Error of the rounded s = fl(score + ape) of a token whose exact s is `s`. */
export function f32ScoreError(s: number): number {
  return U32 * Math.abs(s);
}

/**
 * One token step of the fold (pos != 0) applied to a perturbed row. `lambda` is the reference's old weight fraction
 * T / (T + w) of the step, `refMean` its old mean, `k` the token's kv. With the kernel's relative weight error
 * bounded by `logW` (ℓ) and its mean error by `mean`:
 *   ℓ' <= λ·ℓ + ε_w,                            (adding exact weight w dilutes the relative error)
 *   |ã' − a'| <= min(1, λ·e^ℓ)·|ã − a| + λ(1 − λ)(e^(ℓ + ε_w) − 1)·|a − k| + ε_a
 * because ã' − a' = λ̃(ã − a) + (λ̃ − λ)(a − k) with λ̃ the kernel's fraction and |λ̃ − λ| <= λ(1 − λ)(e^ℓ − 1).
 * Returns [ℓ', mean'] in `out`.
 */
export function foldStepBound(
  logW: number,
  mean: number,
  lambda: number,
  refMean: number,
  k: number,
  epsW: number,
  epsA: number,
  out: Float64Array,
): void {
  const keep = Math.min(1, lambda * Math.exp(logW));
  out[1] = keep * mean + lambda * (1 - lambda) * Math.expm1(logW + epsW) * Math.abs(refMean - k) + epsA;
  out[0] = lambda * logW + epsW;
}

/**
 * One bf16 store of a row whose exact values are (m, σ, a), against the exact (unrounded) reference:
 *   ℓ += ln(1/(1 − u)) for σ, + u·(|m| + δ_m) when the max may have changed since the last store (a max that is
 *   already a stored bf16 value rounds to itself), since T̃ = σ̃·e^m̃ moves by e^(m̃ − m);
 *   |ã − a| += u·(|a| + |ã − a|);
 *   |m̃ − m| = u·(|m| + ε_s) + ε_s (the stored max is bf16(max_j fl(s_j)): rounding is monotone).
 * `maxPre` bounds |m_pre − m| of the kernel's max before the store, `sErr` the fp32 error of the s values.
 * Returns [ℓ, mean, max] in `out`.
 */
export function storeBound(
  logW: number,
  mean: number,
  maxPre: number,
  m: number,
  a: number,
  maxFresh: boolean,
  sErr: number,
  out: Float64Array,
): void {
  out[0] = logW + LOG_U + (maxFresh ? U * (Math.abs(m) + maxPre) : 0);
  out[1] = mean + U * (Math.abs(a) + mean);
  out[2] = U * (Math.abs(m) + sErr) + sErr;
}

/**
 * Bounds on the stored elements from the row bounds: |m̃ − m| <= M; |σ̃ − σ| <= σ·(e^(ℓ + M) − 1), because
 * ln(σ̃/σ) = ln(T̃/T) − (m̃ − m); |ã − a| <= E. Returns [max, sum, acc] in `out`.
 */
export function elementBounds(logW: number, mean: number, max: number, sigma: number, out: Float64Array): void {
  out[0] = max;
  out[1] = Math.abs(sigma) * Math.expm1(logW + max);
  out[2] = mean;
}

/**
 * How far apart the stored bf16 values of two rows can be when their unrounded values differ by at most `window`
 * around the reference's `x`: max(bf16(x + w) − bf16(x), bf16(x) − bf16(x − w)) (rounding is monotone). Zero when the
 * whole window rounds to bf16(x): the two stores are then bitwise equal.
 */
export function roundedSpread(x: number, window: number): number {
  if (!Number.isFinite(window)) return Number.POSITIVE_INFINITY;
  const r = bf16RoundOf(x);
  return Math.max(bf16RoundOf(x + window) - r, r - bf16RoundOf(x - window));
}
