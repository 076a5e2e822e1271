/**
 * The planner's error: a `Dsv4KvError` (from @dsv4-kv/errors) with the planner's codes. `field` names the
 * offending input (with an index where it is an array element), `value` is what was given, `rule` is the
 * precondition it broke, in words a user can act on. `code` is stable and machine-readable (docs/errors.md).
 */
import { Dsv4KvError, type ErrorCode } from "@dsv4-kv/errors";

export type PlannerErrorCode = ErrorCode;

export class PlannerError extends Dsv4KvError {
  static override readonly kind = "PlannerError";

  constructor(
    code: PlannerErrorCode,
    field: string,
    value: unknown,
    rule: string,
    params?: Readonly<Record<string, unknown>>,
  ) {
    super(params === undefined ? { code, field, value, rule } : { code, field, value, rule, params });
  }
}
