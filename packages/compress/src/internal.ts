// What other packages of this repository need from this one; not for users (no semver promise).
export { type Layout, layoutOf } from "./geometry.js";
export {
  type CheckedPrefill,
  type CheckedDecode,
  type PlanViolation,
  checkPrefillShape,
  checkPrefillRows,
  checkDecodeShape,
  checkDecodeRows,
  compressRowRule,
  writeRowRule,
  decodeRowRule,
  decodeCompresses,
} from "./validate.js";
export { type ElementSpan, type WindowSpans, prefillSpans, decodeSpans } from "./window.js";
export { fp32Bound, bf16Bound } from "./tolerance.js";
