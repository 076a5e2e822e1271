/**
 * Argument checks shared by the controller, both backends and the exported helpers. Each throws an
 * `OnlineMtpError` naming the field, the value given and the rule; nothing is coerced (a string is never a number
 * or a boolean).
 */
import { type FieldChecks, fieldChecks, typeOf } from "@dsv4-kv/errors/internal";
import { OnlineMtpError, type OnlineMtpErrorCode } from "./errors.js";

export const I32_MAX = 0x7fffffff;
export const I32_MIN = -0x80000000;

// One const per check: an assertion function must be declared with an explicit type (TS2775).
const checks: FieldChecks = fieldChecks(OnlineMtpError);
/** Throws `OnlineMtpError(code, field, value, rule, params)` unless `ok`. */
export const check: FieldChecks["check"] = checks.check;
export const checkNumber: FieldChecks["checkNumber"] = checks.checkNumber;
export const checkBoolean: FieldChecks["checkBoolean"] = checks.checkBoolean;
/** A plain record: null, arrays and typed arrays are refused. */
export const checkObject: FieldChecks["checkObject"] = checks.checkObject;
/** Refuses keys of `obj` outside `known`, suggesting the closest known key. */
export const checkKeys: FieldChecks["checkKeys"] = checks.checkKeys;
export const checkMethods: FieldChecks["checkMethods"] = checks.checkMethods;

/** An integer in [lo, hi]; `code` is the refusal's code for a number out of range (a non-number is INVALID_TYPE). */
export function checkInt(
  value: unknown,
  lo: number,
  hi: number,
  code: OnlineMtpErrorCode,
  field: string,
  rule?: string,
): asserts value is number {
  checks.checkInt(value, lo, hi, field, rule, code);
}

export function checkFinite(value: unknown, field: string): asserts value is number {
  checkNumber(value, field);
  check(Number.isFinite(value), "INVALID_ARGUMENT", field, value, "must be a finite number");
}

export function checkArray(value: unknown, field: string): asserts value is readonly unknown[] {
  check(Array.isArray(value), "INVALID_TYPE", field, value, `must be an array (got ${typeOf(value)})`);
}

/** `length` (of `field`) equals `expected`, the length of `expectedField`. */
export function checkSameLength(length: number, expected: number, field: string, expectedField: string): void {
  check(length === expected, "SHAPE", field, length, `must equal ${expectedField} = ${expected}`);
}

/** One of `known` (compared exactly), refused with `code`, suggesting the closest for a misspelt string. */
export function checkOneOf<T extends string>(
  value: unknown,
  known: readonly T[],
  code: OnlineMtpErrorCode,
  field: string,
): asserts value is T {
  checks.checkOneOf(value, known, field, code);
}

type TypedArrayCtor = Int32ArrayConstructor | Float32ArrayConstructor;

/** An instance of `ctor` (an `Int32Array` or `Float32Array`): other arrays are refused, never converted. */
export function checkTypedArray(value: unknown, ctor: TypedArrayCtor, field: string): void {
  check(value instanceof ctor, "DTYPE", field, value, `must be a ${ctor.name} (got ${typeOf(value)})`);
}

/** Every element finite; names the first that is not (`field[i]`). */
export function checkFiniteElements(values: ArrayLike<number>, field: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) checkFinite(v, `${field}[${i}]`);
  }
}

/** Distinct integers in [0, n): request slots of one batch. */
export function checkSlots(slots: unknown, n: number, field: string): asserts slots is readonly number[] {
  checkArray(slots, field);
  const seen = new Set<number>();
  slots.forEach((r, i) => {
    checkInt(r, 0, n - 1, "REQ_INDEX", `${field}[${i}]`, `must be a request slot in [0, ${n - 1}]`);
    check(!seen.has(r), "DUPLICATE_REQ", `${field}[${i}]`, r, "must not repeat a slot of the same batch");
    seen.add(r);
  });
}
