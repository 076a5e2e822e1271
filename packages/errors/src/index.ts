export { type ErrorCodeInfo, type ErrorCode, ERROR_CODES, isErrorCode } from "./codes.js";
export {
  type ErrorData,
  type ErrorJson,
  Dsv4KvError,
} from "./error.js";
export {
  type MessageData,
  formatMessage,
} from "./format.js";
