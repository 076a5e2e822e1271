// What other packages of this repository need from this one; not for users (no semver promise).
// The bench scripts time the kernels on the validated native calls of planner options.
export { decodeNativeJob, prefillNativeJob } from "./planner.js";
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
