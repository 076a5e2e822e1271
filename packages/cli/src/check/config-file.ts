/**
 * `--config FILE`: SGLang's config format (a YAML or JSON object of server flags, keys with dashes or underscores,
 * `null`/`None` meaning unset) plus dsv4-kv's own options. Every unknown key is reported in one error.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { SGLANG_FLAG_NAMES, type SglangFlag, sglangFlag } from "@dsv4-kv/server-config";
import { LineCounter, isMap, isNode, isScalar, parseDocument } from "yaml";
import { InputError, UsageError } from "../commands/args.js";
import { flagValueFromData } from "../commands/flags.js";
import { readTextInput } from "../commands/input.js";
import { DuplicateKeyError, lineColumn, parseJsonFile, scanJsonKeys } from "../commands/json-keys.js";
import type { InputStream } from "../commands/registry.js";
import { ALL_FLAGS } from "./flags.js";
import { type IgnoredSetting, type Values, dsv4FlagOf, effectOf } from "./launch.js";

/** A file's parse error, first line only (YAML's next lines quote the file). */
export function parseFailure(flag: string, path: string, format: string, error: unknown): InputError {
  const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 200);
  return new InputError(flag, path, `is not valid ${format} (${reason})`);
}

/** Python's `None` as YAML reads it (a string), and YAML/JSON null: the setting is left unset. */
const isUnset = (value: unknown) => value === null || value === "None";

interface UnknownKey {
  key: string;
  value: unknown;
  suggestion: string | null;
}

export interface ConfigFileValues {
  values: Values;
  ignored: IgnoredSetting[];
}

/** A top-level setting of a config file, in file order (a repeated key appears twice). */
interface ConfigEntry {
  key: string;
  value: unknown;
  line: number;
}

/** The file's top-level settings in order; a JSON key twice in one object is refused by the JSON scan. */
function configEntries(path: string, text: string, isJson: boolean): ConfigEntry[] {
  if (isJson) {
    const record = settingsObject(path, parseJsonFile("--config", path, text));
    const entries: ConfigEntry[] = [];
    scanJsonKeys(text, (k) => {
      if (k.depth === 1) entries.push({ key: k.key, value: record[k.key], line: lineColumn(text, k.offset).line });
      return false;
    });
    return entries;
  }
  // uniqueKeys off: a key given twice must reach the spelling check below, which names both lines.
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  if (doc.errors.length > 0) throw parseFailure("--config", path, "YAML", doc.errors[0]);
  settingsObject(path, doc.toJS());
  if (!isMap(doc.contents)) return [];
  return doc.contents.items.map((pair) => ({
    key: String(isScalar(pair.key) ? pair.key.value : pair.key),
    value: isNode(pair.value) ? pair.value.toJS(doc) : pair.value,
    line: isNode(pair.key) && pair.key.range ? lines.linePos(pair.key.range[0]).line : 0,
  }));
}

function settingsObject(path: string, raw: unknown): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new InputError("--config", path, "must hold an object of settings");
  return raw as Record<string, unknown>;
}

/** Refuses a flag set twice, in any of its spellings (`tp-size`, `tp_size`, `tp`, `tensor-parallel-size`). */
function checkSpelledOnce(path: string, seen: Map<string, ConfigEntry>, canonical: string, entry: ConfigEntry) {
  const first = seen.get(canonical);
  if (first === undefined) {
    seen.set(canonical, entry);
    return;
  }
  const show = (e: ConfigEntry) => `${e.key}: ${JSON.stringify(e.value)} on line ${e.line}`;
  throw new DuplicateKeyError(
    entry.key,
    entry.value,
    `sets --${canonical} again (${show(first)} and ${show(entry)} of ${path}): a setting given twice is ambiguous, ` +
      "so neither is taken; keep one",
    { file: path, flag: canonical, first: { ...first }, second: { ...entry } },
  );
}

/** `path` may be `-` (standard input, read as YAML, which also reads JSON). */
export async function readConfigFile(path: string, stdin?: InputStream): Promise<ConfigFileValues> {
  const text = await readTextInput("--config", path, stdin);
  const entries = configEntries(path, text, /\.json$/i.test(path));
  const values: Values = {};
  const ignored: IgnoredSetting[] = [];
  const unknown: UnknownKey[] = [];
  const seen = new Map<string, ConfigEntry>();
  for (const entry of entries) {
    const { key, value } = entry;
    const name = key
      .replace(/^-+/, "")
      .replace(/_/g, "-")
      .replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (name === "config" || name === "help")
      throw new InputError(key, value, `cannot be set in a config file (${path})`, { file: path });
    const sglang = sglangFlag(name);
    const dsv4Name = sglang ? dsv4FlagOf(sglang) : Object.hasOwn(ALL_FLAGS, name) ? name : null;
    if (dsv4Name === null && !sglang) {
      unknown.push({ key, value, suggestion: closestMatch(name, [...Object.keys(ALL_FLAGS), ...SGLANG_FLAG_NAMES]) });
      continue;
    }
    checkSpelledOnce(path, seen, sglang ? sglang.name : dsv4Name!, entry);
    if (isUnset(value)) {
      // An explicit `None` algorithm turns speculative decoding off; left out, check's default run applies.
      if (dsv4Name === "speculative-algorithm") values[dsv4Name] = "none";
      continue;
    }
    if (dsv4Name !== null) values[dsv4Name] = configValue(path, key, dsv4Name, value);
    else ignored.push({ name: key, value: negated(sglang!, name, value), effect: effectOf(sglang!) });
  }
  if (unknown.length > 0) throw unknownKeys(path, unknown);
  return { values, ignored };
}

function negated(flag: SglangFlag, name: string, value: unknown): unknown {
  return name === `no-${flag.name}` && typeof value === "boolean" ? !value : value;
}

function unknownKeys(path: string, unknown: readonly UnknownKey[]): InputError {
  const [first, ...others] = unknown;
  const listed = others.map((u) => (u.suggestion === null ? u.key : `${u.key} (did you mean ${u.suggestion}?)`));
  const also = others.length === 0 ? "" : `; ${others.length} more unknown: ${listed.join(", ")}`;
  return new InputError(first!.key, first!.value, `is not a setting of dsv4-kv check or SGLang (in ${path})${also}`, {
    file: path,
    unknownKeys: unknown.map((u) => u.key),
    suggestions: Object.fromEntries(unknown.filter((u) => u.suggestion !== null).map((u) => [u.key, u.suggestion])),
    ...(first!.suggestion === null ? {} : { suggestion: first!.suggestion }),
  });
}

/** A config value is typed by its file (YAML/JSON): checked like the flag, but never coerced from a string. */
function configValue(path: string, key: string, dsv4Name: string, value: unknown) {
  const spec = ALL_FLAGS[dsv4Name]!;
  try {
    return flagValueFromData(key, spec, value)!;
  } catch (error) {
    if (!UsageError.isInstance(error)) throw error;
    throw new InputError(error.field, error.value, `${error.rule} (in ${path})`, { ...error.params, file: path });
  }
}
