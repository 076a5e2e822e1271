/**
 * Helpers of the tests of the GPU backend (src/gpu.ts): the GPU fixture (a test skips with the probe's reason
 * without a usable GPU), hex of plan bytes, the code a call throws, a run under DSV4KV_FORCE_CPU.
 */
import { getDefaultContext, probe } from "@dsv4-kv/kernels-cuda";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";

export const gpuTest = createGpuTest(probe, () => getDefaultContext());
export const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

/** The `code` of what `fn` throws, or "no error". */
export function codeOf(fn: () => unknown): string {
  try {
    fn();
    return "no error";
  } catch (e) {
    return String((e as { code?: string }).code);
  }
}

/** Runs `fn` with DSV4KV_FORCE_CPU=1, restoring the variable afterwards. */
export async function withForcedCpu<T>(fn: () => T | Promise<T>): Promise<T> {
  const old = process.env.DSV4KV_FORCE_CPU;
  process.env.DSV4KV_FORCE_CPU = "1";
  try {
    return await fn();
  } finally {
    if (old === undefined) delete process.env.DSV4KV_FORCE_CPU;
    else process.env.DSV4KV_FORCE_CPU = old;
  }
}
