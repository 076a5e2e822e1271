/**
 * The memory pool's errors and argument checks. Every refusal names the field, the value and the rule; the message
 * is built by @dsv4-kv/errors' `formatMessage` from those and the structured `params`.
 */
import { Dsv4KvError } from "@dsv4-kv/errors";
import { FieldError, closestMatch } from "@dsv4-kv/errors/internal";

export type MemoryPoolErrorCode =
  | "INVALID_ARGUMENT"
  | "INVALID_TYPE"
  | "UNKNOWN_KEY"
  | "NOT_APPLICABLE"
  | "INVALID_RATIO"
  | "ONLINE_C128_MTP"
  | "ONLINE_RING"
  | "PAGE_SIZE"
  | "SWA_PAGE_SIZE"
  | "SWA_FLOOR"
  | "NO_MEMORY"
  | "NOT_ENOUGH_MEMORY"
  | "DRAFT_EXCEEDS_RING"
  | "HISPARSE_RATIO"
  | "STATE_DTYPE"
  | "KV_LAYOUT"
  | "OUT_OF_RANGE"
  | "INT32_OVERFLOW";

export class MemoryPoolError extends FieldError {
  static override readonly kind = "MemoryPoolError";
  declare readonly code: MemoryPoolErrorCode;
  /**
   * The start-up rule this refusal is (docs/reference/startup-rules.md: `V-P2`, `V-P3`, `V-S8`, …), as data, so the
   * start-up check names it without reading the code's params. Not part of the JSON form.
   */
  readonly startupRule: string | null;

  constructor(
    code: MemoryPoolErrorCode,
    field: string,
    value: unknown,
    rule: string,
    params?: Readonly<Record<string, unknown>>,
    startupRule?: string,
  ) {
    super(code, field, value, rule, params);
    this.startupRule = startupRule ?? null;
  }
}

/** Several capacity errors at once (sizeKvCache throws them together so that none is lost); each in `errors`. */
export class MemoryPoolCapacityErrors extends Dsv4KvError {
  static override readonly kind = "MemoryPoolCapacityErrors";
  readonly errors: readonly MemoryPoolError[];

  constructor(errors: readonly MemoryPoolError[]) {
    super({
      code: "CAPACITY",
      field: "",
      value: undefined,
      rule: `the KV budget breaks ${errors.length} capacity limits: ${errors.map((e) => e.message).join("; ")}`,
      params: { errors },
    });
    this.errors = errors;
  }
}

function typeError(field: string, value: unknown, expected: string): MemoryPoolError {
  return new MemoryPoolError("INVALID_TYPE", field, value, `must be ${expected} (got ${describeType(value)})`);
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : `a ${typeof value}`;
}

/** Throws unless `value` is a safe integer in `[min, max]` (no strings, NaN, Infinity or fractions). */
export function requireInt(
  field: string,
  value: unknown,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): asserts value is number {
  if (typeof value !== "number") throw typeError(field, value, "an integer");
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const low = min > Number.MIN_SAFE_INTEGER;
    const high = max < Number.MAX_SAFE_INTEGER;
    const range = low && high ? ` in [${min}, ${max}]` : low ? ` >= ${min}` : high ? ` <= ${max}` : "";
    throw new MemoryPoolError("INVALID_ARGUMENT", field, value, `must be an integer${range}`, { min, max });
  }
}

/** Throws unless `value` is a finite number >= `min` (> `min` when `exclusive`) and <= `max`. */
export function requireNumber(
  field: string,
  value: unknown,
  min: number,
  exclusive = false,
  max = Number.POSITIVE_INFINITY,
): asserts value is number {
  if (typeof value !== "number") throw typeError(field, value, "a finite number");
  if (!Number.isFinite(value) || (exclusive ? value <= min : value < min) || value > max) {
    const low = Number.isFinite(min) ? `${exclusive ? ">" : ">="} ${min}` : "";
    const high = Number.isFinite(max) ? `<= ${max}` : "";
    const range = [low, high].filter((s) => s !== "").join(" and ");
    throw new MemoryPoolError("INVALID_ARGUMENT", field, value, `must be a finite number${range ? ` ${range}` : ""}`, {
      min,
      max,
      exclusive,
    });
  }
}

/** Throws unless `value` is a boolean (a string "false" is not false). */
export function requireBoolean(field: string, value: unknown): asserts value is boolean {
  if (typeof value !== "boolean") throw typeError(field, value, "true or false");
}

/** Throws unless `value` is one of `allowed` (compared with ===). */
export function requireOneOf<T>(field: string, value: unknown, allowed: readonly T[]): asserts value is T {
  if (!allowed.includes(value as T)) {
    const suggestion = typeof value === "string" ? closestMatch(value, allowed.map(String)) : null;
    throw new MemoryPoolError(
      "INVALID_ARGUMENT",
      field,
      value,
      `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`,
      suggestion === null ? { allowed } : { allowed, suggestion },
    );
  }
}

/** Throws unless `value` is an array. */
export function requireArray(field: string, value: unknown): asserts value is readonly unknown[] {
  if (!Array.isArray(value)) throw typeError(field, value, "an array");
}

/** Throws unless `value` is a non-array object. */
export function requireObject(field: string, value: unknown): asserts value is object {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw typeError(field, value, "an object");
}

/** Throws unless `value` is a plain object whose keys are all in `known` (an unknown key gets a suggestion). */
export function requireKnownKeys(field: string, value: unknown, known: readonly string[]): void {
  requireObject(field === "" ? "options" : field, value);
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const suggestion = closestMatch(key, known);
    throw new MemoryPoolError(
      "UNKNOWN_KEY",
      field === "" ? key : `${field}.${key}`,
      (value as Record<string, unknown>)[key],
      `is not an option here (known: ${known.join(", ")})`,
      suggestion === null ? { known } : { known, suggestion },
    );
  }
}

/** Runs `check(field, value)` only when `value` is neither undefined nor null (optional and nullable options). */
export function optional<V>(field: string, value: V, check: (field: string, value: NonNullable<V>) => void): void {
  if (value !== undefined && value !== null) check(field, value as NonNullable<V>);
}
