/** The field checks of the vLLM model, throwing ServerConfigError (nothing is coerced). */
import { type FieldChecks, fieldChecks } from "@dsv4-kv/errors/internal";
import { ServerConfigError } from "../errors.js";

// One const per check: an assertion function must be declared with an explicit type (TS2775).
const checks: FieldChecks = fieldChecks(ServerConfigError);
export const check: FieldChecks["check"] = checks.check;
export const checkNumber: FieldChecks["checkNumber"] = checks.checkNumber;
export const checkBoolean: FieldChecks["checkBoolean"] = checks.checkBoolean;
/** A plain record: null, arrays and typed arrays are refused. */
export const checkObject: FieldChecks["checkObject"] = checks.checkObject;
export const checkKeys: FieldChecks["checkKeys"] = checks.checkKeys;
export const checkInt: FieldChecks["checkInt"] = checks.checkInt;
export const checkOneOf: FieldChecks["checkOneOf"] = checks.checkOneOf;
