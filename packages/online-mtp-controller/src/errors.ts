/**
 * One error type for every refused input of the controller and its backends. `field` names the offending input
 * (with an index where it is an array element), `value` is what was given, `rule` is the precondition it broke.
 */
export type OnlineMtpErrorCode =
  | "DRAFT_TOKENS"
  | "BANK_STRIDE"
  | "STATE_ROWS"
  | "REQ_INDEX"
  | "SHAPE"
  | "DTYPE"
  | "BATCH_SIZE"
  | "DUPLICATE_REQ"
  | "LIFECYCLE"
  | "BACKEND"
  | "INVALID_ARGUMENT";

export class OnlineMtpError extends Error {
  override readonly name = "OnlineMtpError";
  readonly code: OnlineMtpErrorCode;
  readonly field: string;
  readonly value: unknown;
  readonly rule: string;

  constructor(code: OnlineMtpErrorCode, field: string, value: unknown, rule: string) {
    super(`${field} = ${formatValue(value)}: ${rule}`);
    this.code = code;
    this.field = field;
    this.value = value;
    this.rule = rule;
  }
}

function formatValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}n`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Throws `OnlineMtpError(code, field, value, rule)` unless `ok`. */
export function check(ok: boolean, code: OnlineMtpErrorCode, field: string, value: unknown, rule: string): asserts ok {
  if (!ok) throw new OnlineMtpError(code, field, value, rule);
}

export function checkInt(
  value: number,
  lo: number,
  hi: number,
  code: OnlineMtpErrorCode,
  field: string,
  rule?: string,
): void {
  check(
    Number.isInteger(value) && value >= lo && value <= hi,
    code,
    field,
    value,
    rule ?? `must be an integer in [${lo}, ${hi}]`,
  );
}
