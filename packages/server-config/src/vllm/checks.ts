/** The field checks of the vLLM model, throwing ServerConfigError (nothing is coerced). */
import { type FieldChecks, fieldChecks, typeOf } from "@dsv4-kv/errors/internal";
import { ServerConfigError } from "../errors.js";

// One const per check: an assertion function must be declared with an explicit type (TS2775).
const checks: FieldChecks = fieldChecks(ServerConfigError);
export const check: FieldChecks["check"] = checks.check;
export const checkNumber: FieldChecks["checkNumber"] = checks.checkNumber;
export const checkBoolean: FieldChecks["checkBoolean"] = checks.checkBoolean;
export const checkKeys: FieldChecks["checkKeys"] = checks.checkKeys;
export const checkInt: FieldChecks["checkInt"] = checks.checkInt;
export const checkOneOf: FieldChecks["checkOneOf"] = checks.checkOneOf;

export function checkObject(value: unknown, field: string): asserts value is Record<string, unknown> {
  const ok = typeof value === "object" && value !== null && !Array.isArray(value);
  check(ok, "INVALID_TYPE", field, value, `must be an object (got ${typeOf(value)})`);
}
