/**
 * Shared test helpers: the GPU fixture, hex of plan bytes, the code a call throws, seeded randoms and bf16
 * rounding.
 */
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";

export { codeOf, hex, withForcedCpu } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { getDefaultContext, probe } from "../src/index.js";

export const gpuTest = createGpuTest(probe, () => getDefaultContext());
/** A seeded linear congruential generator: the same draws on every run. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  /** Uniform in [0, 1). */
  u(): number {
    this.s = (Math.imul(this.s, 1664525) + 1013904223) >>> 0;
    return this.s / 4294967296;
  }
  /** Standard normal. */
  n(): number {
    return Math.sqrt(-2 * Math.log(this.u() + 1e-12)) * Math.cos(2 * Math.PI * this.u());
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.u() * (hi - lo + 1));
  }
}

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
