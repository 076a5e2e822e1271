/**
 * Shared test helpers: the GPU fixture, hex of plan bytes, the code a call throws, seeded randoms and bf16
 * rounding.
 */
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";

export { codeOf, hex, withForcedCpu } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { getDefaultContext, probe } from "../src/index.js";

export const gpuTest = createGpuTest(probe, () => getDefaultContext());
// The seeded random of the GPU tests, shared with the raw-binding tests of the packages above this one.
export { Rng } from "@dsv4-kv/vitest-preset/rng";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The bf16 bits of `x`, rounded to nearest even (NaN: the quiet NaN 0x7fc0). */
export function toBf16(x: number): number {
  f32[0] = x;
  const u = u32[0]!;
  if (Number.isNaN(x)) return 0x7fc0;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
/** The value of bf16 bits `b`. */
export function fromBf16(b: number): number {
  u32[0] = b << 16;
  return f32[0]!;
}
