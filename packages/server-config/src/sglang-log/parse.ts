/**
 * `parseSglangLog(text)`: what a pasted SGLang start-up log says about its DSV4 sizing, in SGLang's own formats
 * (docs/reference/configurator-generations.md lists them with their upstream sources), read the way operators
 * paste logs: cut, wrapped, mixed with prose and tables, several servers in one file.
 *
 * - Each line is classified (log-lines.ts): only log lines (logging's `[date time TPn] ` prefix, a level, a
 *   container prefix) and bare SGLang messages are read; prose and tables that mention a figure are skipped.
 * - Sizing lines (fields.ts): `DSV4 memory calculation: …` (earliest spelling `DSv4`), `DSV4 pool sizes: …`,
 *   `DSV4 SWA sizing: …`, `Initialize DeepSeekV4TokenToKVPool with …`, the scheduler's `max_total_num_tokens=…`.
 *   Each is read on its own: one that cannot be read is listed in `skipped`, a cut one keeps what it has (its last
 *   value marked `truncated`), and one wrapped onto the next line by a human is joined when that is unambiguous.
 * - `server_args=ServerArgs(…)` / `server_args={…}`, environment lines, a launch command (`sglang serve …`,
 *   `python -m sglang.launch_server …`, continued with `\`).
 * - Sections: a new one starts at a server_args line or a launch command after a server's material, and at a
 *   restart (a rank sizing its pools again after its pool was built).
 *
 * Refused (ServerConfigError, code SGLANG_LOG) only: no text, too large, binary, or nothing DSV4 at all.
 */
import { ServerConfigError } from "../errors.js";
import { sglangFlag } from "../sglang-flags.js";
import { type ReadFields, SIZING_KINDS, type SizingKind, readFields } from "./fields.js";
import { ANSI, type ClassifiedLine, classifyLine, excerpt } from "./log-lines.js";
import { PythonLiteralError, type PythonValue, readPythonLiteral } from "./python-literal.js";
import { shellWords } from "../shell-words.js";
import type { LoggedSizingLine, ParsedSglangLog, ParsedSglangLogFile, SectionStart, SkippedLine } from "./types.js";

/** Largest log read (a start-up log is a few MB; a server that ran for days can be larger: pass its start). */
export const MAX_LOG_CHARS = 256 * 1024 * 1024;

const SERVER_ARGS = /^server_args=/;
const ENV_LINE = /^(?:export\s+)?[A-Z][A-Z0-9_]*=/;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
/** A launch command: a shell-trace mark, assignments, nohup/exec/env, then `sglang serve` or `python -m …`. */
const LAUNCH_HEAD = new RegExp(
  String.raw`^(?:[$+#>]\s+)?(?:(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:nohup|exec|env)\s+)*` +
    String.raw`(?:sglang\s+serve|\S*python[0-9.]*\s+-m\s+sglang\.launch_server)(?:\s|$)`,
);
/** Text that names the platform a server ran on (kept as evidence; detect.ts decides). */
const PLATFORM_HINT = new RegExp(
  String.raw`\b(?:MI3\d{1,2}X?|gfx9\d\d|ROCm|HIP_VISIBLE_DEVICES|AMD Instinct|float8_e4m3fnuz|aiter` +
    String.raw`|Ascend|Atlas|910[BC]|device='npu'|torch_npu|CANN|NPU graph)\b`,
  "i",
);
/** A sizing label anywhere in a line: such a line is SGLang's or prose that quotes it. */
const MENTION =
  /DSV4 memory calculation|DSv4 memory calculation|DSV4 pool sizes|DSV4 SWA sizing|DeepSeekV4TokenToKVPool/;
/** Figures prose quotes; a prose line holding one is listed as skipped too. */
const MENTIONED_FIGURE = /max_total_num_tokens=|full_token=/;
/** SGLang start-up messages on a log line that are no sizing line (a start-up that failed before it, an excerpt). */
const STARTUP = new RegExp(
  `^(?:${[
    "Load weight (?:begin|end)",
    "Capture .*graph",
    "Allocating .* memory for V4",
    "KV Cache is allocated",
    "Memory pool end",
    "Init torch distributed",
    "Using KV cache dtype",
    "Scheduler hit an exception",
    ".*Loaded weights leave no GPU memory",
    ".*DeepSeekV4",
    ".*DSV4",
    ".*deepseek_v4",
  ].join("|")})`,
);

interface Section {
  section: number;
  firstLine: number;
  lastLine: number;
  startedBy: SectionStart;
  skipped: SkippedLine[];
  platformHints: { line: number; text: string }[];
  serverArgs: Record<string, unknown> | null;
  serverArgsLine: number | null;
  serverArgsForm: "repr" | "dict" | "fragment" | null;
  env: Record<string, string>;
  launchEnv: Record<string, string>;
  launchCommand: string[] | null;
  sizingLines: LoggedSizingLine[];
  startupLines: { line: number; text: string }[];
}

function newSection(n: number, line: number, startedBy: SectionStart): Section {
  return {
    section: n,
    firstLine: line,
    lastLine: line,
    startedBy,
    skipped: [],
    platformHints: [],
    serverArgs: null,
    serverArgsLine: null,
    serverArgsForm: null,
    env: {},
    launchEnv: {},
    launchCommand: null,
    sizingLines: [],
    startupLines: [],
  };
}

function refuseText(text: string): void {
  if (typeof text !== "string") throw new ServerConfigError("SGLANG_LOG", "log", text, "must be the log's text");
  if (text.length > MAX_LOG_CHARS)
    throw new ServerConfigError("SGLANG_LOG", "log", `${text.length} characters`, `must be at most ${MAX_LOG_CHARS}`);
  if (text.includes("\0")) throw new ServerConfigError("SGLANG_LOG", "log", "NUL byte", "is not text (binary data)");
  if (text.trim() === "") throw new ServerConfigError("SGLANG_LOG", "log", "", "is empty");
}

/** Reads a start-up log file into its sections; refuses only a file with nothing DSV4 in it. */
export function parseSglangLog(text: string): ParsedSglangLogFile {
  refuseText(text);
  const lines = text.replace(ANSI, "").split(/\r?\n|\r/);
  const reader = new Reader(lines);
  reader.run();
  const argv = jsonArgv(text);
  if (argv && reader.sections.every((s) => !hasMaterial(s))) {
    // A launch stored as a JSON document (`{"args": ["--model-path", …]}` or a bare array of words).
    const s = reader.sections[0]!;
    s.launchCommand = ["python", "-m", "sglang.launch_server", ...argv];
  }
  const sections = reader.sections.filter(hasMaterial);
  if (sections.length === 0) {
    const skipped = reader.skipped.slice(0, 3).map((s) => `line ${s.line}: ${s.reason}`);
    throw new ServerConfigError(
      "SGLANG_LOG",
      "log",
      `${lines.length} lines`,
      "holds no DSV4 start-up material (no `DSV4 memory calculation`, `DSV4 pool sizes` or " +
        "`Initialize DeepSeekV4TokenToKVPool` log line, no readable server_args line, no launch command): not the " +
        `start-up log of an SGLang DeepSeek-V4 server${skipped.length > 0 ? `; skipped ${skipped.join("; ")}` : ""}`,
      { lines: lines.length, skipped: reader.skipped.length },
    );
  }
  // Lines skipped outside every kept section are reported with the first one.
  const kept = new Set(sections);
  const orphans = reader.sections.filter((s) => !kept.has(s)).flatMap((s) => s.skipped);
  if (orphans.length > 0) sections[0]!.skipped.unshift(...orphans);
  for (const s of sections) s.skipped.sort((a, b) => a.line - b.line);
  const numbered = sections.map((s, i) => freeze({ ...s, section: i + 1 }));
  return { lines: lines.length, sections: numbered, skipped: reader.skipped };
}

/** The words of a launch stored as JSON: an array of strings, or an object whose `args`/`argv` is one. */
function jsonArgv(text: string): string[] | null {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return null;
  }
  const words = Array.isArray(value)
    ? value
    : value && typeof value === "object"
      ? ((value as Record<string, unknown>).args ?? (value as Record<string, unknown>).argv)
      : null;
  if (!Array.isArray(words) || !words.every((w) => typeof w === "string")) return null;
  return words.some((w) => w.startsWith("--")) ? (words as string[]) : null;
}

const hasMaterial = (s: Section) =>
  s.sizingLines.length > 0 || s.serverArgs !== null || s.launchCommand !== null || s.startupLines.length > 0;

function freeze(s: Section): ParsedSglangLog {
  return {
    section: s.section,
    firstLine: s.firstLine,
    lastLine: s.lastLine,
    startedBy: s.startedBy,
    skipped: s.skipped,
    platformHints: s.platformHints,
    serverArgs: s.serverArgs,
    serverArgsLine: s.serverArgsLine,
    serverArgsForm: s.serverArgsForm,
    env: { ...s.env, ...s.launchEnv },
    launchCommand: s.launchCommand,
    sizingLines: s.sizingLines,
    startupLines: s.startupLines.slice(0, 20),
  };
}

class Reader {
  readonly sections: Section[] = [];
  readonly skipped: SkippedLine[] = [];
  private current: Section;
  private i = 0;

  constructor(private readonly lines: readonly string[]) {
    this.current = newSection(1, 1, "file-start");
    this.sections.push(this.current);
  }

  run(): void {
    for (; this.i < this.lines.length; this.i++) {
      const raw = this.lines[this.i]!;
      this.readLine(raw, this.i + 1);
      // After the line (a joined continuation moves i on, a server_args line may start the section).
      if (raw.trim() !== "") this.current.lastLine = this.i + 1;
    }
  }

  private skip(line: number, raw: string, reason: string) {
    const entry = { line, text: excerpt(raw), reason };
    this.skipped.push(entry);
    this.current.skipped.push(entry);
  }

  private start(line: number, startedBy: SectionStart) {
    const hasServer = this.current.sizingLines.length > 0 || this.current.serverArgsLine !== null;
    if (startedBy === "launch-command" && !hasServer && this.current.launchCommand === null) return;
    if (startedBy === "server_args" && !hasServer) return;
    this.current = newSection(this.sections.length + 1, line, startedBy);
    this.sections.push(this.current);
  }

  private readLine(raw: string, lineNo: number) {
    const c = classifyLine(raw);
    if (c.kind === "blank") return;
    if (PLATFORM_HINT.test(raw)) this.current.platformHints.push({ line: lineNo, text: excerpt(raw) });
    if (c.kind === "log" || c.kind === "bare") {
      if (this.readSizing(c, raw, lineNo)) return;
      if (SERVER_ARGS.test(c.message)) return this.readServerArgs(c.message.slice("server_args=".length), raw, lineNo);
      if (STARTUP.test(c.message)) this.current.startupLines.push({ line: lineNo, text: excerpt(c.message) });
    }
    if (c.kind === "prose" && this.readArgsFragment(c.message, lineNo)) return;
    if (c.kind === "prose" || c.kind === "table") {
      if (MENTION.test(raw) || MENTIONED_FIGURE.test(raw))
        this.skip(lineNo, raw, `${c.kind}: mentions a DSV4 sizing line but is not a log line`);
      const launch = c.message.replace(/^`+|`+$/g, "");
      if (LAUNCH_HEAD.test(launch)) return this.readLaunch(launch, lineNo);
      if (ENV_LINE.test(c.message)) readEnvLine(c.message, this.current.env);
      return;
    }
    if (LAUNCH_HEAD.test(c.message.trim())) return this.readLaunch(c.message.trim(), lineNo);
    if (MENTION.test(c.message))
      this.skip(lineNo, raw, "mentions a DSV4 sizing line in a message SGLang does not print");
    if (ENV_LINE.test(c.message.trim())) readEnvLine(c.message.trim(), this.current.env);
  }

  /** A sizing line (joined with its human-wrapped continuation); false when the message is none. */
  private readSizing(c: ClassifiedLine, raw: string, lineNo: number): boolean {
    for (const kind of SIZING_KINDS) {
      const m = kind.match.exec(c.message);
      if (!m) continue;
      let body = c.message.slice(m[0].length).trim();
      let read = readFields(kind, body);
      const joined: number[] = [];
      while ((read.missing.length > 0 || read.cut) && this.i + 1 < this.lines.length) {
        const next = this.continuation(kind, body, read);
        if (next === null) break;
        joined.push(this.i + 2);
        this.i++;
        body = next.body;
        read = next.read;
      }
      return this.keepSizing(kind, m[1]!, c, raw, lineNo, read, joined);
    }
    return false;
  }

  private keepSizing(
    kind: SizingKind,
    label: string,
    c: ClassifiedLine,
    raw: string,
    lineNo: number,
    read: ReadFields,
    joined: number[],
  ): boolean {
    if (Object.keys(read.fields).length === 0) {
      this.skip(lineNo, raw, `a \`${label || "max_total_num_tokens"}\` line without a readable key=value field`);
      return true;
    }
    for (const problem of read.problems) this.skip(lineNo, raw, `${problem} (the field is left out)`);
    const sizing: LoggedSizingLine = {
      kind: kind.kind,
      line: lineNo,
      rank: c.rank,
      label,
      fields: read.fields,
      missing: read.missing,
      joined,
    };
    if (this.isRestart(sizing)) this.start(lineNo, "restart");
    this.current.sizingLines.push(sizing);
    return true;
  }

  /** The next line continues this one when it is no log line and joining it completes keys of this format. */
  private continuation(kind: SizingKind, body: string, read: ReadFields): { body: string; read: ReadFields } | null {
    const nextRaw = this.lines[this.i + 1]!;
    const next = classifyLine(nextRaw);
    if (next.kind !== "prose") return null;
    const text = next.message.trim();
    if (!/^[A-Za-z0-9_+.=]/.test(text) || text.length > 400) return null;
    const glue = read.cut || /[=,]$/.test(body) ? "" : kind.style === "comma" ? ", " : " ";
    const candidates = [`${body}${glue}${text}`];
    if (glue === "" && !/[=,]$/.test(body)) candidates.push(`${body}${kind.style === "comma" ? ", " : " "}${text}`);
    const results = candidates
      .map((b) => ({ body: b, read: readFields(kind, b) }))
      .filter((r) => r.read.problems.length === 0 && r.read.missing.length < read.missing.length + (read.cut ? 1 : 0));
    // Unambiguous: one way of joining reads whole keys (or both read the same); otherwise the line stays as is.
    if (results.length === 1 || (results.length === 2 && sameFields(results[0]!.read, results[1]!.read)))
      return results[0]!;
    return null;
  }

  /**
   * A rank that sized its pools again after building its pool, or logged larger pools than before (a re-sizing
   * only shrinks them): the server restarted, or the file holds another server's lines.
   */
  private isRestart(line: LoggedSizingLine): boolean {
    const rank = line.rank?.label ?? null;
    const mine = this.current.sizingLines.filter((l) => (l.rank?.label ?? null) === rank);
    if (line.kind === "memory-calculation")
      return mine.some((l) => l.kind === "memory-calculation") && mine.some((l) => l.kind === "pool-init");
    if (line.kind !== "pool-sizes") return false;
    const full = line.fields.full;
    const before = mine.filter((l) => l.kind === "pool-sizes").map((l) => l.fields.full);
    const last = before[before.length - 1];
    return typeof full === "object" && typeof last === "object" && !last.truncated && full.value > last.value;
  }

  private readServerArgs(rest: string, raw: string, lineNo: number) {
    const read = readServerArgs(rest);
    const s = this.current;
    if ("error" in read) {
      this.start(lineNo, "server_args");
      this.current.serverArgsLine ??= lineNo;
      return this.skip(lineNo, raw, `${read.error}: its arguments are not read`);
    }
    // The same server_args printed again before any sizing (several processes echo it) is the same server.
    if (
      s.serverArgs !== null &&
      s.sizingLines.length === 0 &&
      JSON.stringify(read.args) === JSON.stringify(s.serverArgs)
    )
      return;
    this.start(lineNo, "server_args");
    Object.assign(this.current, { serverArgs: read.args, serverArgsLine: lineNo, serverArgsForm: read.form });
  }

  /**
   * A piece of a ServerArgs repr whose head was cut or wrapped away (`…ked_prefill_size=4096, enable_x=False, …`):
   * at least five `key=literal` pairs whose keys are SGLang's flags. Its readable pairs are the section's
   * server_args (merged over consecutive pieces); the broken ends are left out.
   */
  private readArgsFragment(message: string, lineNo: number): boolean {
    const pairs = message.split(/,\s+(?=[a-z_][a-z0-9_]*=)/);
    const args: Record<string, unknown> = {};
    for (const part of pairs) {
      const m = /^([a-z_][a-z0-9_]*)=(.*)$/s.exec(part.trim());
      if (!m || !sglangFlag(m[1]!.replace(/_/g, "-"))) continue;
      try {
        const read = readPythonLiteral(m[2]!.replace(/,$/, ""));
        if (m[2]!.replace(/,$/, "").slice(read.end).trim() === "") args[m[1]!] = read.value;
      } catch {
        // A pair cut at the line's edge: left out.
      }
    }
    if (Object.keys(args).length < 5) return false;
    const s = this.current;
    if (s.serverArgsForm !== "fragment") this.start(lineNo, "server_args");
    const current = this.current;
    current.serverArgs = { ...(current.serverArgs ?? {}), ...args };
    current.serverArgsLine ??= lineNo;
    current.serverArgsForm = "fragment";
    return true;
  }

  private readLaunch(message: string, lineNo: number) {
    let joined = message;
    while (joined.endsWith("\\") && this.i + 1 < this.lines.length)
      joined = `${joined.slice(0, -1)} ${classifyLine(this.lines[++this.i]!).message.trim()}`;
    const split = shellWords(joined.replace(/^[$+#>]\s+/, ""), "lenient");
    if ("refused" in split)
      return this.skip(lineNo, message, `a launch command with an unclosed ${split.refused.unclosed} quote: not read`);
    const { words } = split;
    this.start(lineNo, "launch-command");
    const command = words.filter((w) => !["nohup", "exec", "env", "export"].includes(w));
    this.current.launchCommand = command;
    for (const w of command) {
      const m = ASSIGNMENT.exec(w);
      if (!m) break;
      this.current.launchEnv[m[1]!] = m[2]!;
    }
  }
}

const sameFields = (a: ReadFields, b: ReadFields) => JSON.stringify(a.fields) === JSON.stringify(b.fields);

type ServerArgsRead = { args: Record<string, unknown>; form: "repr" | "dict" } | { error: string };

function readServerArgs(rest: string): ServerArgsRead {
  const form = rest.startsWith("{") ? "dict" : /^[A-Za-z_][A-Za-z0-9_]*\(/.test(rest) ? "repr" : null;
  if (form === null) return { error: "a server_args line that is neither ServerArgs(…) nor a dict {…}" };
  let read: { value: PythonValue; end: number };
  try {
    read = readPythonLiteral(rest);
  } catch (error) {
    if (!(error instanceof PythonLiteralError)) throw error;
    return {
      error: error.truncated
        ? `a server_args line cut off mid-way (${error.reason}, at character ${error.offset})`
        : `a server_args line that is not a Python literal (${error.reason}, at character ${error.offset})`,
    };
  }
  const value = read.value;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { error: "a server_args line whose value is not a dict or ServerArgs(…)" };
  return { args: value, form };
}

/** `NAME=value` (several, shell-quoted) or `export NAME=value`; a line not made only of assignments is no env line. */
function readEnvLine(message: string, env: Record<string, string>): void {
  const split = shellWords(message, "lenient");
  if ("refused" in split) return;
  const { words } = split;
  const assignments = words[0] === "export" ? words.slice(1) : words;
  const pairs = assignments.map((w) => ASSIGNMENT.exec(w));
  if (pairs.length === 0 || pairs.some((m) => m === null || !/^[A-Z][A-Z0-9_]*$/.test(m[1]!))) return;
  for (const m of pairs) env[m![1]!] = m![2]!;
}
