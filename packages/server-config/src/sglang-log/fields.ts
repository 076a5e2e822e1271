/**
 * The key=value fields of one DSV4 sizing message, in the format SGLang printed it: comma-separated after
 * `label: ` (`DSV4 memory calculation`, `DSV4 pool sizes`, `DSV4 SWA sizing`, the scheduler's line), blank-separated
 * after `label with ` (`Initialize DeepSeekV4TokenToKVPool`, Python's `f"{x=}"`). A value ends at the format's
 * delimiter: a number is its digits (and a unit after a blank), whatever follows it before the next delimiter is not
 * part of it. A message that ends where the format goes on (keys missing, `…`/`...`, a partial key or unit) is cut:
 * its last value is marked `truncated` and its missing keys listed; it is never refused.
 */
import type { LoggedNumber } from "./types.js";

export interface SizingKind {
  kind: string;
  /** Finds the label at the start of a message; the fields follow it. */
  match: RegExp;
  /** How the fields are separated. */
  style: "comma" | "blank";
  /** Keys SGLang always prints, in print order (a group: any one of them). */
  required: readonly (string | readonly string[])[];
  /** Keys whose value is text (a mode), not a number. */
  text?: readonly string[];
}

export const SIZING_KINDS: readonly SizingKind[] = [
  {
    kind: "memory-calculation",
    match: /^(DSV4 memory calculation|DSv4 memory calculation): ?/,
    style: "comma",
    required: [
      "bytes_per_full_token",
      ["available_bytes", "raw_available_bytes", "effective_available_bytes"],
      "full_token",
    ],
  },
  {
    kind: "pool-sizes",
    match: /^(DSV4 pool sizes|DSv4 pool sizes): ?/,
    style: "comma",
    required: ["full", "swa", "c4", "c128", "c4_state", "c128_state"],
  },
  {
    kind: "swa-sizing",
    match: /^(DSV4 SWA sizing): ?/,
    style: "comma",
    required: ["mode", "swa_tokens"],
    text: ["mode"],
  },
  {
    kind: "pool-init",
    match: /^(Initialize [A-Za-z0-9_]*DeepSeekV4[A-Za-z0-9_]*Pool[A-Za-z0-9_]*) with ?/,
    style: "blank",
    required: ["max_num_reqs", "swa_size", "c4_size", "c128_size", "c4_state_pool_size", "c128_state_pool_size"],
  },
  {
    kind: "max-total-tokens",
    match: /^()(?=max_total_num_tokens=)/,
    style: "comma",
    required: ["max_total_num_tokens"],
  },
];

/** Words SGLang prints as values (Python's constants). */
const WORDS = new Set(["True", "False", "None"]);
const UNITS = new Set(["GB", "MB", "KB", "B", "GiB", "MiB"]);
const NUMBER = /^(-?\d+(?:\.(\d+))?(?:[eE][-+]?\d+)?)(?:\s?([A-Za-z]+))?/;
/** Thousands separators a person added (`3,895,296`): SGLang never prints them. */
const GROUPED = /^-?\d{1,3}(?:,\d{3})+(?![\d.])/;
const KEY = /^[A-Za-z_][A-Za-z0-9_+]*$/;
const ELLIPSIS = /\s*(?:…|\.\.\.)\s*$/;

export interface ReadFields {
  fields: Record<string, LoggedNumber | string>;
  /** Required keys absent (the line is cut, or the format differs). */
  missing: string[];
  /** The message ends inside a key or a value, or with an ellipsis. */
  cut: boolean;
  /** Problems with single fields: the field is left out, the line kept. */
  problems: string[];
}

/** Splits a body into `key=value` parts at the format's delimiters; a part without `=` is kept as text. */
function parts(kind: SizingKind, body: string): string[] {
  const blank = (text: string) => text.split(/\s+(?=[A-Za-z_][A-Za-z0-9_+]*(?:=|$))/);
  if (kind.style === "blank") return blank(body);
  // A person retyping the line may separate the fields with blanks instead of SGLang's ", ".
  return body
    .split(/,\s*(?=[A-Za-z_][A-Za-z0-9_+]*(?:=|$))/)
    .flatMap((part) => (/\s[A-Za-z_][\w+]*=/.test(part) ? blank(part) : [part]));
}

function readNumber(key: string, text: string): { value: LoggedNumber | string | null; problem?: string } {
  const grouped = GROUPED.exec(text);
  if (grouped) {
    const value = Number(grouped[0].replace(/,/g, ""));
    return { value: { text: grouped[0], value, decimals: 0, unit: "" } };
  }
  const m = NUMBER.exec(text);
  if (!m)
    return WORDS.has(text) ? { value: text } : { value: null, problem: `${key}=${text.slice(0, 30)} is not a number` };
  let unit = m[3] ?? "";
  if (unit !== "" && !UNITS.has(unit)) unit = ""; // a word after the number belongs to another format's text
  const value = Number(m[1]);
  if (!Number.isFinite(value)) return { value: null, problem: `${key}=${m[1]} is not a finite number` };
  return { value: { text: m[1]!, value, decimals: m[2]?.length ?? 0, unit } };
}

/** A unit cut short (`8.84 G`) or a number ending in its point (`8.`): the value is cut. */
function endsCut(text: string): boolean {
  return /\d\.$/.test(text) || /\d\s?(?:G|M|K|Gi|Mi)$/.test(text);
}

export function readFields(kind: SizingKind, body: string): ReadFields {
  const ellipsis = ELLIPSIS.test(body);
  const clean = body.replace(ELLIPSIS, "").trim();
  const out: ReadFields = { fields: {}, missing: [], cut: ellipsis, problems: [] };
  const list = clean === "" ? [] : parts(kind, clean);
  let lastKey: string | null = null;
  for (const [i, part] of list.entries()) {
    const eq = part.indexOf("=");
    const isLast = i === list.length - 1;
    if (eq < 0) {
      if (isLast && KEY.test(part.trim().replace(/,$/, "")))
        out.cut = true; // ends inside a key
      else out.problems.push(`"${part.slice(0, 30)}" is not key=value`);
      continue;
    }
    const key = part.slice(0, eq).trim();
    const raw = part
      .slice(eq + 1)
      .trim()
      .replace(/,$/, "")
      .trim();
    if (raw === "") {
      if (isLast) out.cut = true;
      else out.problems.push(`${key} has no value`);
      continue;
    }
    if (Object.hasOwn(out.fields, key)) {
      out.problems.push(`${key} appears twice`);
      continue;
    }
    if (kind.text?.includes(key) || (!/^-?\d/.test(raw) && !WORDS.has(raw) && kind.kind === "swa-sizing")) {
      out.fields[key] = raw;
    } else {
      const read = readNumber(key, raw);
      if (read.value === null) {
        out.problems.push(read.problem!);
        continue;
      }
      out.fields[key] = read.value;
      if (isLast && typeof read.value === "object" && endsCut(raw)) out.cut = true;
    }
    lastKey = key;
  }
  for (const need of kind.required) {
    const any = typeof need === "string" ? [need] : need;
    if (!any.some((key) => Object.hasOwn(out.fields, key))) out.missing.push(any.join(" or "));
  }
  markLast(out, lastKey, clean, ellipsis);
  return out;
}

/** The last value is at the line's end; it is cut when the line is cut or the format goes on after it. */
function markLast(out: ReadFields, lastKey: string | null, clean: string, ellipsis: boolean) {
  if (lastKey === null) return;
  const v = out.fields[lastKey];
  if (typeof v !== "object") return;
  const tail = clean.slice(clean.lastIndexOf("=") + 1).trim();
  const atLineEnd = tail.startsWith(v.text) && /^[\s,]*(?:[A-Za-z]+)?$/.test(tail.slice(v.text.length));
  if (!atLineEnd) return;
  const cutHere = ellipsis || out.missing.length > 0 || endsCut(tail) || out.cut;
  out.fields[lastKey] = { ...v, atLineEnd: true, ...(cutHere && !tailIsDelimited(clean) ? { truncated: true } : {}) };
}

/** The line ended on a delimiter (`full=1, `): its last value was printed whole, the cut came after it. */
function tailIsDelimited(clean: string): boolean {
  return /,\s*$/.test(clean);
}
