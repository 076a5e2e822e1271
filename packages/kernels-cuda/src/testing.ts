// Test helpers for this package and the packages above it; not for production code.
export { loadNativeUnchecked } from "./native.js";
