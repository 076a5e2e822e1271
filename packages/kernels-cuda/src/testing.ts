// Test and bench helpers for this package and the packages above it; not for production code.
export { loadNativeUnchecked } from "./native.js";
export { requireGpu, runMeta } from "./bench-run.js";
