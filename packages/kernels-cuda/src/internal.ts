// What other packages of this repository need from this one; not for users (no semver promise): the loaded addon
// and its typed bindings, which the GPU backends above validate every call for before they reach them.
export { type NativeAddon, loadNative } from "./native.js";
export { hostOut } from "./host-out.js";
export type {
  DecodePlanConfig,
  DecodePlanInputs,
  Flag,
  PlanSlotConfig,
  PrefillPlanConfig,
  PrefillPlanInputs,
} from "./addon-types.js";
export { PLAN_ERR, type PlanErrName } from "./plan-err.js";
export { type PlanStatus, PLAN_STATUS_BYTES, PLAN_STATUS_RECORD_BYTES, decodePlanStatus } from "./plan-status.js";
export {
  ONLINE_MTP_STATE_TYPE,
  ONLINE_MTP_ERR,
  ONLINE_MTP_KERNEL,
  type OnlineMtpNative,
  onlineMtpNative,
} from "./online-mtp.js";
export {
  COMPRESS_STATE_TYPE,
  COMPRESS_ERR,
  COMPRESS_KERNEL,
  type CompressPrefillArgs,
  type CompressDecodeArgs,
  type CompressNative,
  compressNative,
} from "./compress.js";
// The kernel shapes `variant` selects (the benchmark-only ones need a DSV4KV_BENCH_VARIANTS build): bench and tests.
export { COMMIT_VARIANT, WRITE_PREFIX_VARIANT } from "./online-mtp.js";
// The bench build's addon (native/bench/): the bench scripts and the bench tests load it through useBenchAddon().
export {
  type BenchAddon,
  type BenchAddonSelection,
  type CompressBenchArgs,
  type CompressBenchOptions,
  type CompressBenchResult,
  type OnlineMtpBenchArgs,
  type OnlineMtpBenchResult,
  type PlanBenchOptions,
  type PlanBenchResult,
  BENCH_BUILD_COMMAND,
  BENCH_ENTRIES,
  benchBuildPath,
  benchEntriesOf,
  useBenchAddon,
} from "./bench-addon.js";
