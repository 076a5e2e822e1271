/**
 * `dsv4-kv check --against-log FILE`, the CLI side: read the log (server-config parses it), and turn what it shows
 * into check values. Its `server_args` keys (snake_case) go through the SGLang flag table as a config file's do:
 * KV-relevant ones become check values, the others are ignored (the unmodelled ones listed); its SGLANG_*
 * environment gives the switches. Without a server_args line, the launch command's flags are read instead. The
 * KV budget defaults to the one the log printed, and the sizing to SGLang's arithmetic.
 */
import { stat } from "node:fs/promises";
import {
  type DetectedPlatform,
  type ParsedSglangLog,
  type ParsedSglangLogFile,
  type SglangFlag,
  detectPlatform,
  parseSglangLog,
  resolveModelName,
} from "@dsv4-kv/server-config";
import { InputError, UsageError } from "../commands/args.js";
import { readTextInput } from "../commands/input.js";
import type { InputStream } from "../commands/registry.js";
import { serverSetting, settingValue, unsetValue } from "./server-settings.js";
import { type IgnoredSetting, type Values, launchEnv, parseCheckWords, splitLaunchCommand } from "./launch.js";

const GIB = 2 ** 30;
const FLAG = "--against-log";

/** One section of the log (one server start) as check input. */
export interface LogInput {
  path: string;
  parsed: ParsedSglangLog;
  /** The platform the section's server ran on, and why (its rules and pools apply). */
  platform: DetectedPlatform;
  /** Check values from server_args (or the launch command's flags). */
  values: Values;
  ignored: IgnoredSetting[];
  /** The SGLANG_* switches the log shows (they replace the process environment's). */
  env: Record<string, string>;
  /** The KV budget per worker the log printed (its first memory calculation), in bytes; null when none. */
  budgetBytes: number | null;
  /** What was read from where, for the text report. */
  summary: string[];
}

/** A log file: every section as check input, and the file's parse (skipped lines included). */
export interface LogFileInput {
  path: string;
  file: ParsedSglangLogFile;
  sections: LogInput[];
}

/** Reads and parses FILE; a log server-config refuses keeps its code (SGLANG_LOG) and names the file. */
export async function readAgainstLog(path: string, stdin?: InputStream): Promise<LogFileInput> {
  const text = await readTextInput(FLAG, path, stdin);
  const file = parseSglangLog(text);
  const sections: LogInput[] = [];
  for (const parsed of file.sections) sections.push(await sectionInput(path, parsed));
  return { path, file, sections };
}

async function sectionInput(path: string, parsed: ParsedSglangLog): Promise<LogInput> {
  const platform = detectPlatform(parsed);
  const input: LogInput = { path, parsed, platform, values: {}, ignored: [], env: {}, budgetBytes: null, summary: [] };
  if (parsed.serverArgs !== null) await readServerArgs(input, parsed.serverArgs);
  else if (parsed.launchCommand !== null) await readLaunchCommand(input, parsed.launchCommand);
  else input.summary.push("no server_args line and no launch command: the arguments are the flags' and defaults");
  const env = launchEnv(parsed.env);
  input.env = env.honoured;
  input.ignored.push(...env.ignored.filter((i) => i.name.startsWith("SGLANG_")));
  const switches = Object.keys(env.honoured);
  if (switches.length > 0) input.summary.push(`environment switches from the log: ${switches.join(", ")}`);
  input.budgetBytes = loggedBudgetBytes(parsed);
  if (platform.platform !== "cuda" && input.values.platform === undefined) {
    // The comparison prints the platform and its evidence; the check takes its rules and pools.
    input.values.platform = platform.platform;
  }
  return input;
}

const isSet = (v: unknown) =>
  v !== null && v !== false && v !== "" && !(Array.isArray(v) && v.length === 0) && !isEmptyObject(v);
const isEmptyObject = (v: unknown) => typeof v === "object" && v !== null && Object.keys(v).length === 0;

async function readServerArgs(input: LogInput, args: Readonly<Record<string, unknown>>): Promise<void> {
  const line = input.parsed.serverArgsLine;
  const unknown: string[] = [];
  let plain = 0;
  let read = 0;
  for (const [key, value] of Object.entries(args)) {
    const { sglang, dsv4Name } = serverSetting(key.replace(/_/g, "-"), false) ?? { sglang: undefined, dsv4Name: null };
    if (!sglang) {
      if (isSet(value) && !key.startsWith("_")) unknown.push(key);
      continue;
    }
    if (dsv4Name === "config") continue;
    if (dsv4Name === null) {
      if (sglang.effect === "unmodelled" && isSet(value)) input.ignored.push(ignoredEntry(sglang, key, value));
      else plain++;
      continue;
    }
    // None leaves the setting unset, as in a config file; a None algorithm means the server ran without drafts.
    if (value === null) {
      if (unsetValue(dsv4Name) !== undefined) input.values[dsv4Name] = unsetValue(dsv4Name);
      continue;
    }
    const where = { file: input.path, line: input.parsed.serverArgsLine };
    input.values[dsv4Name] = settingValue(`server_args.${key}`, dsv4Name, value, where);
    read++;
  }
  if (typeof input.values.model === "string") input.values.model = await localModel(input, input.values.model);
  if (unknown.length > 0)
    input.ignored.push({
      name: `server_args: ${unknown.length} key(s) not in dsv4-kv's SGLang flag table`,
      value: unknown,
      effect: "unmodelled",
    });
  input.summary.push(
    `server_args (line ${line}, ${FORMS[input.parsed.serverArgsForm ?? "repr"]} form): ` +
      `${read} KV-relevant read, ${plain} without effect on KV state, ${unknown.length} set and not in the flag table`,
  );
}

const FORMS = {
  repr: "ServerArgs(…)",
  dict: "dict",
  fragment: "cut ServerArgs(…) pieces: only their readable pairs",
};

function ignoredEntry(flag: SglangFlag, key: string, value: unknown): IgnoredSetting {
  return { name: `server_args.${key}`, value, effect: flag.effect === "unmodelled" ? "unmodelled" : "ignored" };
}

/**
 * The server's model path names a folder on the server, rarely here: when it does not exist here, its last
 * component (the checkpoint's name, e.g. DeepSeek-V4-Flash) is resolved as a name instead (--model overrides).
 */
async function localModel(input: LogInput, path: string): Promise<string> {
  if (!path.includes("/") && knownName(path)) return path;
  if (path.split("/").length === 2 && !path.startsWith("/") && knownName(path)) return path;
  const exists = await stat(path).then(
    () => true,
    () => false,
  );
  if (exists) return path;
  const name = nameFromPath(path);
  input.summary.push(
    name.how === "component"
      ? `model path ${path} is not on this machine: resolved by its name ${name.name} (--model overrides)`
      : `model path ${path} is not on this machine and names no preset: read as ${name.name}, the preset its ` +
          "name points to (--model overrides)",
  );
  return name.name;
}

const knownName = (name: string) => {
  try {
    resolveModelName(name, "--model");
    return true;
  } catch {
    return false;
  }
};

/** The preset a server's model path names: a component that is a preset name, else the family it spells. */
function nameFromPath(path: string): { name: string; how: "component" | "family" } {
  const parts = path.split("/").filter((p) => p !== "");
  for (const part of [...parts].reverse()) {
    for (const candidate of [part, part.replace(/_.*$/, "")])
      if (knownName(candidate)) return { name: candidate, how: "component" };
  }
  return { name: /v4[-_.]?pro/i.test(path) ? "DeepSeek-V4-Pro" : DEFAULT_LOG_MODEL, how: "family" };
}

const DEFAULT_LOG_MODEL = "DeepSeek-V4-Flash";

/**
 * The launch command's flags. A log shows what ran, often cut or with flags of another version: a flag the table
 * does not know (or a value it refuses) is left out and listed, never a reason to refuse the log.
 */
async function readLaunchCommand(input: LogInput, words: readonly string[]): Promise<void> {
  const launch = splitLaunchCommand(words);
  if (launch === null) return;
  let serverWords = [...launch.serverWords];
  for (let attempt = 0; attempt <= launch.serverWords.length; attempt++) {
    try {
      const server = parseCheckWords(serverWords);
      Object.assign(input.values, server.values);
      input.ignored.push(...server.ignored);
      break;
    } catch (error) {
      if (!UsageError.isInstance(error) && !InputError.isInstance(error)) throw error;
      const at = serverWords.findIndex((w) => w === error.field || w.startsWith(`${error.field}=`));
      if (at < 0) throw error;
      const takesValue =
        at + 1 < serverWords.length && !serverWords[at + 1]!.startsWith("--") && !serverWords[at]!.includes("=");
      const dropped = serverWords.slice(at, takesValue ? at + 2 : at + 1);
      serverWords = [...serverWords.slice(0, at), ...serverWords.slice(at + dropped.length)];
      input.ignored.push({ name: `launch command: ${dropped.join(" ")}`, value: error.rule, effect: "unmodelled" });
    }
  }
  if (typeof input.values.model === "string") input.values.model = await localModel(input, input.values.model);
  input.summary.push(`no server_args line: the arguments are the launch command's (${launch.program})`);
}

/** The budget the lowest rank printed first (ranks print in any order; a later line may be a draft's or a re-run's). */
function loggedBudgetBytes(parsed: ParsedSglangLog): number | null {
  const memory = parsed.sizingLines.filter((s) => s.kind === "memory-calculation");
  const rankOf = (s: (typeof memory)[number]) => s.rank?.tp ?? s.rank?.dp ?? -1;
  const lowest = Math.min(...memory.map(rankOf));
  const first = memory.find((s) => rankOf(s) === lowest);
  const field = first?.fields.available_bytes ?? first?.fields.raw_available_bytes;
  if (field === undefined || typeof field === "string" || field.unit !== "GB" || field.value <= 0) return null;
  if (field.truncated) return null;
  return Math.round(field.value * GIB);
}
