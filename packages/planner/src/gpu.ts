// `@dsv4-kv/planner/gpu`: the planner on the GPU (the CUDA planner of @dsv4-kv/kernels-cuda), on its own subpath so
// the root entry never loads kernels-cuda (an optional peer dependency: install it to use this subpath). Same
// options, same tables and bytes, same PlannerError codes as the CPU planner.
export type { DeviceBuffer, GpuCallOptions, GpuContext } from "@dsv4-kv/kernels-cuda";
export {
  PLAN_STATUS_BYTES,
  PLAN_STATUS_RECORD_BYTES,
  type PlanStatus,
  decodePlanStatus,
} from "@dsv4-kv/kernels-cuda/internal";
export {
  maxGpuBatch,
  planDecodeGpu,
  planDecodeGpuAsync,
  planDecodeLegacyGpu,
  planPrefillGpu,
  planPrefillGpuAsync,
  planPrefillLegacyGpu,
} from "./gpu/host-plan.js";
export {
  type DeviceDecodeBuffers,
  type DevicePrefillBuffers,
  type DevicePrefillConfig,
  enqueueDecodePlan,
  enqueuePrefillPlan,
  readPlanStatus,
} from "./gpu/device-plan.js";
export { plannerErrorOf, type StatusGeometry } from "./gpu/plan-status.js";
export { createGpuPlanEngine } from "./gpu/engine.js";
