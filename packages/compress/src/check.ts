/**
 * Argument checks of this package: each throws a `CompressError` naming the field, the value given and the rule;
 * nothing is coerced (a string is never a number or a boolean).
 */
import { closestMatch } from "@dsv4-kv/errors";
import { CompressError, type CompressErrorCode } from "./errors.js";

/** Throws `CompressError(code, field, value, rule, params)` unless `ok`. */
export function check(
  ok: boolean,
  code: CompressErrorCode,
  field: string,
  value: unknown,
  rule: string,
  params?: Record<string, unknown>,
): asserts ok {
  if (!ok) throw new CompressError(code, field, value, rule, params);
}

export function checkNumber(value: unknown, field: string): asserts value is number {
  check(typeof value === "number", "INVALID_TYPE", field, value, `must be a number (got ${typeOf(value)})`);
}

/** An integer in [lo, hi] (a number out of range: INVALID_ARGUMENT; a non-number: INVALID_TYPE). */
export function checkInt(
  value: unknown,
  lo: number,
  hi: number,
  field: string,
  rule?: string,
): asserts value is number {
  checkNumber(value, field);
  const ok = Number.isInteger(value) && value >= lo && value <= hi;
  check(ok, "INVALID_ARGUMENT", field, value, rule ?? `must be an integer in [${lo}, ${hi}]`, { min: lo, max: hi });
}

/** A finite number >= 0. */
export function checkNonNegative(value: unknown, field: string): asserts value is number {
  checkNumber(value, field);
  check(Number.isFinite(value) && value >= 0, "INVALID_ARGUMENT", field, value, "must be a finite number >= 0");
}

export function checkBoolean(value: unknown, field: string): asserts value is boolean {
  check(typeof value === "boolean", "INVALID_TYPE", field, value, `must be true or false (got ${typeOf(value)})`);
}

export function checkObject(value: unknown, field: string): asserts value is Record<string, unknown> {
  const ok = typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
  check(ok, "INVALID_TYPE", field, value, `must be an object (got ${typeOf(value)})`);
}

/** Refuses keys of `obj` outside `known`, suggesting the closest known key. */
export function checkKeys(obj: object, known: readonly string[], field: string): void {
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    const suggestion = closestMatch(key, known);
    const params = suggestion === null ? { known } : { known, suggestion };
    const at = field ? `${field}.${key}` : key;
    throw new CompressError("UNKNOWN_KEY", at, key, `must be one of ${known.join(", ")}`, params);
  }
}

/** One of `known` (compared exactly), suggesting the closest for a misspelt string. */
export function checkOneOf<T extends string | number>(
  value: unknown,
  known: readonly T[],
  field: string,
): asserts value is T {
  if (known.includes(value as T)) return;
  const names = known.map(String);
  const suggestion = typeof value === "string" ? closestMatch(value, names) : null;
  const params = suggestion === null ? { known } : { known, suggestion };
  const code = typeof value === typeof known[0] ? "INVALID_ARGUMENT" : "INVALID_TYPE";
  throw new CompressError(code, field, value, `must be one of ${names.join(", ")}`, params);
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

export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}
