/**
 * `parseSglangLog(text)`: what an SGLang server's start-up log says about its DSV4 sizing, read line by line in
 * SGLang's own formats (docs/reference/configurator-generations.md lists them with their upstream sources):
 *
 * - prefix `[YYYY-MM-DD HH:MM:SS TP0] ` / `[… DP1 TP1 EP1] ` (logging's prefix, ranks per process) or none;
 * - `DSV4 memory calculation: k=v, …` (the earliest spelling `DSv4 memory calculation`), `DSV4 pool sizes: …`,
 *   `DSV4 SWA sizing: mode=…, …`: comma-separated `key=value`, a GB figure printed `8.84 GB`;
 * - `Initialize DeepSeekV4TokenToKVPool with k=v k=v …`: blank-separated (Python's `f"{x=}"`);
 * - the scheduler's `max_total_num_tokens=…, chunked_prefill_size=…, …, available_gpu_mem=… GB`;
 * - `server_args=ServerArgs(…)` (the dataclass repr) or `server_args={…}` (a dict);
 * - environment lines `NAME=value` / `export NAME=value`, and a launch command (`sglang serve …`,
 *   `python -m sglang.launch_server …`, continued with `\`).
 *
 * Repeated lines stay in order (a re-sizing after a `max_total_tokens` cap, a draft worker's pool). A log that is
 * empty, has no DSV4 sizing line, or has a sizing or server_args line cut off or unreadable is refused with a
 * ServerConfigError (code SGLANG_LOG) naming the line: never a partial result. No Node built-ins: the text is given.
 */
import { ServerConfigError } from "../errors.js";
import { PythonLiteralError, type PythonValue, readPythonLiteral } from "./python-literal.js";
import { shellWords } from "./shell-words.js";
import type { LogRank, LoggedNumber, LoggedSizingLine, ParsedSglangLog } from "./types.js";

/** Largest log read (a start-up log is a few MB; a server that ran for days can be larger: pass its start). */
export const MAX_LOG_CHARS = 256 * 1024 * 1024;

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are control characters.
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
/** logging's prefix: date, time, then the process's ranks (`TP0`, `DP1 TP1 EP1`, `PP0 TP3`, …). */
const PREFIX = /\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)((?: [A-Z][A-Z_]*\d+)*)\] ?/g;
const RANK_TOKEN = /^([A-Z][A-Z_]*?)(\d+)$/;
const NUMBER = /^(-?\d+(?:\.(\d+))?(?:[eE][-+]?\d+)?)(?: ([A-Za-z]+))?$/;
const UNITS = new Set(["GB", "MB", "KB", "B"]);
const WORDS = new Set(["True", "False", "None"]);
const KEY_START = /(?:^|,\s*|\s+)([A-Za-z_][A-Za-z0-9_+]*)=/g;

interface SizingKind {
  kind: string;
  /** Finds the line's label; `fields` is what follows it. */
  match: RegExp;
  /** Keys SGLang always prints: a line without one is cut off or not SGLang's. */
  required: readonly (string | readonly string[])[];
  /** Keys whose value is text (a mode), not a number. */
  text?: readonly string[];
}

const SIZING_KINDS: readonly SizingKind[] = [
  {
    kind: "memory-calculation",
    match: /(DSV4 memory calculation|DSv4 memory calculation): /,
    required: [
      "bytes_per_full_token",
      ["available_bytes", "raw_available_bytes", "effective_available_bytes"],
      "full_token",
    ],
  },
  {
    kind: "pool-sizes",
    match: /(DSV4 pool sizes|DSv4 pool sizes): /,
    required: ["full", "swa", "c4", "c128", "c4_state", "c128_state"],
  },
  { kind: "swa-sizing", match: /(DSV4 SWA sizing): /, required: ["mode", "swa_tokens"], text: ["mode"] },
  {
    kind: "pool-init",
    match: /(Initialize [A-Za-z0-9_]*DeepSeekV4[A-Za-z0-9_]*Pool[A-Za-z0-9_]*) with /,
    required: ["max_num_reqs", "swa_size", "c4_size", "c128_size", "c4_state_pool_size", "c128_state_pool_size"],
  },
  { kind: "max-total-tokens", match: /()(?=max_total_num_tokens=)/, required: ["max_total_num_tokens"] },
];
const SIZING_KINDS_WITH_POOLS = new Set(["memory-calculation", "pool-sizes", "pool-init"]);

const SERVER_ARGS = /(?:^|\] |\s)server_args=/;
const ENV_LINE = /^(?:export\s+)?[A-Z][A-Z0-9_]*=/;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
/** A launch command: a shell-trace mark, assignments, nohup/exec/env, then `sglang serve` or `python -m …`. */
const LAUNCH_HEAD = new RegExp(
  String.raw`^(?:[$+#>]\s+)?(?:(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:nohup|exec|env)\s+)*` +
    String.raw`(?:sglang\s+serve|\S*python[0-9.]*\s+-m\s+sglang\.launch_server)(?:\s|$)`,
);

const fail = (line: number, value: unknown, rule: string, params: Record<string, unknown> = {}): never => {
  throw new ServerConfigError("SGLANG_LOG", `log line ${line}`, value, rule, { line, ...params });
};

/** Reads an SGLang start-up log; throws ServerConfigError (SGLANG_LOG) for one it cannot read whole. */
export function parseSglangLog(text: string): ParsedSglangLog {
  if (typeof text !== "string") throw new ServerConfigError("SGLANG_LOG", "log", text, "must be the log's text");
  if (text.length > MAX_LOG_CHARS)
    throw new ServerConfigError("SGLANG_LOG", "log", `${text.length} characters`, `must be at most ${MAX_LOG_CHARS}`);
  if (text.includes("\0")) throw new ServerConfigError("SGLANG_LOG", "log", "NUL byte", "is not text (binary data)");
  if (text.trim() === "") throw new ServerConfigError("SGLANG_LOG", "log", "", "is empty");
  const lines = text.replace(ANSI, "").split(/\r?\n|\r/);
  const sizingLines: LoggedSizingLine[] = [];
  const env: Record<string, string> = {};
  const launchEnv: Record<string, string> = {};
  let serverArgs: Record<string, unknown> | null = null;
  let serverArgsLine: number | null = null;
  let serverArgsForm: "repr" | "dict" | null = null;
  let launchCommand: string[] | null = null;
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!;
    const sizing = readSizingLine(raw, lineNo);
    if (sizing) {
      sizingLines.push(sizing);
      continue;
    }
    const args = SERVER_ARGS.exec(raw);
    if (args) {
      const read = readServerArgs(raw.slice(args.index + args[0].length), lineNo);
      if (serverArgs === null) {
        serverArgs = read.args;
        serverArgsLine = lineNo;
        serverArgsForm = read.form;
      } else if (JSON.stringify(read.args) !== JSON.stringify(serverArgs)) {
        fail(lineNo, "server_args=…", `differs from the server_args of line ${serverArgsLine}: one server per log`, {
          firstLine: serverArgsLine,
        });
      }
      continue;
    }
    const message = stripPrefix(raw).message.trim();
    if (launchCommand === null && LAUNCH_HEAD.test(message)) {
      let joined = message;
      while (joined.endsWith("\\") && i + 1 < lines.length) joined = `${joined.slice(0, -1)} ${lines[++i]!.trim()}`;
      const words = shellWords(joined.replace(/^[$+#>]\s+/, ""));
      if (!Array.isArray(words))
        return fail(lineNo, joined.slice(0, 100), `is a launch command with an unclosed ${words.unclosed} quote`);
      const command = words.filter((w) => !["nohup", "exec", "env", "export"].includes(w));
      launchCommand = command;
      for (const w of command) {
        const m = ASSIGNMENT.exec(w);
        if (!m) break;
        launchEnv[m[1]!] = m[2]!;
      }
      continue;
    }
    if (ENV_LINE.test(message)) readEnvLine(message, env);
  }
  if (!sizingLines.some((s) => SIZING_KINDS_WITH_POOLS.has(s.kind)))
    throw new ServerConfigError(
      "SGLANG_LOG",
      "log",
      `${lines.length} lines`,
      "has no DSV4 sizing line (`DSV4 memory calculation: …`, `DSV4 pool sizes: …` or " +
        "`Initialize DeepSeekV4TokenToKVPool with …`): not the start-up log of an SGLang DeepSeek-V4 server, " +
        "or cut off before its KV pools were sized",
      { lines: lines.length },
    );
  return {
    serverArgs,
    serverArgsLine,
    serverArgsForm,
    env: { ...env, ...launchEnv },
    launchCommand,
    sizingLines,
  };
}

/** The message after logging's prefix, and the ranks the prefix names. */
function stripPrefix(raw: string, before = raw.length): { message: string; rank: LogRank | null } {
  let last: RegExpExecArray | null = null;
  PREFIX.lastIndex = 0;
  for (let m = PREFIX.exec(raw); m !== null && m.index < before; m = PREFIX.exec(raw)) last = m;
  if (last === null) return { message: raw, rank: null };
  return { message: raw.slice(last.index + last[0].length), rank: rankOf(last[2]!.trim()) };
}

function rankOf(label: string): LogRank | null {
  if (label === "") return null;
  const rank = {
    tp: null as number | null,
    dp: null as number | null,
    ep: null as number | null,
    pp: null as number | null,
  };
  for (const token of label.split(" ")) {
    const m = RANK_TOKEN.exec(token)!;
    const key = m[1]!.toLowerCase();
    if (key === "tp" || key === "dp" || key === "ep" || key === "pp") rank[key] = Number(m[2]);
  }
  return { ...rank, label };
}

function readSizingLine(raw: string, line: number): LoggedSizingLine | null {
  for (const kind of SIZING_KINDS) {
    const m = kind.match.exec(raw);
    if (!m) continue;
    // The scheduler's line is `max_total_num_tokens=…` right after the prefix; elsewhere the name is only a field.
    const { message, rank } = stripPrefix(raw, m.index + 1);
    if (kind.kind === "max-total-tokens" && !message.startsWith("max_total_num_tokens=")) return null;
    const label = kind.kind === "max-total-tokens" ? "" : m[1]!; // the scheduler line has no label of its own
    const body = raw.slice(m.index + m[0].length).trim();
    return { kind: kind.kind, line, rank, label, fields: readFields(kind, body, line, label) };
  }
  return null;
}

function readFields(
  kind: SizingKind,
  body: string,
  line: number,
  label: string,
): Record<string, LoggedNumber | string> {
  const starts: Array<{ key: string; at: number; valueAt: number }> = [];
  KEY_START.lastIndex = 0;
  for (let m = KEY_START.exec(body); m !== null; m = KEY_START.exec(body))
    starts.push({ key: m[1]!, at: m.index, valueAt: m.index + m[0].length });
  if (starts.length === 0 || starts[0]!.at !== 0)
    fail(line, body.slice(0, 100), `is a \`${label}\` line without key=value fields in SGLang's format`);
  const fields: Record<string, LoggedNumber | string> = {};
  for (let k = 0; k < starts.length; k++) {
    const { key, valueAt } = starts[k]!;
    const end = k + 1 < starts.length ? starts[k + 1]!.at : body.length;
    // A line cut after a separator leaves a trailing comma; the missing keys below then say it is cut off.
    const text = body.slice(valueAt, end).trim().replace(/,$/, "").trim();
    if (text === "") fail(line, `${key}=`, `has no value for ${key} (the line is cut off)`, { key });
    if (Object.hasOwn(fields, key)) fail(line, key, `holds ${key} twice`, { key });
    fields[key] = readValue(kind, key, text, line);
  }
  for (const need of kind.required) {
    const any = typeof need === "string" ? [need] : need;
    if (!any.some((key) => Object.hasOwn(fields, key)))
      fail(line, body.slice(-100), `has no ${any.join(" or ")}: the \`${label}\` line is cut off or not SGLang's`, {
        missing: any,
      });
  }
  return fields;
}

function readValue(kind: SizingKind, key: string, text: string, line: number): LoggedNumber | string {
  if (kind.text?.includes(key)) return text;
  const m = NUMBER.exec(text);
  if (m) {
    const unit = m[3] ?? "";
    if (unit !== "" && !UNITS.has(unit))
      fail(line, text, `${key} has the unit ${unit}, not one SGLang prints`, { key });
    const value = Number(m[1]);
    if (!Number.isFinite(value)) fail(line, text, `${key} is not a finite number`, { key });
    return { text: m[1]!, value, decimals: m[2]?.length ?? 0, unit };
  }
  if (WORDS.has(text)) return text;
  return fail(line, text, `${key} is not a number (SGLang prints one here)`, { key });
}

function readServerArgs(rest: string, line: number): { args: Record<string, unknown>; form: "repr" | "dict" } {
  const form = rest.startsWith("{") ? "dict" : /^[A-Za-z_][A-Za-z0-9_]*\(/.test(rest) ? "repr" : null;
  if (form === null)
    fail(line, rest.slice(0, 100), "is a server_args line that is neither ServerArgs(…) nor a dict {…}");
  let read: { value: PythonValue; end: number };
  try {
    read = readPythonLiteral(rest);
  } catch (error) {
    if (!(error instanceof PythonLiteralError)) throw error;
    const near = rest.slice(Math.max(0, error.offset - 40), error.offset + 40);
    return fail(
      line,
      near,
      error.truncated
        ? `is a server_args line cut off mid-way (${error.reason}, at character ${error.offset})`
        : `is a server_args line that is not a Python literal (${error.reason}, at character ${error.offset})`,
      { offset: error.offset, truncated: error.truncated },
    );
  }
  const after = rest.slice(read.end).trim();
  if (after !== "") fail(line, after.slice(0, 100), "has text after the server_args value", { offset: read.end });
  const value = read.value;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return fail(line, rest.slice(0, 100), "is a server_args line whose value is not a dict or ServerArgs(…)");
  return { args: value, form: form! };
}

/** `NAME=value` (several, shell-quoted) or `export NAME=value`; a line not made only of assignments is no env line. */
function readEnvLine(message: string, env: Record<string, string>): void {
  const words = shellWords(message);
  if (!Array.isArray(words)) return;
  const assignments = words[0] === "export" ? words.slice(1) : words;
  const pairs = assignments.map((w) => ASSIGNMENT.exec(w));
  if (pairs.length === 0 || pairs.some((m) => m === null || !/^[A-Z][A-Z0-9_]*$/.test(m[1]!))) return;
  for (const m of pairs) env[m![1]!] = m![2]!;
}
