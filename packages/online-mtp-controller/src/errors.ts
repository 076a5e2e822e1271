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

/** Throws `OnlineMtpError(code, field, value, rule)` unless `ok`. */
export function check(ok: boolean, code: OnlineMtpErrorCode, field: string, value: unknown, rule: string): asserts ok {
  if (!ok) throw new OnlineMtpError(code, field, value, rule);
}

export function checkInt(
  value: number,
  lo: number,
  hi: number,
  code: OnlineMtpErrorCode,
  field: string,
  rule?: string,
): void {
  check(
    Number.isInteger(value) && value >= lo && value <= hi,
    code,
    field,
    value,
    rule ?? `must be an integer in [${lo}, ${hi}]`,
  );
}
