// What other packages of this repository need from this one; not for users (no semver promise).
// The bench scripts time the kernels on the validated native calls of planner options.
export { decodeNativeJob, prefillNativeJob } from "./planner.js";
