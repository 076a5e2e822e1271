/**
 * The controller's error: a `Dsv4KvError` (from @dsv4-kv/errors) with the controller's codes. `field` names the
 * offending input (with an index where it is an array element), `value` is what was given, `rule` is the
 * precondition it broke (docs/errors.md lists every code).
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import { FieldError } from "@dsv4-kv/errors/internal";

export type OnlineMtpErrorCode = ErrorCode;

export class OnlineMtpError extends FieldError {
  static override readonly kind = "OnlineMtpError";
}
