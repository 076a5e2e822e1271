/**
 * The CPU reference of DeepSeek-V4.1's ratio-1 and ratio-2 compression (SGLang's c1.cuh / c2.cuh decode kernels and
 * the torch writer; docs/reference/deepseek-v4.1.md §10), fp32 arithmetic with every rounding the kernels make:
 * - ratio 2 pools a pair (the partner at pos − 1 and the row at the odd pos) per channel with the softmax of their two
 *   fp32 scores in closed form: d = fl(s₀ − s₁), e = fl(exp(−|d|)), weights (1, e) when d > 0 else (e, 1), entry =
 *   fl(fl(fl(kv₀·w₀) + fl(kv₁·w₁)) / fl(1 + e)); then rounds it to bf16 (`finish` casts before the norm);
 * - ratio 1 takes the bf16 `wkv` output as it is;
 * - RMSNorm over 512: the statistic over the bf16 values (sequential fp32 sum of fl(x·x)), nf = fl(1/√fl(fl(sum/512)
 *   + eps)), out = bf16(fl(fl(x·nf)·w)): the published pre-RoPE latent;
 * - RoPE on the last 64 (interleaved real, imaginary) at the entry's position (ratio 1: pos; ratio 2: pos − 1) with
 *   the fp32 table row, each result rounded to bf16;
 * - per layout: v41-fp4 stores that; v4 and v41 first fake-quantise every 16-element block to e2m1 with an e4m3 scale,
 *   then store (layouts.ts).
 */
import { check, checkFiniteElements, checkFloat32Array, checkInt, checkNumber, checkOneOf } from "../check.js";
import { V41_ENTRY_LAYOUTS, V41_LATENT_DIM, V41_ROPE_DIM, type V41EntryLayout, encodeEntry } from "./layouts.js";
import { bf16Round, fakeQuantFp4, fp4FakeQuantScale } from "./numerics.js";

const f = Math.fround;
const D = V41_LATENT_DIM;
const NOPE = D - V41_ROPE_DIM;

/** What every entry of one compressor needs besides its tokens. */
export interface LatentParams {
  /** The compressor's RMSNorm weight: 512 bf16 values (as fp32). */
  normWeight: Float32Array;
  /** The RMSNorm epsilon (an fp32 value). */
  eps: number;
  /** The RoPE table `freqs_cis`: [positions, 64] fp32, (cos, sin) interleaved per rotated pair. */
  ropeTable: Float32Array;
  layout: V41EntryLayout;
}

export interface CompressedLatent {
  /** The pre-RoPE bf16 latent (what the index-K branch reads). */
  preRope: Float32Array;
  /** The values the store quantises: fake-quantised (v4, v41) or the rotated bf16 latent (v41-fp4). */
  stored: Float32Array;
  /** The entry: its data row, then its scale row. */
  bytes: Uint8Array;
}

/** Checks the shared parameters; returns the number of table positions. */
export function checkLatentParams(p: LatentParams): number {
  checkFloat32Array(p.normWeight, "normWeight");
  check(p.normWeight.length === D, "BUFFER_SHAPE", "normWeight.length", p.normWeight.length, "must be 512");
  checkFiniteElements(p.normWeight, "normWeight");
  for (let i = 0; i < D; i++) {
    const w = p.normWeight[i]!;
    check(bf16Round(w) === w, "INVALID_ARGUMENT", `normWeight[${i}]`, w, "must be a bf16 value");
  }
  checkNumber(p.eps, "eps");
  check(p.eps > 0 && f(p.eps) === p.eps, "INVALID_ARGUMENT", "eps", p.eps, "must be an fp32 value > 0");
  checkFloat32Array(p.ropeTable, "ropeTable");
  const n = p.ropeTable.length;
  check(n > 0 && n % V41_ROPE_DIM === 0, "BUFFER_SHAPE", "ropeTable.length", n, "must be positions × 64, > 0");
  checkFiniteElements(p.ropeTable, "ropeTable");
  checkOneOf(p.layout, V41_ENTRY_LAYOUTS, "layout");
  return n / V41_ROPE_DIM;
}

/** RMSNorm, RoPE at `ropePos` and the layout's chain over bf16 values `x` (512; modified). */
function finishLatent(x: Float32Array, ropePos: number, p: LatentParams): CompressedLatent {
  let sum = 0;
  for (let i = 0; i < D; i++) sum = f(sum + f(x[i]! * x[i]!));
  const nf = f(1 / Math.sqrt(f(f(sum * f(1 / D)) + p.eps)));
  for (let i = 0; i < D; i++) x[i] = bf16Round(f(f(x[i]! * nf) * p.normWeight[i]!));
  const preRope = x.slice();
  const row = ropePos * V41_ROPE_DIM;
  for (let i = NOPE; i < D; i += 2) {
    const re = x[i]!;
    const im = x[i + 1]!;
    const cos = p.ropeTable[row + i - NOPE]!;
    const sin = p.ropeTable[row + i - NOPE + 1]!;
    x[i] = bf16Round(f(f(re * cos) - f(im * sin)));
    x[i + 1] = bf16Round(f(f(re * sin) + f(im * cos)));
  }
  if (p.layout !== "v41-fp4") {
    for (let b = 0; b < D; b += 16) {
      let amax = 0;
      for (let i = b; i < b + 16; i++) amax = Math.max(amax, Math.abs(x[i]!));
      const scale = fp4FakeQuantScale(amax);
      for (let i = b; i < b + 16; i++) x[i] = fakeQuantFp4(x[i]!, scale);
    }
  }
  return { preRope, stored: x, bytes: encodeEntry(p.layout, x) };
}

/** The ratio-1 entry of the token at `position` from its bf16 `wkv` output (512 bf16 values as fp32). */
export function compressRatio1(kv: Float32Array, position: number, params: LatentParams): CompressedLatent {
  const positions = checkLatentParams(params);
  checkFloat32Array(kv, "kv");
  check(kv.length === D, "BUFFER_SHAPE", "kv.length", kv.length, "must be 512");
  checkFiniteElements(kv, "kv");
  for (let i = 0; i < D; i++)
    check(bf16Round(kv[i]!) === kv[i]!, "INVALID_ARGUMENT", `kv[${i}]`, kv[i], "must be bf16");
  checkInt(position, 0, positions - 1, "position", `must be a row of ropeTable: [0, ${positions - 1}]`);
  return finishLatent(kv.slice(), position, params);
}

/**
 * The ratio-2 entry completed at the odd `position` from the pair's fp32 rows `| kv | score |` (1024 each): `partner`
 * is position − 1's, `own` position's. RoPE at position − 1.
 */
export function compressRatio2(
  partner: Float32Array,
  own: Float32Array,
  position: number,
  params: LatentParams,
): CompressedLatent {
  const positions = checkLatentParams(params);
  for (const [name, row] of [
    ["partner", partner],
    ["own", own],
  ] as const) {
    checkFloat32Array(row, name);
    check(row.length === 2 * D, "BUFFER_SHAPE", `${name}.length`, row.length, "must be 1024 (| kv | score |)");
    checkFiniteElements(row, name);
  }
  checkInt(position, 1, positions, "position", `must be an odd position whose pos − 1 is a row of ropeTable`);
  check(position % 2 === 1, "INVALID_ARGUMENT", "position", position, "must be odd (it completes a pair)");
  const x = new Float32Array(D);
  poolPairF32(partner, own, x);
  return finishLatent(x, position - 1, params);
}

/** The pair pooling (module comment), rounded to bf16, into `out` (unchecked). */
export function poolPairF32(partner: Float32Array, own: Float32Array, out: Float32Array): void {
  for (let i = 0; i < D; i++) {
    const delta = f(partner[D + i]! - own[D + i]!);
    const e = f(Math.exp(-Math.abs(delta)));
    const w0 = delta > 0 ? 1 : e;
    const w1 = delta > 0 ? e : 1;
    out[i] = bf16Round(f(f(f(partner[i]! * w0) + f(own[i]! * w1)) / f(1 + e)));
  }
}
