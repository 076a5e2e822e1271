// Without a usable GPU (forced here through DSV4KV_FORCE_CPU) a synchronous GPU plan call throws the driver's one
// unavailable error, whose probe names the cause (moved from kernels-cuda's probe test: D47).
import { FORCE_CPU_ENV, KernelsCudaUnavailableError } from "@dsv4-kv/kernels-cuda";
import { expect, test } from "vitest";
import { planPrefillGpu } from "../src/gpu.js";
import { withForcedCpu } from "./gpu-helpers.js";

test(`${FORCE_CPU_ENV}=1: planPrefillGpu throws KernelsCudaUnavailableError (GPU_UNAVAILABLE, forced-cpu)`, async () => {
  await withForcedCpu(() => {
    let err: unknown;
    try {
      planPrefillGpu({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [6], extendLens: [6] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelsCudaUnavailableError);
    const e = err as KernelsCudaUnavailableError;
    expect(e.code).toBe("GPU_UNAVAILABLE");
    expect(e.probe.reason).toContain(FORCE_CPU_ENV);
    expect(e.params.noGpu).toBe("forced-cpu");
  });
});
