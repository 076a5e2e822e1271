/**
 * One flag table per command drives its parsing, value checks and help text. A flag is `--name value`,
 * `--name=value` or, for a switch, `--name`; a value may start with `-` (`--chunked-prefill-size -1`), so the
 * range, not the parser, decides whether a negative number is allowed. Words after `--` are returned untouched.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import {
  type NumberRange,
  UsageError,
  checkIntRange,
  checkNumberRange,
  parseIntText,
  parseNumberText,
  rangeText,
} from "./args.js";

/** The longest string value a flag takes: paths and names; keeps a pasted blob out of every report. */
export const MAX_STRING_FLAG_CHARS = 4096;

interface Common {
  help: string;
  /** The value's placeholder in the help (N, FILE, …). */
  arg?: string;
  /** The command cannot run without it. */
  required?: boolean;
  /** What an absent flag means, for the help and docs (the command applies it). */
  default?: string | number | boolean;
}
export type FlagSpec =
  | (Common & { type: "bool" })
  | (Common & { type: "string"; choices?: readonly string[] })
  | (Common & { type: "int"; min: number; max: number; choices?: readonly number[] })
  | (Common & { type: "number" } & NumberRange)
  | (Common & { type: "intList"; min: number; max: number });

export type FlagTable = Readonly<Record<string, FlagSpec>>;

type ValueOf<S extends FlagSpec> = S extends { type: "bool" }
  ? boolean
  : S extends { type: "string"; choices: readonly (infer C)[] }
    ? C
    : S extends { type: "string" }
      ? string
      : S extends { type: "intList" }
        ? number[]
        : number;

export type FlagValues<T extends FlagTable> = { -readonly [K in keyof T]?: ValueOf<T[K]> };

export interface ParsedFlags<T extends FlagTable> {
  values: FlagValues<T>;
  /** The words after `--`. */
  rest: string[];
}

/** One flag word: `--name`, `--name=value` (`inline`), with `flag` as typed for errors. */
export interface FlagWord {
  flag: string;
  name: string;
  inline: string | undefined;
}

/** The words after a flag, for its value: the next one (unless it is a flag), or every one up to the next flag. */
export interface FlagValueWords {
  next(): string | undefined;
  all(): string[];
}

export interface FlagWalk {
  /** `word` is refused as no flag, with `rule`: what the command reads as a flag. */
  notAFlag: { refuses: (word: string) => boolean; rule: string };
  /** `--` ends the flags and the rest is returned (else it is refused as `notAFlag` decides). */
  dashDashEnds: boolean;
}

/**
 * The one walk over flag words every command's parser uses: each flag word with its inline value, and the words
 * after it for its value, handed to `each`. Returns the words after `--` when `dashDashEnds`, else [].
 */
export function walkFlagWords(
  argv: readonly string[],
  walk: FlagWalk,
  each: (word: FlagWord, values: FlagValueWords) => void,
): string[] {
  let i = 0;
  const values: FlagValueWords = {
    next: () => (i + 1 < argv.length && !isFlagWord(argv[i + 1]!) ? argv[++i] : undefined),
    all: () => {
      const items: string[] = [];
      while (i + 1 < argv.length && !isFlagWord(argv[i + 1]!)) items.push(argv[++i]!);
      return items;
    },
  };
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (walk.dashDashEnds && word === "--") return argv.slice(i + 1);
    if (walk.notAFlag.refuses(word)) throw new UsageError(word, undefined, walk.notAFlag.rule);
    const eq = word.indexOf("=");
    const name = word.slice(2, eq < 0 ? undefined : eq);
    each({ flag: `--${name}`, name, inline: eq < 0 ? undefined : word.slice(eq + 1) }, values);
  }
  return [];
}

const COMMAND_WALK: FlagWalk = {
  notAFlag: {
    refuses: (word) => !word.startsWith("--") || word === "--=",
    rule: "is not a flag of this command (flags start with --)",
  },
  dashDashEnds: true,
};

/** Parses `argv` against `table`; every refusal is a UsageError naming the flag as typed. */
export function parseFlags<T extends FlagTable>(argv: readonly string[], table: T): ParsedFlags<T> {
  const values: Record<string, unknown> = {};
  const rest = walkFlagWords(argv, COMMAND_WALK, ({ flag, name, inline }, words) => {
    const spec = lookup(table, name, flag);
    if (spec.type === "bool") {
      if (inline !== undefined) throw new UsageError(flag, inline, "is a switch and takes no value");
      values[name] = true;
      return;
    }
    const raw = inline ?? words.next();
    if (raw === undefined) throw new UsageError(flag, undefined, `needs a value${spec.arg ? ` (${spec.arg})` : ""}`);
    values[name] = flagValueFromText(flag, spec, raw);
  });
  requireFlags(table, values);
  return { values: values as FlagValues<T>, rest };
}

function requireFlags(table: FlagTable, values: Record<string, unknown>): void {
  const missing = Object.keys(table).filter((name) => table[name]!.required && values[name] === undefined);
  if (missing.length > 0) {
    const flags = missing.map((name) => `--${name}`);
    throw new UsageError(
      flags[0]!,
      undefined,
      `is required${missing.length > 1 ? ` (so are ${flags.slice(1).join(", ")})` : ""}`,
      {
        missing: flags,
      },
    );
  }
}

/** `--json` is a flag, `-5` is a value. */
function isFlagWord(word: string): boolean {
  return word.startsWith("--");
}

function lookup(table: FlagTable, name: string, flag: string): FlagSpec {
  const spec = Object.hasOwn(table, name) ? table[name] : undefined;
  if (spec) return spec;
  const suggestion = closestMatch(name, Object.keys(table));
  throw new UsageError(
    flag,
    undefined,
    "is not a flag of this command",
    suggestion === null ? undefined : { suggestion: `--${suggestion}` },
  );
}

/** A value typed on the command line (or in an environment variable): text, parsed strictly. */
export function flagValueFromText(flag: string, spec: FlagSpec, raw: string): boolean | string | number | number[] {
  switch (spec.type) {
    case "bool":
      throw new UsageError(flag, raw, "is a switch and takes no value");
    case "string":
      return checkString(flag, spec.choices, raw);
    case "int":
      return checkIntChoice(flag, parseIntText(flag, raw, spec.min, spec.max), spec.choices);
    case "number":
      return checkNumberRange(flag, parseNumberText(flag, raw), spec);
    case "intList":
      return parseIntList(flag, spec, raw.split(","));
  }
}

/** A value from a config file: already typed by JSON or YAML, and never coerced from a string. */
export function flagValueFromData(
  field: string,
  spec: FlagSpec,
  raw: unknown,
): boolean | string | number | number[] | undefined {
  switch (spec.type) {
    case "bool":
      if (typeof raw === "boolean") return raw;
      throw new UsageError(field, raw, "must be true or false");
    case "string":
      if (typeof raw === "string") return checkString(field, spec.choices, raw);
      throw new UsageError(field, raw, "must be a string");
    case "int":
      if (typeof raw === "number" && Number.isSafeInteger(raw)) {
        return checkIntChoice(field, checkIntRange(field, raw, spec.min, spec.max), spec.choices);
      }
      throw new UsageError(field, raw, "must be an integer");
    case "number":
      if (typeof raw === "number" && Number.isFinite(raw)) return checkNumberRange(field, raw, spec);
      throw new UsageError(field, raw, "must be a number");
    case "intList":
      if (Array.isArray(raw) && raw.every((item) => typeof item === "number")) {
        return parseIntList(field, spec, raw.map(String));
      }
      throw new UsageError(field, raw, "must be a list of integers");
  }
}

/** An integer flag that takes only some values (`--head-dim 128|512`). */
function checkIntChoice(flag: string, v: number, choices: readonly number[] | undefined): number {
  if (choices && !choices.includes(v)) {
    throw new UsageError(flag, v, `must be one of ${choices.join(", ")}`, { choices: [...choices] });
  }
  return v;
}

function checkString(flag: string, choices: readonly string[] | undefined, raw: string): string {
  if (raw.length > MAX_STRING_FLAG_CHARS) {
    throw new UsageError(flag, raw, `must be at most ${MAX_STRING_FLAG_CHARS} characters`, {
      maxChars: MAX_STRING_FLAG_CHARS,
    });
  }
  if (choices && !choices.includes(raw)) {
    const suggestion = closestMatch(raw, choices);
    throw new UsageError(flag, raw, `must be one of ${choices.join(", ")}`, {
      choices: [...choices],
      ...(suggestion === null ? {} : { suggestion }),
    });
  }
  return raw;
}

function parseIntList(flag: string, spec: { min: number; max: number }, items: string[]): number[] {
  const rule = `must be a comma-separated list of integers in [${spec.min}, ${spec.max}]`;
  return items.map((item) => {
    const v = /^-?\d+$/.test(item) ? Number(item) : Number.NaN;
    if (!Number.isSafeInteger(v) || v < spec.min || v > spec.max) {
      throw new UsageError(flag, items.join(","), rule, { min: spec.min, max: spec.max });
    }
    return v;
  });
}

const INT32_MAX = 2 ** 31 - 1;

/** The widest option column: longer flags put their help on the next line. */
const MAX_OPTION_WIDTH = 40;

/** `--name ARG` as the help shows it. */
export function flagSynopsis(name: string, spec: FlagSpec): string {
  return spec.type === "bool" ? `--${name}` : `--${name} ${spec.arg ?? placeholder(spec)}`;
}

/** The Options section of a command's help, from its table: each flag, its help, range, default. */
export function helpTable(table: FlagTable, width?: number): string {
  const synopses = Object.entries(table).map(([name, spec]) => flagSynopsis(name, spec));
  const column = width ?? Math.max(0, ...synopses.map((s) => s.length).filter((n) => n <= MAX_OPTION_WIDTH));
  const rows = Object.values(table).map((spec, i) => {
    const synopsis = synopses[i]!;
    const text = `${spec.help}${hints(spec)}`;
    if (synopsis.length > column) return `  ${synopsis}\n  ${" ".repeat(column)}  ${text}`;
    return `  ${synopsis.padEnd(column)}  ${text}`;
  });
  return rows.join("\n");
}

function hints(spec: FlagSpec): string {
  const range = rangeHint(spec);
  const parts = [range && `range ${range}`, spec.required ? "required" : "", defaultHint(spec)].filter((p) => p !== "");
  return parts.length === 0 ? "" : ` (${parts.join("; ")})`;
}

function placeholder(spec: FlagSpec): string {
  if (spec.type === "string") return spec.choices ? spec.choices.join("|") : "S";
  return spec.type === "intList" ? "A,B,…" : "N";
}

/** The value's type in words, for the docs. */
export function typeText(spec: FlagSpec): string {
  switch (spec.type) {
    case "bool":
      return "switch";
    case "string":
      return spec.choices ? "choice" : "string";
    case "int":
      return "integer";
    case "number":
      return "number";
    case "intList":
      return "integer list";
  }
}

/** The accepted values in words (`≥ 1`, `1..8`, `(0, 1]`, `cpu, gpu`), or "" when any value of the type goes. */
export function rangeHint(spec: FlagSpec): string {
  if (spec.type === "int" && spec.choices) return spec.choices.join(", ");
  if (spec.type === "int" || spec.type === "intList") {
    if (spec.max === Number.MAX_SAFE_INTEGER) return spec.min === 0 ? "" : `≥ ${spec.min}`;
    return `${spec.min}..${spec.max === INT32_MAX ? "2^31-1" : spec.max}`;
  }
  if (spec.type === "number") return rangeText(spec);
  if (spec.type === "string" && spec.choices && spec.arg !== undefined) return spec.choices.join(", ");
  return "";
}

export function defaultHint(spec: FlagSpec): string {
  return spec.default === undefined ? "" : `default ${String(spec.default)}`;
}

/** For commands that take no words after `--`. */
export function refuseRest(rest: readonly string[]): void {
  if (rest.length > 0) throw new UsageError("--", rest.join(" "), "this command takes no arguments after --");
}

/** A string flag that takes one of `choices` (its value type is their union). */
export function choice<const C extends readonly string[]>(choices: C, help: string, defaultValue?: C[number]) {
  if (defaultValue === undefined) return { type: "string", choices, help } as const;
  return { type: "string", choices, help, default: defaultValue } as const;
}
