/**
 * The one place where an error's message is built from its data. Values are echoed at most
 * `MAX_VALUE_CHARS` characters long, so a 50 MB string or a huge array never floods a terminal or a log.
 */
export const MAX_VALUE_CHARS = 100;

/** What a message is built from. */
export interface MessageData {
  readonly field: string;
  readonly value: unknown;
  readonly rule: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/**
 * `field = value: rule` (`field: rule` when no value was given, e.g. a missing flag), then ` (did you mean "x"?)`
 * when `params.suggestion` is a string.
 */
export function formatMessage(data: MessageData): string {
  const head =
    data.field === ""
      ? data.rule
      : data.value === undefined
        ? `${data.field}: ${data.rule}`
        : `${data.field} = ${formatValue(data.value)}: ${data.rule}`;
  const suggestion = data.params?.suggestion;
  return typeof suggestion === "string" ? `${head} (did you mean "${suggestion}"?)` : head;
}

/** A value as a message shows it: strings quoted, bigints with `n`, arrays and objects as short JSON. */
export function formatValue(value: unknown): string {
  return truncate(renderValue(value), MAX_VALUE_CHARS);
}

function renderValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (value === undefined || value === null || typeof value !== "object") return String(value);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return renderArray(Array.from(value as unknown as ArrayLike<number | bigint>), value.constructor.name);
  }
  if (Array.isArray(value)) return renderArray(value, "");
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function renderArray(items: readonly unknown[], typeName: string): string {
  const shown = items.slice(0, 8).map((v) => truncate(renderValue(v), 24));
  const more = items.length > 8 ? `, … (${items.length} items)` : "";
  return `${typeName}[${shown.join(", ")}${more}]`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}… (${text.length} chars)`;
}

/** A JSON-safe copy of a value (bigints as strings, non-finite numbers as strings, long strings cut). */
export function jsonSafeValue(value: unknown): unknown {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (typeof value === "string") return truncate(value, MAX_VALUE_CHARS);
  if (value === undefined) return null;
  if (typeof value === "object" && value !== null) return formatValue(value);
  return value;
}
