/**
 * The controller's error: a `Dsv4KvError` (from @dsv4-kv/errors) with the controller's codes. `field` names the
 * offending input (with an index where it is an array element), `value` is what was given, `rule` is the
 * precondition it broke (docs/errors.md lists every code).
 */
import { type ErrorCode, FieldError } from "@dsv4-kv/errors";

export type OnlineMtpErrorCode = ErrorCode;

export class OnlineMtpError extends FieldError {
  static override readonly kind = "OnlineMtpError";
}
