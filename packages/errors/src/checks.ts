/**
 * The argument checks every package repeats, bound to that package's error class: `fieldChecks(PlannerError)`
 * gives checks that throw `PlannerError`s naming the field, the value given and the rule. Nothing is coerced (a
 * string is never a number or a boolean).
 */
import type { ErrorCode } from "./codes.js";
import type { Dsv4KvError } from "./error.js";
import { closestMatch } from "./suggest.js";

/** A package's error class: the positional constructor of `FieldError`. */
export type FieldErrorClass = new (
  code: ErrorCode,
  field: string,
  value: unknown,
  rule: string,
  params?: Readonly<Record<string, unknown>>,
) => Dsv4KvError;

export interface FieldChecks {
  /** Throws `new ErrorClass(code, field, value, rule, params)` unless `ok`. */
  check(
    ok: boolean,
    code: ErrorCode,
    field: string,
    value: unknown,
    rule: string,
    params?: Record<string, unknown>,
  ): asserts ok;
  /** A number (any: range checks follow); else INVALID_TYPE. */
  checkNumber(value: unknown, field: string): asserts value is number;
  /** true or false; else INVALID_TYPE. */
  checkBoolean(value: unknown, field: string): asserts value is boolean;
  /** A plain record (`isRecord`): null, an array or a typed array is INVALID_TYPE naming its type. */
  checkObject(value: unknown, field: string): asserts value is Record<string, unknown>;
  /** Refuses keys of `obj` outside `known` (UNKNOWN_KEY at `field.key`), suggesting the closest known key. */
  checkKeys(obj: object, known: readonly string[], field: string): void;
  /** Each of `names` is a function on `obj`; else INVALID_TYPE at `field.name`, the value its type, `rule`. */
  checkMethods(obj: object, names: readonly string[], field: string, rule: string): void;
  /**
   * An integer in [lo, hi]: a non-number is INVALID_TYPE; any other number outside is `code` (INVALID_ARGUMENT unless
   * given), with `rule` (default "must be an integer in [lo, hi]") and params `{ min, max }`.
   */
  checkInt(
    value: unknown,
    lo: number,
    hi: number,
    field: string,
    rule?: string,
    code?: ErrorCode,
  ): asserts value is number;
  /**
   * One of `known` (compared exactly); else `code`, or without one INVALID_ARGUMENT for a value of the choices' type and
   * INVALID_TYPE for another, with params `{ known }`, plus the closest as `suggestion` for a misspelt string name.
   */
  checkOneOf<T extends string | number>(
    value: unknown,
    known: readonly T[],
    field: string,
    code?: ErrorCode,
  ): asserts value is T;
}

/** The checks of `FieldChecks`, throwing `ErrorClass`. */
export function fieldChecks(ErrorClass: FieldErrorClass): FieldChecks {
  const check: FieldChecks["check"] = (ok, code, field, value, rule, params) => {
    if (!ok) throw new ErrorClass(code, field, value, rule, params);
  };
  const checkNumber: FieldChecks["checkNumber"] = (value, field) => {
    check(typeof value === "number", "INVALID_TYPE", field, value, `must be a number (got ${typeOf(value)})`);
  };
  return {
    check,
    checkNumber,
    checkBoolean(value, field) {
      check(typeof value === "boolean", "INVALID_TYPE", field, value, `must be true or false (got ${typeOf(value)})`);
    },
    checkObject(value, field) {
      check(isRecord(value), "INVALID_TYPE", field, value, `must be an object (got ${typeOf(value)})`);
    },
    checkKeys(obj, known, field) {
      for (const key of Object.keys(obj)) {
        if (known.includes(key)) continue;
        const suggestion = closestMatch(key, known);
        const params = suggestion === null ? { known } : { known, suggestion };
        const at = field ? `${field}.${key}` : key;
        throw new ErrorClass("UNKNOWN_KEY", at, key, `must be one of ${known.join(", ")}`, params);
      }
    },
    checkMethods(obj, names, field, rule) {
      for (const name of names) {
        const fn = (obj as Record<string, unknown>)[name];
        check(typeof fn === "function", "INVALID_TYPE", `${field}.${name}`, typeOf(fn), rule);
      }
    },
    checkInt(value, lo, hi, field, rule, code = "INVALID_ARGUMENT") {
      checkNumber(value, field);
      const ok = Number.isInteger(value) && value >= lo && value <= hi;
      check(ok, code, field, value, rule ?? `must be an integer in [${lo}, ${hi}]`, { min: lo, max: hi });
    },
    checkOneOf(value, known, field, code) {
      if (known.includes(value as (typeof known)[number])) return;
      const names = known.map(String);
      // Only a misspelt name gets a suggestion: for numeric choices the closest "name" of the string "4" is "4" itself.
      const suggestion = typeof value === "string" && typeof known[0] === "string" ? closestMatch(value, names) : null;
      const params = suggestion === null ? { known } : { known, suggestion };
      const byType = typeof value === typeof known[0] ? "INVALID_ARGUMENT" : "INVALID_TYPE";
      throw new ErrorClass(code ?? byType, field, value, `must be one of ${names.join(", ")}`, params);
    },
  };
}

/**
 * An object that can hold named fields: not null, not an array and not a typed array (or DataView). Typed arrays are
 * refused everywhere: their keys are indices, so an options object or a JSON record given as one is always a mistake.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/** How a rule names a value's type: "null", "array", a typed array's class name, else `typeof`. */
export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}
