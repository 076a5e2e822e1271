// `@dsv4-kv/planner/gpu/internal`: what the benches and tests of this repository need from the GPU planner; not for
// users (no semver promise). The bench times the kernels on the validated native calls of planner options.
export { decodeNativeJob, prefillNativeJob } from "./jobs.js";
export { PLAN_ERR_RULE_NAMES } from "./plan-status.js";
