/**
 * The CLI's errors and its strict scalar parsers. A flag value is parsed from its text exactly: no trimming, no
 * hex, no exponent where an integer is expected, nothing outside the flag's range.
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import { FieldError } from "@dsv4-kv/errors/internal";

/** A command line that cannot be run (code USAGE); `field` is the flag as typed (`--residency-steps`). */
export class UsageError extends FieldError {
  static override readonly kind: string = "UsageError";

  constructor(field: string, value: unknown, rule: string, params?: Readonly<Record<string, unknown>>) {
    super("USAGE", field, value, rule, params);
  }
}

/** Input the CLI could not read (code INPUT): a missing file, not JSON, too large, too deep. */
export class InputError extends FieldError {
  static override readonly kind: string = "InputError";

  constructor(field: string, value: unknown, rule: string, params?: Readonly<Record<string, unknown>>) {
    super("INPUT" satisfies ErrorCode, field, value, rule, params);
  }
}

/**
 * A run refused before it starts because its estimate (states, seconds, bytes) passes a bound (code WORK_LIMIT);
 * `field` is the flag that raises the bound, or the flag whose value makes the run that large.
 */
export class LimitError extends FieldError {
  static override readonly kind: string = "LimitError";

  constructor(field: string, value: unknown, rule: string, params?: Readonly<Record<string, unknown>>) {
    super("WORK_LIMIT" satisfies ErrorCode, field, value, rule, params);
  }
}

const DECIMAL_INT = /^-?\d+$/;
const DECIMAL_NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/** A decimal integer in [min, max]; `flag` names it in the error. */
export function parseIntText(flag: string, raw: string, min: number, max: number): number {
  const v = DECIMAL_INT.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(v)) throw new UsageError(flag, raw, "must be an integer", { min, max });
  return checkIntRange(flag, v, min, max);
}

export function checkIntRange(flag: string, v: number, min: number, max: number): number {
  if (v < min || v > max) throw new UsageError(flag, v, `must be in [${min}, ${max}]`, { min, max });
  return v;
}

/** A finite decimal number (an exponent is allowed); the range is checked by `checkNumberRange`. */
export function parseNumberText(flag: string, raw: string): number {
  const v = DECIMAL_NUMBER.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(v)) throw new UsageError(flag, raw, "must be a decimal number");
  return v;
}

export interface NumberRange {
  min: number;
  max: number;
  /** When true the minimum itself is refused (e.g. a memory fraction must be > 0). */
  minExclusive?: boolean;
}

export function checkNumberRange(flag: string, v: number, range: NumberRange): number {
  const low = range.minExclusive ? v <= range.min : v < range.min;
  if (low || v > range.max) throw new UsageError(flag, v, `must be in ${rangeText(range)}`, { ...range });
  return v;
}

export function rangeText(range: NumberRange): string {
  return `${range.minExclusive ? "(" : "["}${range.min}, ${range.max}]`;
}
