/**
 * Argument checks of this package: each throws a `CompressError` naming the field, the value given and the rule;
 * nothing is coerced (a string is never a number or a boolean).
 */
import { type FieldChecks, fieldChecks, typeOf } from "@dsv4-kv/errors/internal";
import { CompressError } from "./errors.js";

// One const per check: an assertion function must be declared with an explicit type (TS2775).
const checks: FieldChecks = fieldChecks(CompressError);
/** Throws `CompressError(code, field, value, rule, params)` unless `ok`. */
export const check: FieldChecks["check"] = checks.check;
export const checkNumber: FieldChecks["checkNumber"] = checks.checkNumber;
export const checkBoolean: FieldChecks["checkBoolean"] = checks.checkBoolean;
/** A plain record: null, arrays and typed arrays are refused. */
export const checkObject: FieldChecks["checkObject"] = checks.checkObject;
/** Refuses keys of `obj` outside `known`, suggesting the closest known key. */
export const checkKeys: FieldChecks["checkKeys"] = checks.checkKeys;
export const checkMethods: FieldChecks["checkMethods"] = checks.checkMethods;
/** An integer in [lo, hi] (out of range: `code`, INVALID_ARGUMENT unless given; a non-number: INVALID_TYPE). */
export const checkInt: FieldChecks["checkInt"] = checks.checkInt;
/** One of `known` (compared exactly), suggesting the closest for a misspelt string. */
export const checkOneOf: FieldChecks["checkOneOf"] = checks.checkOneOf;

/** A finite number >= 0. */
export function checkNonNegative(value: unknown, field: string): asserts value is number {
  checkNumber(value, field);
  check(Number.isFinite(value) && value >= 0, "INVALID_ARGUMENT", field, value, "must be a finite number >= 0");
}

/** A Float32Array (other arrays are refused, never converted). */
export function checkFloat32Array(value: unknown, field: string): asserts value is Float32Array {
  check(value instanceof Float32Array, "INVALID_TYPE", field, value, `must be a Float32Array (got ${typeOf(value)})`);
}

/** Every element finite; names the first that is not (`field[i]`). */
export function checkFiniteElements(values: ArrayLike<number>, field: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) throw new CompressError("INVALID_ARGUMENT", `${field}[${i}]`, v, "must be finite");
  }
}
