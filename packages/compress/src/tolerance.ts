/**
 * Derived bounds on |entry − offlineCompress(window)| per channel (the README's "Tolerances" section has the
 * derivation in full). Notation: u = 2^-24 (fp32 unit roundoff), u_b = 2^-8 (bf16), W the window, K = max|kv| and
 * S = max(|score|, |score + ape|) over the window's elements, p_e the exact softmax weights, y = Σ p_e·kv_e.
 *
 * fp32 arithmetic (either backend against the float64 oracle of the same fp32 inputs), first order then a 2^-10
 * margin for the higher-order terms:
 *   - logits: s_e = fl(score + ape) is off by ≤ u·S, and exp adds a relative error g (CPU fround(Math.exp):
 *     0.5 ulp ≈ u; GPU expf: 2 ulp ≤ 4u): each weight is the exact one times λ_e ∈ [e^−a, e^a], a = u·S − ln(1 − g),
 *     up to a common factor (the error of m is common to every element and cancels in the ratio). Reweighting a mean
 *     of values in [−K, K] by such factors moves it by 2K·TV, and TV <= tanh(a/2) (reached by a two-point split);
 *   - t_e = fl(s_e − m) is off by β_e ≤ u·|t_e| ≤ 2u·S (one more such rounding per later argument step, e.g. a GPU's
 *     t·log2 e). Its reweighting adds at most Σ_e q_e·β_e to the TV (q the weights after the first step, up to
 *     e^{2β} factors), and since p_e <= e^{t_e} (the max element has e^0 = 1) and |t|·e^t <= 1/e, that is at most
 *     e^{2a}·u·n·(1/e + 4u·S); it is also at most tanh(u·S) (β in [−2u·S, 2u·S]), so the s − m roundings cost
 *     2K·min(tanh(u·S), e^{2a}·u·n·(1/e + 4u·S)): they matter only at elements of small weight;
 *   - sums: in any order each of the n <= W terms of Σw goes through <= n − 1 additions and each of Σw·kv through
 *     one product and <= n − 1 additions: K·(γ_n + γ_{n−1}) / (1 − γ_{n−1}), γ_k = k·u / (1 − k·u);
 *   - division: K·d (IEEE division on both: d = u);
 *   - underflow: the largest weight is exp(0) = 1, so a weight below 2^-126 (subnormal or flushed) moves the result
 *     by at most (2K + 1)·2^-126 per element.
 * bf16 ring elements (each kv and score read from the ring rounded to nearest even, relative error ≤ u_b): the kv
 * rounding moves the mean by ≤ u_b·K; a score moves its logit by δ_e ≤ u_b·|score_e| ≤ u_b·S, so the weights are
 * reweighted by e^δ_e: ≤ 2K·tanh(u_b·S / 2). The fp32 bound then applies to the rounded values, evaluated at
 * K(1 + u_b), S(1 + u_b). GPU vs CPU on the same state bits: the two fp32 bounds added (triangle inequality).
 */
import { windowSize } from "@dsv4-kv/planner";
import type { RingRatio } from "./backend.js";
import { checkBoolean, checkKeys, checkNonNegative, checkObject, checkOneOf } from "./check.js";
import { RING_RATIOS } from "./geometry.js";

const U = 2 ** -24;
const U_BF16 = 2 ** -8;
const MIN_NORMAL = 2 ** -126;
/** Higher-order terms of the first-order bounds, with room to spare (they are O(W·u) relative). */
const MARGIN = 1 + 2 ** -10;

/** What a backend's fp32 pooling may do, in the terms of the derivation. */
export interface ArithmeticModel {
  /** Roundings on the way to exp's argument: score + ape, s − m (and a GPU's t·log2 e). */
  readonly argRoundings: number;
  /** exp's relative error. */
  readonly expRelError: number;
  /** The final division's relative error. */
  readonly divRelError: number;
}

export const ARITHMETIC_MODELS: Readonly<Record<"cpu" | "gpu", ArithmeticModel>> = Object.freeze({
  /** pool.ts: fround(Math.exp) is within 0.5 ulp of exp (plus Math.exp's own double error, 2^-20 covers it). */
  cpu: Object.freeze({ argRoundings: 2, expRelError: U * (1 + 2 ** -20), divRelError: U }),
  /**
   * The CUDA kernels (native/compress/compress_device.cuh): s = score + ape and s − m in fp32, expf (within 2 ulp:
   * 4u relative), fmaf accumulation (its single rounding is inside the sums' term), IEEE division. A kernel built
   * with fast math (__expf, approximate division) needs another model.
   */
  gpu: Object.freeze({ argRoundings: 2, expRelError: 4 * U, divRelError: U }),
});

export interface EntryToleranceInput {
  compressRatio: RingRatio;
  /** An upper bound on |kv| of every window element. */
  maxAbsKv: number;
  /** An upper bound on |score| and on |score + ape| of every element (max|score| + max|ape| will do). */
  maxAbsScore: number;
  /** Whether window elements were read from a bf16 ring (the oracle given the unrounded fp32 values). */
  ringElementsBf16: boolean;
}

/** Absolute per-channel bounds; `cpu` / `gpu`: a backend's entry vs offlineCompress of the unrounded window. */
export interface EntryTolerance {
  /** fp32 arithmetic of the CPU reference (vs the oracle of the values it read). */
  readonly fp32Cpu: number;
  /** fp32 arithmetic of the GPU kernels. */
  readonly fp32Gpu: number;
  /** bf16 rounding of ring elements (0 for fp32 state). */
  readonly bf16: number;
  readonly cpu: number;
  readonly gpu: number;
  /** GPU entry vs CPU entry over the same state bits. */
  readonly gpuVsCpu: number;
}

const KEYS = ["compressRatio", "maxAbsKv", "maxAbsScore", "ringElementsBf16"] as const;

export function entryTolerance(input: EntryToleranceInput): EntryTolerance {
  checkObject(input, "input");
  checkKeys(input, KEYS, "input");
  checkOneOf(input.compressRatio, RING_RATIOS, "compressRatio");
  checkNonNegative(input.maxAbsKv, "maxAbsKv");
  checkNonNegative(input.maxAbsScore, "maxAbsScore");
  checkBoolean(input.ringElementsBf16, "ringElementsBf16");
  const w = windowSize(input.compressRatio);
  const bf = input.ringElementsBf16;
  const k = input.maxAbsKv * (bf ? 1 + U_BF16 : 1);
  const s = input.maxAbsScore * (bf ? 1 + U_BF16 : 1);
  const fp32Cpu = fp32Bound(ARITHMETIC_MODELS.cpu, w, k, s);
  const fp32Gpu = fp32Bound(ARITHMETIC_MODELS.gpu, w, k, s);
  const bf16 = bf ? bf16Bound(input.maxAbsKv, input.maxAbsScore) : 0;
  return { fp32Cpu, fp32Gpu, bf16, cpu: fp32Cpu + bf16, gpu: fp32Gpu + bf16, gpuVsCpu: fp32Cpu + fp32Gpu };
}

const gamma = (n: number): number => (n * U) / (1 - n * U);

/** The fp32 bound of one arithmetic model (module comment), for n = W terms. */
export function fp32Bound(model: ArithmeticModel, window: number, maxAbsKv: number, maxAbsScore: number): number {
  const k = maxAbsKv;
  const s = maxAbsScore * (1 + 4 * U);
  // Shift-free perturbations of each log-weight: fl(score + ape) and exp's own error.
  const a1 = U * s - Math.log1p(-model.expRelError);
  // The roundings after the max (s − m, …) scale with |t_e| = |s_e − m| <= 2S: their total variation is at most
  // tanh(bMax / 2), and, weighted by p_e <= e^{t_e}, at most about u·n/e (the max of |t|·e^t is 1/e).
  const later = model.argRoundings - 1;
  const bMax = later * U * 2 * s;
  const weighted = Math.exp(2 * bMax + 2 * a1) * later * U * window * (1 / Math.E + 4 * U * s);
  const tvLater = Math.min(Math.tanh(bMax / 2), weighted);
  const reweight = 2 * k * (Math.tanh(a1 / 2) + tvLater);
  const sums = (k * (gamma(window) + gamma(window - 1))) / (1 - gamma(window - 1));
  const division = k * (1 + 2 ** -10) * model.divRelError;
  const underflow = (2 * k + 1) * window * MIN_NORMAL;
  return (reweight + sums + division) * MARGIN + underflow;
}

/** The bf16 ring rounding term (module comment), plus bf16 subnormal rounding (2^-133 absolute). */
export function bf16Bound(maxAbsKv: number, maxAbsScore: number): number {
  const tiny = 2 ** -133;
  return (maxAbsKv * U_BF16 + 2 * maxAbsKv * Math.tanh((U_BF16 * maxAbsScore + tiny) / 2)) * MARGIN + tiny;
}
