// A vitest fixture for tests that need a CUDA device. Without one the test is skipped with the reason the
// probe gives (visible in the verbose reporter), never silently and never as a failure.
import { test as base } from "vitest";

/**
 * @template T
 * @param {() => { ok: boolean, reason: string }} probe
 * @param {() => T} acquire  called only when the probe says ok
 */
export function createGpuTest(probe, acquire) {
  return base.extend({
    gpu: async ({ skip }, use) => {
      const status = probe();
      if (!status.ok) {
        skip(`GPU unavailable: ${status.reason}`);
        return;
      }
      await use(acquire());
    },
  });
}

// Helpers the GPU-backend tests of several packages share (kernels-cuda's driver, the planner's /gpu).

/** @param {Uint8Array} b @returns {string} the bytes as hex */
export const hex = (b) => Buffer.from(b).toString("hex");

/** The `code` of what `fn` throws, or "no error". @param {() => unknown} fn @returns {string} */
export function codeOf(fn) {
  try {
    fn();
    return "no error";
  } catch (e) {
    return String(/** @type {{ code?: string }} */ (e).code);
  }
}

/**
 * Runs `fn` with DSV4KV_FORCE_CPU=1, restoring the variable afterwards.
 * @template T @param {() => T | Promise<T>} fn @returns {Promise<T>}
 */
export async function withForcedCpu(fn) {
  const old = process.env.DSV4KV_FORCE_CPU;
  process.env.DSV4KV_FORCE_CPU = "1";
  try {
    return await fn();
  } finally {
    if (old === undefined) delete process.env.DSV4KV_FORCE_CPU;
    else process.env.DSV4KV_FORCE_CPU = old;
  }
}
