export { type FieldChecks, type FieldErrorClass, fieldChecks, isRecord, typeOf } from "./checks.js";
export { type ErrorCodeInfo, type ErrorCode, ERROR_CODES, isErrorCode } from "./codes.js";
export { type ErrorData, type ErrorJson, Dsv4KvError, FieldError, ensure } from "./error.js";
export { type MessageData, MAX_VALUE_CHARS, formatMessage, formatValue, jsonSafeValue } from "./format.js";
export { type Suggestion, closestMatch } from "./suggest.js";
