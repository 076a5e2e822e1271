/**
 * One error type for every refused input. `field` names the offending input (with an index where it is an
 * array element), `value` is what was given, `rule` is the precondition it broke, in words a user can act on.
 * `code` is stable and machine-readable.
 */
export type PlannerErrorCode =
  | "INVALID_RATIO"
  | "INVALID_RING"
  | "INVALID_ARGUMENT"
  | "REQ_RING_NEEDS_C4"
  | "BATCH_SIZE"
  | "NUM_Q_TOKENS"
  | "EXTEND_LEN"
  | "SEQ_LEN"
  | "EXTEND_SUM"
  | "INDEX_OUT_OF_RANGE"
  | "INT32_OVERFLOW"
  | "RECORD_LAYOUT"
  | "SIMULATION"
  | "INVALID_CASE";

export class PlannerError extends Error {
  override readonly name = "PlannerError";
  readonly code: PlannerErrorCode;
  readonly field: string;
  readonly value: unknown;
  readonly rule: string;

  constructor(code: PlannerErrorCode, field: string, value: unknown, rule: string) {
    super(`${field} = ${formatValue(value)}: ${rule}`);
    this.code = code;
    this.field = field;
    this.value = value;
    this.rule = rule;
  }

  toJSON(): { code: PlannerErrorCode; field: string; value: unknown; rule: string; message: string } {
    return { code: this.code, field: this.field, value: jsonSafe(this.value), rule: this.rule, message: this.message };
  }
}

function jsonSafe(value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

function formatValue(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value))
    return value.length > 8 ? `[${value.slice(0, 8).join(", ")}, …] (${value.length} items)` : `[${value.join(", ")}]`;
  return String(value);
}
