// The driver: which addon loaded and whether the GPU path is usable, contexts and device buffers, and the errors.
// The typed native bindings are on ./internal, for the GPU backends of the packages above (the GPU planner is
// @dsv4-kv/planner/gpu, the ring compress kernels @dsv4-kv/compress/gpu, the online MTP kernels
// @dsv4-kv/online-mtp-controller/gpu).
export { ADDON_PATH_ENV, FORCE_CPU_ENV } from "./env.js";
export { KernelsCudaError, KernelsCudaUnavailableError } from "./errors.js";
export {
  type ProbeResult,
  type NoGpuCause,
  type LoadedAddon,
  type RejectedAddon,
  type AddonSource,
  type AddonRejection,
  type PrebuiltBinaryInfo,
  probe,
  addonPath,
} from "./native.js";
export {
  type GpuContext,
  type GpuCallOptions,
  type DeviceBuffer,
  getDefaultContext,
  createContext,
  contextOf,
  createDeviceBuffer,
} from "./context.js";
export { probeOnlineMtp } from "./online-mtp.js";
export { probeCompress } from "./compress.js";
