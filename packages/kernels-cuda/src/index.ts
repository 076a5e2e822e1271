export { ADDON_PATH_ENV, FORCE_CPU_ENV } from "./env.js";
export { KernelsCudaError, KernelsCudaUnavailableError } from "./errors.js";
export {
  type ProbeResult,
  type NativeAddon,
  type NoGpuCause,
  type LoadedAddon,
  type RejectedAddon,
  type AddonSource,
  type AddonRejection,
  type PrebuiltBinaryInfo,
  probe,
  addonPath,
  loadNative,
} from "./native.js";
export {
  type PlanStatus,
  PLAN_STATUS_BYTES,
  PLAN_STATUS_RECORD_BYTES,
  decodePlanStatus,
  plannerErrorOf,
  type StatusGeometry,
} from "./plan-status.js";
export {
  type GpuContext,
  type GpuCallOptions,
  type DeviceBuffer,
  type DevicePrefillConfig,
  type DevicePrefillBuffers,
  type DeviceDecodeBuffers,
  getDefaultContext,
  createContext,
  maxGpuBatch,
  planPrefillGpu,
  planPrefillGpuAsync,
  planPrefillLegacyGpu,
  planDecodeGpu,
  planDecodeGpuAsync,
  planDecodeLegacyGpu,
  createDeviceBuffer,
  enqueuePrefillPlan,
  enqueueDecodePlan,
  readPlanStatus,
} from "./planner.js";
export { createGpuPlanEngine } from "./gpu-engine.js";
export {
  ONLINE_MTP_STATE_TYPE,
  ONLINE_MTP_ERR,
  ONLINE_MTP_KERNEL,
  type OnlineMtpNative,
  probeOnlineMtp,
  onlineMtpNative,
} from "./online-mtp.js";
export {
  COMPRESS_STATE_TYPE,
  COMPRESS_ERR,
  COMPRESS_KERNEL,
  type CompressPrefillArgs,
  type CompressDecodeArgs,
  type CompressNative,
  probeCompress,
  compressNative,
} from "./compress.js";
