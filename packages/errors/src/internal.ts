// What the other packages of this repository share with this one. Released in step with them (one changesets
// fixed group, docs/decisions.md#d36-internal-subpaths-are-released-in-step); no promise to anyone else.
export { type FieldChecks, type FieldErrorClass, fieldChecks, isRecord, typeOf } from "./checks.js";
export { FieldError, ensure } from "./error.js";
export { MAX_VALUE_CHARS, formatValue, jsonSafeValue } from "./format.js";
export { type Suggestion, closestMatch } from "./suggest.js";
