/**
 * The DSV4-relevant server arguments and environment switches (docs/reference/startup-rules.md §2.1) as a zod 4 schema,
 * derived from the flag table (server-flags.ts). Keys are the upstream flag names in camelCase; `normalizeArgKeys`
 * also accepts kebab-case (`page-size`) and snake_case (`page_size`) so a config file can use upstream spelling.
 * Environment switches are explicit fields: only the CLI reads process.env.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { z } from "zod";
import { ServerConfigError } from "./errors.js";
import { SERVER_ARG_ENTRIES, type SGLANG_SERVER_ARGS } from "./server-flags.js";

export const SPECULATIVE_ALGORITHMS_ACCEPTED = ["EAGLE", "DSPARK"] as const;

type Table = typeof SGLANG_SERVER_ARGS;

/** The server arguments' zod schema, built from the flag table (server-flags.ts): one entry, one schema. */
export const ServerArgsSchema = z.strictObject(
  Object.fromEntries(SERVER_ARG_ENTRIES.map(([field, flag]) => [field, flag.schema])) as {
    [K in keyof Table]: Table[K]["schema"];
  },
);

export type ServerArgsInput = z.input<typeof ServerArgsSchema>;
export type ServerArgs = z.output<typeof ServerArgsSchema>;

/** `page-size` / `page_size` → `pageSize`. */
export function camelCaseKey(key: string): string {
  return key.replace(/^-+/, "").replace(/[-_]+([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function normalizeArgKeys(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) out[camelCaseKey(key)] = value;
  return out;
}

/** How `parseServerArgs` reads its input. */
export interface ParseServerArgsOptions {
  /**
   * The values are command-line strings (the CLI's flags). A string for a number must then be a plain decimal
   * literal (`0.85`, `1e-3`; no hex, no blanks, no empty string), for a list comma-separated decimals, and for a
   * boolean `true` or `false`. SGLang declares its boolean server flags `store_true` (present = true, no value),
   * so a boolean given as a string comes from a config file or the environment, where only those two words are
   * unambiguous. Without this option a string is never a number or a boolean.
   */
  fromFlags?: boolean;
  /** How an error names a field, given its camelCase key (default: unchanged). The CLI passes `flagName`. */
  fieldName?: (field: string) => string;
}

export type ParseArgsResult =
  | { ok: true; args: ServerArgs }
  | {
      ok: false;
      /** Every refusal, typed: code, field (as `fieldName` renders it), value, rule, params. */
      errors: ServerConfigError[];
      /** The errors' messages, one per refusal. */
      issues: string[];
    };

/** `pageSize` → `--page-size`, `weightsGiB` → `--weights-gib`: how a CLI user typed a field. */
export function flagName(field: string): string {
  return `--${field.replace(/GiB/g, "Gib").replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

const KNOWN_KEYS = Object.keys(ServerArgsSchema.shape);
const DECIMAL = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

type ValueKind = "number" | "boolean" | "array" | "other";

function kindOf(schema: z.ZodType): ValueKind {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType };
  while (def.innerType !== undefined) def = def.innerType._zod.def as typeof def;
  return def.type === "number" || def.type === "boolean" || def.type === "array" ? def.type : "other";
}

const KINDS: Readonly<Record<string, ValueKind>> = Object.fromEntries(
  Object.entries(ServerArgsSchema.shape).map(([key, schema]) => [key, kindOf(schema as z.ZodType)]),
);

/** A flag's string as the schema's type, or undefined when it is not a strict literal of it. */
function fromFlagString(kind: ValueKind, text: string): unknown {
  const decimal = (t: string) => (DECIMAL.test(t) && Number.isFinite(Number(t)) ? Number(t) : undefined);
  if (kind === "number") return decimal(text);
  if (kind === "boolean") return text === "true" ? true : text === "false" ? false : undefined;
  if (kind === "array") {
    const items = text.split(",").map(decimal);
    return items.every((v) => v !== undefined) ? items : undefined;
  }
  return text;
}

const EXPECTED: Readonly<Record<ValueKind, string>> = {
  number: "a plain decimal number (no hex, blanks or empty string)",
  boolean: "true or false",
  array: "comma-separated plain decimal numbers",
  other: "a string",
};

/**
 * Parses raw arguments (any key spelling). Unknown keys (with a suggestion), a key given twice in two spellings,
 * wrong types and out-of-range values are all reported, each as a ServerConfigError naming the field.
 */
export function parseServerArgs(raw: Record<string, unknown>, options: ParseServerArgsOptions = {}): ParseArgsResult {
  const name = options.fieldName ?? ((field: string) => field);
  const errors: ServerConfigError[] = [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    errors.push(new ServerConfigError("INVALID_TYPE", "args", raw, "must be an object of server arguments"));
    return { ok: false, errors, issues: errors.map((e) => e.message) };
  }
  const normalized: Record<string, unknown> = {};
  const spelling: Record<string, string> = {};
  for (const [key, given] of Object.entries(raw)) {
    const field = camelCaseKey(key);
    if (!KNOWN_KEYS.includes(field)) {
      const suggestion = closestMatch(field, KNOWN_KEYS);
      const params = suggestion === null ? {} : { suggestion: name(suggestion) };
      errors.push(new ServerConfigError("UNKNOWN_KEY", name(field), given, "is not a server argument", params));
      continue;
    }
    if (field in normalized) {
      const rule = `is given twice (as ${JSON.stringify(spelling[field])} and ${JSON.stringify(key)})`;
      errors.push(new ServerConfigError("INVALID_ARGUMENT", name(field), given, rule));
      continue;
    }
    spelling[field] = key;
    const kind = KINDS[field]!;
    const value = options.fromFlags && typeof given === "string" ? fromFlagString(kind, given) : given;
    if (value === undefined) {
      errors.push(new ServerConfigError("INVALID_TYPE", name(field), given, `must be ${EXPECTED[kind]}`));
      continue;
    }
    normalized[field] = value;
  }
  const parsed = ServerArgsSchema.safeParse(normalized);
  if (parsed.success && errors.length === 0) return { ok: true, args: parsed.data };
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [head, ...rest] = issue.path.map(String);
      const field = name(head ?? "") + rest.map((k) => `[${k}]`).join("");
      const value = issue.path
        .slice(1)
        .reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], normalized[head ?? ""]);
      const code = issue.code === "invalid_type" ? "INVALID_TYPE" : "INVALID_ARGUMENT";
      errors.push(new ServerConfigError(code, field, value, issue.message, { zodCode: issue.code }));
    }
  }
  return { ok: false, errors, issues: errors.map((e) => e.message) };
}

/**
 * Refuses `args` that did not come from `parseServerArgs` in a form the resolution can read (null, a raw object
 * with a string for a number, an unknown key): the first field at fault, as a ServerConfigError. Returns the args
 * as the schema reads them.
 */
export function requireServerArgs(args: unknown): ServerArgs {
  if (typeof args !== "object" || args === null || Array.isArray(args))
    throw new ServerConfigError("INVALID_TYPE", "args", args, "must be the server arguments parseServerArgs returns");
  const parsed = ServerArgsSchema.safeParse(args);
  // The parsed copy: a key left undefined gets its default, as parseServerArgs would have given it.
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join(".") || "args";
  const value = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], args);
  const code = issue.code === "invalid_type" ? "INVALID_TYPE" : "INVALID_ARGUMENT";
  throw new ServerConfigError(code, field, value, `${issue.message} (pass what parseServerArgs returns)`, {
    zodCode: issue.code,
  });
}
