/**
 * `dsv4-kv check` input as operators have it: dsv4-kv options, SGLang server flags in any spelling SGLang accepts,
 * and a whole pasted launch command (`sglang serve …`, `python -m sglang.launch_server …`) with leading `NAME=value`
 * assignments. Server flags come from server-config's SGLang flag table: KV-relevant ones become check values,
 * the rest are accepted and returned as ignored, an unknown one is refused with a suggestion.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { SGLANG_FLAG_NAMES, type SglangFlag, sglangFlag, shellWords } from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";
import {
  type FlagSpec,
  type FlagValueWords,
  type FlagWalk,
  flagValueFromText,
  walkFlagWords,
} from "../commands/flags.js";
import { ALL_FLAGS, ENV_SWITCHES } from "./flags.js";
import { normaliseCommandText, normaliseWords } from "./invisible.js";

export type Value = string | boolean | number | number[];
export type Values = Record<string, Value | undefined>;

/** A setting accepted but not read: no effect on KV state, or one dsv4-kv does not model. */
export interface IgnoredSetting {
  /** As typed: `--host`, a config key, or an environment name. */
  name: string;
  value: unknown;
  /** `unmodelled`: SGLang may change KV state with it; dsv4-kv does not model it. */
  effect: "ignored" | "unmodelled";
}

export interface ParsedWords {
  values: Values;
  ignored: IgnoredSetting[];
  /** How each value's flag was typed (`model` → `--model-path`), for errors. */
  spelling: Record<string, string>;
}

/** The dsv4-kv flag a KV-relevant SGLang flag sets: its ServerArgs field in kebab-case (`model-path` → `model`). */
export function dsv4FlagOf(flag: SglangFlag): string | null {
  if (flag.effect === "config") return "config";
  if (flag.effect !== "kv" || flag.field === null) return null;
  return flag.field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Every flag spelling check accepts, for suggestions. */
function knownNames(): string[] {
  return [...new Set([...Object.keys(ALL_FLAGS), ...SGLANG_FLAG_NAMES])];
}

export function unknownFlag(flag: string, name: string): UsageError {
  const suggestion = closestMatch(name, knownNames());
  return new UsageError(
    flag,
    undefined,
    "is not a flag of dsv4-kv check or an SGLang server flag",
    suggestion === null ? undefined : { suggestion: `--${suggestion}` },
  );
}

const isFlagWord = (word: string) => word.startsWith("--");
const INT = /^-?\d+$/;
const FLOAT = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * Parses flags (dsv4-kv's and SGLang's, `--flag value`, `--flag=value`, switches, `--no-X` for SGLang's
 * optional booleans). A later occurrence wins, as in argparse.
 */
export function parseCheckWords(given: readonly string[]): ParsedWords {
  const words = normaliseWords("flags", given);
  const values: Values = {};
  const ignored: IgnoredSetting[] = [];
  const spelling: Record<string, string> = {};
  walkFlagWords(words, CHECK_WALK, ({ flag, name, inline }, next) => {
    const sglang = sglangFlag(name);
    const dsv4Name = sglang ? dsv4FlagOf(sglang) : Object.hasOwn(ALL_FLAGS, name) ? name : null;
    if (dsv4Name !== null) {
      values[dsv4Name] = dsv4Value(flag, ALL_FLAGS[dsv4Name]!, inline, next);
      spelling[dsv4Name] = flag;
      return;
    }
    if (!sglang) throw unknownFlag(flag, name);
    ignored.push({ name: flag, value: ignoredValue(flag, name, sglang, inline, next), effect: effectOf(sglang) });
  });
  return { values, ignored, spelling };
}

/** check reads every word as a flag: `--` alone is refused (a launch command's `--` is split off before). */
const CHECK_WALK: FlagWalk = {
  notAFlag: {
    refuses: (word) => !isFlagWord(word) || word === "--" || word.startsWith("--="),
    rule: "is not a flag (flags start with --)",
  },
  dashDashEnds: false,
};

function takeValue(flag: string, inline: string | undefined, next: FlagValueWords, what: string): string {
  const value = inline ?? next.next();
  if (value === undefined) throw new UsageError(flag, undefined, `needs a value (${what})`);
  return value;
}

function dsv4Value(flag: string, spec: FlagSpec, inline: string | undefined, next: FlagValueWords): Value {
  if (spec.type === "bool") {
    if (inline !== undefined) throw new UsageError(flag, inline, "is a switch and takes no value");
    return true;
  }
  return flagValueFromText(flag, spec, takeValue(flag, inline, next, spec.arg ?? kindWord(spec)));
}

/** An SGLang flag check does not read: its value as SGLang's parser would take it, kept for the report. */
function ignoredValue(flag: string, name: string, spec: SglangFlag, inline: string | undefined, next: FlagValueWords) {
  switch (spec.kind) {
    case "bool":
    case "optbool":
      if (inline !== undefined) throw new UsageError(flag, inline, "is a switch and takes no value");
      return name !== `no-${spec.name}`;
    case "int":
    case "float": {
      const raw = takeValue(flag, inline, next, spec.kind === "int" ? "an integer" : "a number");
      if (!(spec.kind === "int" ? INT : FLOAT).test(raw))
        throw new UsageError(flag, raw, `must be ${spec.kind === "int" ? "an integer" : "a decimal number"}`);
      return Number(raw);
    }
    case "list": {
      if (inline !== undefined) return [inline];
      const items = next.all();
      if (items.length === 0 && spec.nargs === "+") throw new UsageError(flag, undefined, "needs one or more values");
      return items;
    }
    default: {
      if (spec.nargs === "?" && inline === undefined) return next.next() ?? "";
      return takeValue(flag, inline, next, "a value");
    }
  }
}

function kindWord(spec: FlagSpec): string {
  return spec.type === "int" || spec.type === "number" ? "N" : spec.type === "intList" ? "A,B,…" : "S";
}

export function effectOf(flag: SglangFlag): "ignored" | "unmodelled" {
  return flag.effect === "unmodelled" ? "unmodelled" : "ignored";
}

/** A launch command: its environment assignments and its server flags. */
export interface LaunchCommand {
  env: Record<string, string>;
  /** How it was started: `sglang serve` or `python -m sglang.launch_server`. */
  program: string;
  serverWords: string[];
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const PYTHON = /^python[0-9.]*$/;

/**
 * The words after `--`: a launch command, or (pnpm passes `--` through) more dsv4-kv/server flags. One word
 * holding blanks is a pasted command and is tokenised here.
 */
export function splitLaunchCommand(rest: readonly string[]): LaunchCommand | null {
  const split = launchWords(rest, isFlagWord);
  if (split === null) return null;
  const { env, words, at: i } = split;
  const head = words[i];
  let program: string | null = null;
  if (head === "sglang" && words[i + 1] === "serve") program = "sglang serve";
  else if (head !== undefined && PYTHON.test(head.split("/").pop()!) && words[i + 1] === "-m") {
    if (words[i + 2] === "sglang.launch_server") program = `${head} -m sglang.launch_server`;
  }
  if (program === null) {
    throw new UsageError(
      "--",
      words.slice(i, i + 3).join(" ") || words.join(" "),
      "is not an SGLang launch command: expected `sglang serve …` or `python -m sglang.launch_server …` " +
        "(optionally after NAME=value assignments), or more flags",
    );
  }
  const skip = program === "sglang serve" ? 2 : 3;
  return { env, program, serverWords: words.slice(i + skip) };
}

/**
 * The words after `--` as a command: one word holding blanks is a paste, split as a shell splits it; leading
 * `NAME=value` words are its environment, and `at` is the program's word. Null when it starts with a flag.
 */
export function launchWords(
  rest: readonly string[],
  isFlag: (word: string) => boolean,
): { env: Record<string, string>; words: string[]; at: number } | null {
  const words =
    rest.length === 1 && /[\s\u00a0]/.test(rest[0]!) ? tokenizeCommand(rest[0]!) : normaliseWords(FIELD, rest);
  if (words.length === 0 || isFlag(words[0]!)) return null;
  const env: Record<string, string> = {};
  let at = 0;
  for (; at < words.length; at++) {
    const m = ASSIGNMENT.exec(words[at]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  return { env, words, at };
}

/** The environment assignments of a launch command: the switches check models, and the rest as ignored. */
export function launchEnv(env: Readonly<Record<string, string>>): {
  honoured: Record<string, string>;
  ignored: IgnoredSetting[];
} {
  const honoured: Record<string, string> = {};
  const ignored: IgnoredSetting[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (Object.hasOwn(ENV_SWITCHES, name)) honoured[name] = value;
    else ignored.push({ name, value, effect: "ignored" });
  }
  return { honoured, ignored };
}

const FIELD = "launch command";
/**
 * A pasted command line split as a POSIX shell splits it (server-config's `shellWords`, strict: comments read, and
 * what needs a shell to run refused, naming the token). CRLF and Unicode blanks are normalised first.
 */
export function tokenizeCommand(pasted: string): string[] {
  const split = shellWords(normaliseCommandText(FIELD, pasted), "strict");
  if ("refused" in split) {
    const { token, why } = split.refused;
    throw new UsageError(FIELD, token, `cannot be read without a shell (${why}): write the value out`);
  }
  return split.words;
}
