/**
 * The planner's error: a `Dsv4KvError` (from @dsv4-kv/errors) with the planner's codes. `field` names the
 * offending input (with an index where it is an array element), `value` is what was given, `rule` is the
 * precondition it broke, in words a user can act on. `code` is stable and machine-readable (docs/errors.md).
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import { FieldError } from "@dsv4-kv/errors/internal";

export type PlannerErrorCode = ErrorCode;

export class PlannerError extends FieldError {
  static override readonly kind = "PlannerError";
}
