/** Shared test helpers: the GPU fixture, hex of plan bytes, and the code a call throws. */
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { getDefaultContext, probe } from "../src/index.js";

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
