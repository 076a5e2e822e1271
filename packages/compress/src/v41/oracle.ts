/**
 * The float64 oracle of a DeepSeek-V4.1 entry and the derived bound on the CPU reference's decoded entry against it
 * (docs/reference/deepseek-v4.1.md §10.4). The oracle computes the real-number chain with no rounding: the pair's
 * softmax pooling (ratio 2), RMSNorm with the given weight and eps, RoPE with the given fp32 table row; it has no
 * bf16 casts and no quantisation. `v41EntryTolerance` bounds |decodeEntry(reference bytes)[i] − oracle.rotated[i]|
 * per element from the rounding steps of latent.ts, propagated in order.
 */
import { check, checkFloat32Array, checkInt } from "../check.js";
import { V41_LATENT_DIM, V41_ROPE_DIM, type V41EntryLayout } from "./layouts.js";
import { type LatentParams, checkLatentParams } from "./latent.js";

const D = V41_LATENT_DIM;
const NOPE = D - V41_ROPE_DIM;
const U = 2 ** -24;
const U_BF16 = 2 ** -8;
const U_E4M3 = 2 ** -4;
/** Second-order terms of the first-order bounds (all O(512·u) relative), with room to spare. */
const MARGIN = 1 + 2 ** -10;
/** Absolute floor: fp32 subnormal effects (a handful of 2^-126-sized roundings). */
const TINY = 2 ** -120;

export interface V41Oracle {
  /** Pooled latent (ratio 2), or the bf16 input (ratio 1). */
  pooled: Float64Array;
  /** Per channel, max |kv| of the pair (ratio 2; 0 for ratio 1: nothing is pooled). */
  pairMaxAbsKv: Float64Array;
  /** After RMSNorm and the weight. */
  normed: Float64Array;
  /** After RoPE: the entry the stored bytes approximate. */
  rotated: Float64Array;
  /** The RoPE table row used (64 values). */
  ropeRow: Float64Array;
  /** 1 / √(mean(pooled²) + eps). */
  normFactor: number;
}

function normAndRope(pooled: Float64Array, kvAbs: Float64Array, ropePos: number, p: LatentParams): V41Oracle {
  let sum = 0;
  for (let i = 0; i < D; i++) sum += pooled[i]! * pooled[i]!;
  const normFactor = 1 / Math.sqrt(sum / D + p.eps);
  const normed = new Float64Array(D);
  for (let i = 0; i < D; i++) normed[i] = pooled[i]! * normFactor * p.normWeight[i]!;
  const ropeRow = Float64Array.from(p.ropeTable.subarray(ropePos * V41_ROPE_DIM, (ropePos + 1) * V41_ROPE_DIM));
  const rotated = normed.slice();
  for (let i = NOPE; i < D; i += 2) {
    const cos = ropeRow[i - NOPE]!;
    const sin = ropeRow[i - NOPE + 1]!;
    rotated[i] = normed[i]! * cos - normed[i + 1]! * sin;
    rotated[i + 1] = normed[i]! * sin + normed[i + 1]! * cos;
  }
  return { pooled, pairMaxAbsKv: kvAbs, normed, rotated, ropeRow, normFactor };
}

/** The oracle of a ratio-1 entry (inputs as `compressRatio1`). */
export function oracleRatio1(kv: Float32Array, position: number, params: LatentParams): V41Oracle {
  const positions = checkLatentParams(params);
  checkFloat32Array(kv, "kv");
  check(kv.length === D, "BUFFER_SHAPE", "kv.length", kv.length, "must be 512");
  checkInt(position, 0, positions - 1, "position");
  return normAndRope(Float64Array.from(kv), new Float64Array(D), position, params);
}

/** The oracle of a ratio-2 entry (inputs as `compressRatio2`): softmax over the pair's two scores per channel. */
export function oracleRatio2(
  partner: Float32Array,
  own: Float32Array,
  position: number,
  params: LatentParams,
): V41Oracle {
  const positions = checkLatentParams(params);
  checkFloat32Array(partner, "partner");
  checkFloat32Array(own, "own");
  check(partner.length === 2 * D, "BUFFER_SHAPE", "partner.length", partner.length, "must be 1024");
  check(own.length === 2 * D, "BUFFER_SHAPE", "own.length", own.length, "must be 1024");
  checkInt(position, 1, positions, "position");
  check(position % 2 === 1, "INVALID_ARGUMENT", "position", position, "must be odd (it completes a pair)");
  const pooled = new Float64Array(D);
  const kvAbs = new Float64Array(D);
  for (let i = 0; i < D; i++) {
    const s0 = partner[D + i]!;
    const s1 = own[D + i]!;
    const m = Math.max(s0, s1);
    const w0 = Math.exp(s0 - m);
    const w1 = Math.exp(s1 - m);
    pooled[i] = (w0 * partner[i]! + w1 * own[i]!) / (w0 + w1);
    kvAbs[i] = Math.max(Math.abs(partner[i]!), Math.abs(own[i]!));
  }
  return normAndRope(pooled, kvAbs, position - 1, params);
}

/** Error of the CPU's pre-quantisation value (the rotated bf16 latent) against `o.rotated`, per element. */
function continuousBound(o: V41Oracle, normWeight: Float32Array): Float64Array {
  // 1. pooling (ratio 2): ≤ 7u·K (d's rounding through e ≤ 2.8u·K, the numerator 2u·K, 1 + e and the division
  //    u·K each), then the bf16 cast ≤ u_b·|value|.
  const ez = new Float64Array(D);
  let ez2 = 0;
  for (let i = 0; i < D; i++) {
    const pool = 7 * U * o.pairMaxAbsKv[i]!;
    ez[i] = pool > 0 ? pool + U_BF16 * (Math.abs(o.pooled[i]!) + pool) : 0;
    ez2 += ez[i]! ** 2;
  }
  // 2. the norm factor: the input errors move √(mean z² + eps) by ≤ ‖e_z‖/√512 (ρ relative); the fp32 statistic
  //    (512 products and sums: γ_513, + eps: u) halves under the square root, 1/√ adds ≤ 1.01u.
  const r = 1 / o.normFactor;
  const rho = Math.sqrt(ez2 / D) / r;
  check(rho < 0.5, "INVALID_ARGUMENT", "pooled", rho, "input errors too large for the norm bound (ρ must be < 1/2)");
  const g513 = (513 * U) / (1 - 513 * U);
  const nu = rho / (1 - rho) + (g513 + U) / 2 + 1.01 * U;
  const en = new Float64Array(D);
  for (let i = 0; i < D; i++) {
    const w = Math.abs(normWeight[i]!) * o.normFactor;
    const a = w * (ez[i]! + (Math.abs(o.pooled[i]!) + ez[i]!) * (nu + 2.01 * U)) * (1 + nu);
    en[i] = a + U_BF16 * (Math.abs(o.normed[i]!) + a);
  }
  // 3. RoPE on the tail: the inputs' errors through the rotation, two products and a sum (γ_2), then bf16.
  const ey = en.slice();
  for (let i = NOPE; i < D; i += 2) {
    const c = Math.abs(o.ropeRow[i - NOPE]!);
    const s = Math.abs(o.ropeRow[i - NOPE + 1]!);
    const xr = Math.abs(o.normed[i]!) + en[i]!;
    const xi = Math.abs(o.normed[i + 1]!) + en[i + 1]!;
    const g2 = (2 * U) / (1 - 2 * U);
    const re = c * en[i]! + s * en[i + 1]! + g2 * (c * xr + s * xi);
    const im = s * en[i]! + c * en[i + 1]! + g2 * (s * xr + c * xi);
    ey[i] = re + U_BF16 * (Math.abs(o.rotated[i]!) + re);
    ey[i + 1] = im + U_BF16 * (Math.abs(o.rotated[i + 1]!) + im);
  }
  return ey;
}

/** e4m3 rounding of raw in [2^-9, 448]: relative ≤ 2^-4 (normal), absolute ≤ 2^-10 (subnormal). */
const e4m3Hi = (raw: number): number => Math.min(448, Math.max(raw * (1 + U_E4M3), raw + 2 ** -10));
const e4m3Lo = (raw: number): number => Math.max(2 ** -9, Math.min(raw * (1 - U_E4M3), raw - 2 ** -10));

/**
 * The e2m1 rounding of 16-element blocks through their e4m3 scale (fake-quant or the v41-fp4 store), per element:
 * ≤ half the grid step at |x|/scale (0.25 below 2, 0.5 below 4, 1 up to the saturation at 6) times the scale, plus
 * the fp32 quotient's rounding. `mag` bounds |x| (the CPU value), `err` its error (for the block's amax range).
 */
function fp4Bound(mag: Float64Array, err: Float64Array): Float64Array {
  const out = new Float64Array(D);
  for (let b = 0; b < D; b += 16) {
    let hi = 0;
    let lo = 0;
    for (let i = b; i < b + 16; i++) {
      hi = Math.max(hi, mag[i]!);
      lo = Math.max(lo, mag[i]! - 2 * err[i]!);
    }
    check(hi / 6 < 448 * (1 - U_E4M3), "INVALID_ARGUMENT", "rotated", hi, "block amax past the fp4 scale range (2688)");
    const sHi = e4m3Hi(Math.max(2 ** -9, (hi * (1 + 2 * U)) / 6));
    const sLo = e4m3Lo(Math.max(2 ** -9, (lo * (1 - 2 * U)) / 6));
    for (let i = b; i < b + 16; i++) {
      const t = (mag[i]! * (1 + U)) / sLo;
      const half = t <= 2 ? 0.25 : t <= 4 ? 0.5 : 1;
      out[i] = half * sHi + U * mag[i]! * (1 + U);
    }
  }
  return out;
}

/**
 * The e4m3 store of tiles of `tile` values with power-of-two scales: v4 2^ceil(log2(max(1e-4, amax) / 448)) (the fp32
 * quotient: ·(1 + u)), v41 2^ceil(log2(max(amax / 448, 1e-4))) (exact). Normal e4m3 values round within 2^-4
 * relative, subnormal ones within 2^-10·scale; the clip at 448 costs at most 448·2u·scale.
 */
function fp8Bound(layout: "v4" | "v41", mag: Float64Array, tile: number, count: number, out: Float64Array): void {
  for (let t = 0; t < count; t += tile) {
    let amax = 0;
    for (let i = t; i < t + tile; i++) amax = Math.max(amax, mag[i]!);
    const quotient = layout === "v4" ? (Math.max(1e-4, amax) / 448) * (1 + 2 * U) : Math.max(amax / 448, 1e-4);
    const scale = 2 ** Math.ceil(Math.log2(quotient));
    for (let i = t; i < t + tile; i++) out[i] = Math.max(U_E4M3 * mag[i]!, 2 ** -10 * scale) + 448 * 2 * U * scale;
  }
}

/**
 * Per-element bound on |decoded reference entry − oracle.rotated| for `layout` (inputs: the oracle of the entry and
 * the norm weight it used). Derivation: docs/reference/deepseek-v4.1.md §10.4.
 */
export function v41EntryTolerance(layout: V41EntryLayout, o: V41Oracle, normWeight: Float32Array): Float64Array {
  const ey = continuousBound(o, normWeight);
  const mag = new Float64Array(D);
  for (let i = 0; i < D; i++) mag[i] = Math.abs(o.rotated[i]!) + ey[i]!;
  const fq = fp4Bound(mag, ey);
  const out = new Float64Array(D);
  if (layout === "v41-fp4") {
    for (let i = 0; i < D; i++) out[i] = (ey[i]! + fq[i]!) * MARGIN + TINY;
    return out;
  }
  const v = new Float64Array(D);
  for (let i = 0; i < D; i++) v[i] = mag[i]! + fq[i]!;
  const store = new Float64Array(D);
  if (layout === "v41") fp8Bound("v41", v, 32, D, store);
  else {
    fp8Bound("v4", v, 64, NOPE, store);
    for (let i = NOPE; i < D; i++) store[i] = U_BF16 * v[i]!;
  }
  for (let i = 0; i < D; i++) out[i] = (ey[i]! + fq[i]! + store[i]!) * MARGIN + TINY;
  return out;
}
