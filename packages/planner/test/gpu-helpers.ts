/**
 * Helpers of the tests of the GPU backend (src/gpu.ts): the GPU fixture (a test skips with the probe's reason
 * without a usable GPU), hex of plan bytes, the code a call throws, a run under DSV4KV_FORCE_CPU.
 */
import { getDefaultContext, probe } from "@dsv4-kv/kernels-cuda";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";

export { codeOf, hex, withForcedCpu } from "@dsv4-kv/vitest-preset/gpu-fixture";

export const gpuTest = createGpuTest(probe, () => getDefaultContext());
