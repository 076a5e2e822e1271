/**
 * The GPU plan engine: the planner package's `PlanEngine` interface backed by the CUDA planner, so anything that
 * drives `@dsv4-kv/planner`'s `planCase` (e.g. `dsv4-kv plan --path gpu`) runs on the GPU with the same case
 * format, the same validation and the same bytes.
 */
import type { PlanEngine } from "@dsv4-kv/planner";
import { loadNative } from "./native.js";
import {
  planDecodeGpu,
  planDecodeLegacyGpu,
  planPrefillGpu,
  planPrefillLegacyGpu,
  type GpuCallOptions,
} from "./planner.js";

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
