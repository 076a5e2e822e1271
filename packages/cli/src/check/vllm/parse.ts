/**
 * `check --engine vllm` input as operators have it: dsv4-kv options, vLLM flags in any spelling vLLM's parser takes
 * (`-tp`, `--max_model_len`, an unambiguous prefix, `--no-NAME`, `--speculative-config.method mtp`), and a pasted
 * `vllm serve MODEL …` command with its `NAME=value` environment. KV flags become values; the others are listed
 * as ignored; an unknown flag is refused with a suggestion.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import {
  VLLM_ENV_SWITCHES,
  VLLM_FLAG_SPELLINGS,
  type VllmArgField,
  type VllmFlagLookup,
  type VllmValueForm,
  vllmFlagByPrefix,
} from "@dsv4-kv/server-config";
import { UsageError } from "../../commands/args.js";
import { flagValueFromText } from "../../commands/flags.js";
import { normaliseWords } from "../invisible.js";
import { type IgnoredSetting, tokenizeCommand } from "../launch.js";
import { VLLM_ALL_FLAGS, VLLM_OPTIONS, vllmFlagSpec } from "./flags.js";

export type VllmValue = string | number | boolean;

export interface VllmParsed {
  /** vLLM's KV arguments, by field. */
  args: Partial<Record<VllmArgField, VllmValue>>;
  /** dsv4-kv's own options (`json`, `vllm-version`, …). */
  options: Record<string, VllmValue>;
  ignored: IgnoredSetting[];
  /** How each field's flag was typed, for errors and the report. */
  spelling: Partial<Record<VllmArgField, string>>;
}

const isOptionWord = (w: string) => w.startsWith("-") && !/^-\d/.test(w) && w !== "-";

/** vLLM's human-readable integers: digits, or a decimal `k` suffix (the one suffix every version reads alike). */
function humanInt(flag: string, raw: string, min: number, max: number): number {
  const k = /^(\d+(?:\.\d+)?)k$/.exec(raw);
  if (k)
    return flagValueFromText(
      flag,
      { type: "int", min, max, help: "" },
      String(Math.trunc(Number(k[1]) * 1000)),
    ) as number;
  if (/^\d+(?:\.\d+)?[A-Za-z]+$/.test(raw))
    throw new UsageError(
      flag,
      raw,
      "takes digits or a k suffix (128k); other suffixes mean different sizes in different vLLM versions: write the number out",
    );
  return flagValueFromText(flag, { type: "int", min, max, help: "" }, raw) as number;
}

function parseValue(flag: string, found: Extract<VllmFlagLookup, { kind: "kv" }>, raw: string): VllmValue {
  const spec = vllmFlagSpec(found.entry);
  if (found.entry.form === "humanInt" && spec.type === "int") return humanInt(flag, raw, spec.min, spec.max);
  return flagValueFromText(flag, spec, raw) as VllmValue;
}

/** One value word of a flag: the inline `=value`, else the next word unless it is a flag. */
function valueWord(flag: string, inline: string | undefined, words: string[], i: { at: number }): string {
  if (inline !== undefined) return inline;
  const next = words[i.at + 1];
  if (next === undefined || isOptionWord(next)) throw new UsageError(flag, undefined, "needs a value");
  i.at++;
  return next;
}

function otherValue(flag: string, form: VllmValueForm, inline: string | undefined, words: string[], i: { at: number }) {
  if (form === "bool") {
    if (inline !== undefined) throw new UsageError(flag, inline, "is a switch and takes no value");
    return !flag.startsWith("--no-");
  }
  if (form !== "list" || inline !== undefined) return valueWord(flag, inline, words, i);
  const items: string[] = [];
  while (words[i.at + 1] !== undefined && !isOptionWord(words[i.at + 1]!)) items.push(words[++i.at]!);
  return items;
}

function lookup(name: string): { found: VllmFlagLookup; negated: boolean } {
  const direct = vllmFlagByPrefix(name);
  if (direct.match) return { found: direct.match, negated: false };
  const positive = name.startsWith("--no-") || name.startsWith("--no_") ? `--${name.slice(5)}` : null;
  const neg = positive ? vllmFlagByPrefix(positive) : null;
  if (neg?.match && neg.match.entry.form === "bool") return { found: neg.match, negated: true };
  if (direct.candidates.length > 1)
    throw new UsageError(name, undefined, `is ambiguous: it could be ${direct.candidates.join(", ")}`, {
      candidates: direct.candidates,
    });
  const suggestion = closestMatch(name, [...VLLM_FLAG_SPELLINGS, ...Object.keys(VLLM_OPTIONS).map((o) => `--${o}`)]);
  throw new UsageError(
    name,
    undefined,
    "is not a flag of dsv4-kv check --engine vllm or a vLLM server flag dsv4-kv knows",
    suggestion === null ? undefined : { suggestion },
  );
}

/** `--json-arg.key.sub value`: sets one key of a JSON argument (vLLM's FlexibleArgumentParser). */
function dottedArg(
  word: string,
  inline: string | undefined,
  words: string[],
  i: { at: number },
  dicts: Map<string, Record<string, unknown>>,
) {
  const [head, ...path] = word.split(".");
  const raw = valueWord(word, inline, words, i);
  const list = path[path.length - 1]!.endsWith("+");
  if (list) path[path.length - 1] = path[path.length - 1]!.slice(0, -1);
  let value: unknown = list ? raw.split(",") : raw;
  if (!list) {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  const dict = dicts.get(head!) ?? {};
  let at: Record<string, unknown> = dict;
  for (const key of path.slice(0, -1)) {
    if (typeof at[key] !== "object" || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = value;
  dicts.set(head!, dict);
}

/**
 * Parses vLLM flags and dsv4-kv options (`options` false: only vLLM flags, as after `--`). The first word that is
 * no flag or value is the model (vLLM's positional MODEL).
 */
export function parseVllmWords(given: readonly string[], options: boolean, into?: VllmParsed): VllmParsed {
  const words = normaliseWords("flags", given);
  const out: VllmParsed = into ?? { args: {}, options: {}, ignored: [], spelling: {} };
  const dicts = new Map<string, Record<string, unknown>>();
  const i = { at: 0 };
  for (; i.at < words.length; i.at++) {
    const word = words[i.at]!;
    if (!isOptionWord(word)) {
      if (out.args.model !== undefined && out.spelling.model === "MODEL")
        throw new UsageError(word, undefined, "is a second positional argument: vllm serve takes one MODEL");
      out.args.model = word;
      out.spelling.model = "MODEL";
      continue;
    }
    const eq = word.indexOf("=");
    const name = eq < 0 ? word : word.slice(0, eq);
    const inline = eq < 0 ? undefined : word.slice(eq + 1);
    if (name.includes(".")) {
      dottedArg(name, inline, words, i, dicts);
      continue;
    }
    const option = name.startsWith("--") ? name.slice(2) : null;
    if (options && option !== null && Object.hasOwn(VLLM_OPTIONS, option)) {
      const spec = VLLM_ALL_FLAGS[option]!;
      out.options[option] =
        spec.type === "bool"
          ? (otherValue(name, "bool", inline, words, i) as boolean)
          : (flagValueFromText(name, spec, valueWord(name, inline, words, i)) as VllmValue);
      continue;
    }
    readFlag(name, inline, words, i, out);
  }
  for (const [head, dict] of dicts) readFlag(head, JSON.stringify(dict), [], { at: 0 }, out, `${head}.…`);
  return out;
}

function readFlag(
  name: string,
  inline: string | undefined,
  words: string[],
  i: { at: number },
  out: VllmParsed,
  typed = name,
) {
  const { found, negated } = lookup(name);
  if (found.kind === "other") {
    const value = otherValue(name, found.entry.form, inline, words, i);
    out.ignored.push({ name: typed, value, effect: found.entry.effect });
    return;
  }
  if (found.entry.form === "bool") {
    if (inline !== undefined) throw new UsageError(name, inline, "is a switch and takes no value");
    out.args[found.field] = !negated;
  } else {
    out.args[found.field] = parseValue(name, found, valueWord(name, inline, words, i));
  }
  out.spelling[found.field] = typed;
}

/** The words after `--`: a `vllm serve` (or OpenAI API server) command with its environment, or more flags. */
export interface VllmLaunch {
  env: Record<string, string>;
  program: string;
  serverWords: string[];
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const PYTHON = /^python[0-9.]*$/;

export function splitVllmLaunch(rest: readonly string[]): VllmLaunch | null {
  const words =
    rest.length === 1 && /[\s\u00a0]/.test(rest[0]!)
      ? tokenizeCommand(rest[0]!)
      : normaliseWords("launch command", rest);
  if (words.length === 0 || isOptionWord(words[0]!)) return null;
  const env: Record<string, string> = {};
  let at = 0;
  for (; at < words.length; at++) {
    const m = ASSIGNMENT.exec(words[at]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  const head = words[at];
  if (head !== undefined && head.split("/").pop() === "vllm" && words[at + 1] === "serve")
    return { env, program: "vllm serve", serverWords: words.slice(at + 2) };
  if (
    head !== undefined &&
    PYTHON.test(head.split("/").pop()!) &&
    words[at + 1] === "-m" &&
    words[at + 2] === "vllm.entrypoints.openai.api_server"
  )
    return { env, program: `${head} -m vllm.entrypoints.openai.api_server`, serverWords: words.slice(at + 3) };
  throw new UsageError(
    "--",
    words.slice(at, at + 3).join(" ") || words.join(" "),
    "is not a vLLM launch command: expected `vllm serve MODEL …` or `python -m vllm.entrypoints.openai.api_server …` " +
      "(optionally after NAME=value assignments), or more flags",
  );
}

/** A launch environment's switches: the modelled ones become values, the rest are listed as ignored. */
export function readVllmEnv(env: Readonly<Record<string, string>>, out: VllmParsed): void {
  for (const [name, raw] of Object.entries(env)) {
    const field = VLLM_ENV_SWITCHES[name];
    if (field === undefined) {
      out.ignored.push({ name, value: raw, effect: "ignored" });
      continue;
    }
    const on = /^(1|true)$/i.test(raw);
    if (!on && !/^(0|false)$/i.test(raw)) throw new UsageError(name, raw, "must be 1, 0, true or false");
    out.args[field] = on;
    out.spelling[field] = name;
  }
}
