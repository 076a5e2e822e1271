/**
 * The GPU plan engine: the `PlanEngine` interface backed by the CUDA planner, so anything that drives `planCase`
 * (e.g. `dsv4-kv plan --path gpu`) runs on the GPU with the same case format, the same validation and the same bytes.
 */
import type { GpuCallOptions } from "@dsv4-kv/kernels-cuda";
import { loadNative } from "@dsv4-kv/kernels-cuda/internal";
import type { PlanEngine } from "../cases.js";
import { planDecodeGpu, planDecodeLegacyGpu, planPrefillGpu, planPrefillLegacyGpu } from "./host-plan.js";

/** Throws `KernelsCudaUnavailableError` (code GPU_UNAVAILABLE, causes and fixes) when no GPU can be used. */
export function createGpuPlanEngine(opts?: GpuCallOptions): PlanEngine {
  loadNative();
  return {
    planPrefill: (o) => planPrefillGpu(o, opts),
    planDecode: (o) => planDecodeGpu(o, opts),
    planPrefillLegacy: (o) => planPrefillLegacyGpu(o, opts),
    planDecodeLegacy: (o) => planDecodeLegacyGpu(o, opts),
  };
}
