// Test and bench helpers for this package and the packages above it; not for production code.
export { loadNativeUnchecked } from "./native.js";
export { requireBenchAddon, requireGpu, runMeta } from "./bench-run.js";
export { processBenchAddon } from "./bench-addon.js";
