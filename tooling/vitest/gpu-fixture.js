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
