// The benches' GPU gate and run metadata, from the package's ./testing entry (src/bench-run.ts), where the benches of
// the packages above import them by name.
export { requireGpu, runMeta } from "../dist/testing.js";
