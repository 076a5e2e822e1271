/**
 * `--config FILE`: SGLang's config format (a YAML or JSON object of server flags, keys with dashes or underscores,
 * `null`/`None` meaning unset) plus dsv4-kv's own options. Every unknown key is reported in one error.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { type OverriddenSetting, SGLANG_FLAG_NAMES, type SglangFlag } from "@dsv4-kv/server-config";
import { LineCounter, isMap, isNode, isScalar, parseDocument } from "yaml";
import { InputError } from "../commands/args.js";
import { readTextInput } from "../commands/input.js";
import { DuplicateKeyError, lineColumn, parseJsonFile, scanJsonKeys } from "../commands/json-keys.js";
import type { InputStream } from "../commands/registry.js";
import { ALL_FLAGS } from "./flags.js";
import { type IgnoredSetting, type Values, effectOf } from "./launch.js";
import { serverSetting, settingValue, unsetValue } from "./server-settings.js";

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
  /** Settings the file gives more than once where SGLang's loader takes one: which one won. */
  overridden: OverriddenSetting[];
  /** Where each value came from (key, value, line), so a flag that wins over it can say so. */
  sources: Record<string, SettingSource>;
}

/** One place a setting was given (the report's `overridden[].won` / `lost`). */
export type SettingSource = OverriddenSetting["won"];

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

/** SGLang's own spellings of a flag: `--KEY` as its argparse parser registers it (no snake_case form). */
function isSglangSpelling(flag: SglangFlag | undefined, key: string): boolean {
  return flag !== undefined && (key === flag.name || flag.aliases.includes(key) || key === `no-${flag.name}`);
}

const source = (e: ConfigEntry): SettingSource => ({ source: "config", name: e.key, value: e.value, line: e.line });

/**
 * A YAML key given twice keeps its last value at its first place, as PyYAML's `safe_load` builds the dict SGLang
 * reads (docs/reference/config-file-duplicates.md §2). JSON duplicates never get here: the JSON scan refuses them.
 */
function lastValueOfEachKey(entries: readonly ConfigEntry[], overridden: OverriddenSetting[], flagOf: FlagOf) {
  const byKey = new Map<string, ConfigEntry[]>();
  for (const entry of entries) byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
  const out: ConfigEntry[] = [];
  for (const same of byKey.values()) {
    const won = same[same.length - 1]!;
    out.push(won);
    if (same.length > 1)
      overridden.push({
        flag: flagOf(won.key),
        won: source(won),
        lost: same.slice(0, -1).map(source),
        rule: "yaml-repeated-key",
      });
  }
  return out;
}

type FlagOf = (key: string) => string;

/**
 * One flag set by two keys. SGLang passes each key to argparse as `--KEY`, in file order: two of its own spellings
 * (`tp` and `tensor-parallel-size`) both parse and the later wins; any other spelling (`tp_size`) is an argument
 * argparse does not know, so SGLang refuses the file, and so do we, naming both. A JSON config file SGLang does not
 * read at all: two keys for one flag there are refused too (docs/reference/config-file-duplicates.md §3, §4, §6).
 */
function resolveSpellings(path: string, isJson: boolean, group: readonly Setting[], overridden: OverriddenSetting[]) {
  const won = group[group.length - 1]!;
  if (group.length === 1) return won;
  const refused = isJson ? group[1] : group.find((s) => !isSglangSpelling(s.sglang, s.entry.key));
  if (refused !== undefined) {
    const first = group[0]!.entry;
    const second = refused === group[0] ? group[1]!.entry : refused.entry;
    const show = (e: ConfigEntry) => `${e.key}: ${JSON.stringify(e.value)} on line ${e.line}`;
    throw new DuplicateKeyError(
      second.key,
      second.value,
      `sets --${won.canonical} again (${show(first)} and ${show(second)} of ${path}): a setting given twice is ` +
        "ambiguous, so neither is taken; keep one",
      { file: path, flag: won.canonical, first: { ...first }, second: { ...second } },
    );
  }
  overridden.push({
    flag: `--${won.dsv4Name ?? won.canonical}`,
    won: source(won.entry),
    lost: group.slice(0, -1).map((s) => source(s.entry)),
    rule: "later-spelling",
  });
  return won;
}

/** `tp_size`, `--tpSize` → `tp-size`: a key as a flag name. */
const keyName = (key: string) =>
  key
    .replace(/^-+/, "")
    .replace(/_/g, "-")
    .replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A config key read: its SGLang flag (if any), the check flag it sets (if any) and the flag's canonical name. */
interface Setting {
  entry: ConfigEntry;
  name: string;
  sglang: SglangFlag | undefined;
  dsv4Name: string | null;
  canonical: string;
}

/** `path` may be `-` (standard input, read as YAML, which also reads JSON). */
export async function readConfigFile(path: string, stdin?: InputStream): Promise<ConfigFileValues> {
  const text = await readTextInput("--config", path, stdin);
  const isJson = /\.json$/i.test(path);
  const overridden: OverriddenSetting[] = [];
  const unknown: UnknownKey[] = [];
  const settingOf = (entry: ConfigEntry): Setting | null => {
    const name = keyName(entry.key);
    if (name === "config" || name === "help")
      throw new InputError(entry.key, entry.value, `cannot be set in a config file (${path})`, { file: path });
    const setting = serverSetting(name, true);
    if (setting === null) return null;
    const { sglang, dsv4Name } = setting;
    return { entry, name, sglang, dsv4Name, canonical: sglang ? sglang.name : dsv4Name! };
  };
  const flagOf = (key: string) => {
    const s = settingOf({ key, value: null, line: 0 });
    return s === null ? key : `--${s.dsv4Name ?? s.canonical}`;
  };
  const entries = lastValueOfEachKey(configEntries(path, text, isJson), overridden, flagOf);
  const groups = new Map<string, Setting[]>();
  for (const entry of entries) {
    const setting = settingOf(entry);
    if (setting === null) {
      const suggestion = closestMatch(keyName(entry.key), [...Object.keys(ALL_FLAGS), ...SGLANG_FLAG_NAMES]);
      unknown.push({ key: entry.key, value: entry.value, suggestion });
      continue;
    }
    groups.set(setting.canonical, [...(groups.get(setting.canonical) ?? []), setting]);
  }
  const chosen = [...groups.values()].map((group) => resolveSpellings(path, isJson, group, overridden));
  const values: Values = {};
  const ignored: IgnoredSetting[] = [];
  const sources: Record<string, SettingSource> = {};
  for (const { entry, name, sglang, dsv4Name } of chosen) {
    const { key, value } = entry;
    if (isUnset(value)) {
      // An explicit `None` algorithm turns speculative decoding off; left out, check's default run applies.
      if (unsetValue(dsv4Name) !== undefined) values[dsv4Name!] = unsetValue(dsv4Name);
      continue;
    }
    if (dsv4Name !== null) {
      values[dsv4Name] = settingValue(key, dsv4Name, value, { file: path });
      sources[dsv4Name] = source(entry);
    } else ignored.push({ name: key, value: negated(sglang!, name, value), effect: effectOf(sglang!) });
  }
  if (unknown.length > 0) throw unknownKeys(path, unknown);
  return { values, ignored, overridden, sources };
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
