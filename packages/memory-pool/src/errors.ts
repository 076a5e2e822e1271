/**
 * One error type for every refused input of the memory pool. `field` names the offending input, `value` is what
 * was given, `rule` is the precondition it broke in words a user can act on; `code` is stable and machine-readable.
 * (Same shape as @dsv4-kv/planner's PlannerError so that callers can report both the same way.)
 */
export type MemoryPoolErrorCode =
  | "INVALID_ARGUMENT"
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
  | "OUT_OF_RANGE";

export class MemoryPoolError extends Error {
  override readonly name = "MemoryPoolError";
  readonly code: MemoryPoolErrorCode;
  readonly field: string;
  readonly value: unknown;
  readonly rule: string;

  constructor(code: MemoryPoolErrorCode, field: string, value: unknown, rule: string, message?: string) {
    super(message ?? `${field} = ${formatValue(value)}: ${rule}`);
    this.code = code;
    this.field = field;
    this.value = value;
    this.rule = rule;
  }

  toJSON(): { code: MemoryPoolErrorCode; field: string; value: unknown; rule: string; message: string } {
    return { code: this.code, field: this.field, value: this.value, rule: this.rule, message: this.message };
  }
}

function formatValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value))
    return value.length > 8 ? `[${value.slice(0, 8).join(", ")}, …] (${value.length} items)` : `[${value.join(", ")}]`;
  return String(value);
}

/** Throws unless `value` is a finite integer >= `min` (default 0). */
export function requireInt(field: string, value: number, min = 0): void {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new MemoryPoolError("INVALID_ARGUMENT", field, value, `must be an integer >= ${min}`);
  }
}

/** Throws unless `value` is a finite number >= `min` (exclusive when `exclusive`). */
export function requireNumber(field: string, value: number, min: number, exclusive = false): void {
  if (typeof value !== "number" || !Number.isFinite(value) || (exclusive ? value <= min : value < min)) {
    throw new MemoryPoolError(
      "INVALID_ARGUMENT",
      field,
      value,
      `must be a finite number ${exclusive ? ">" : ">="} ${min}`,
    );
  }
}
