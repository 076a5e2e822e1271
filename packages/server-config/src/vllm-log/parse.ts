/**
 * `parseVllmLog(text)`: what a pasted vLLM start-up log of DeepSeek-V4 says about its KV cache, read the way people
 * paste logs: cut, wrapped, behind `(EngineCore_DP0 pid=…)` / journald / docker prefixes, mixed with prose, tables and
 * shell. Each recognised message (lines.ts) becomes a figure with its line and whether vLLM wrote it or prose quotes
 * it; `non-default args: {…}` is read as the Python literal vLLM prints (python-literal.ts), a `vllm serve` command
 * (continued with `\`) as its flags; the version from the banner or the engine line. Refused (ServerConfigError,
 * code VLLM_LOG) only: not text, empty, too large, or no vLLM DeepSeek-V4 start-up material at all.
 */
import { ServerConfigError } from "../errors.js";
import { shellWords } from "../shell-words.js";
import { PythonLiteralError, readPythonLiteral } from "../sglang-log/python-literal.js";
import { ANSI, MESSAGES, REFUSAL_START, classifyVllmLine, excerpt } from "./lines.js";
import type { ParsedVllmLog, VllmLoggedLine, VllmLoggedNumber, VllmSkippedLine } from "./types.js";

export const MAX_VLLM_LOG_CHARS = 256 * 1024 * 1024;

/** A line naming DeepSeek-V4 (the ds_mla layouts alone do not: GLM-5.3 uses them too). */
const DSV4 = /DeepseekV4|DeepSeekV4|DeepSeek-V4|DeepSeek V4|deepseek_v4|DEEPSEEK_SPARSE_SWA/i;
const FP4_LAYOUT = /\bn?v?fp4_ds_mla\b/;
const NON_DEFAULT = /non-default args: (\{.*)$/;
const VERSION = [
  /█.*\bversion\s+v?(\d+\.\d+\.\d+[\w.+-]*)/,
  /vLLM API server version v?(\d+\.\d+\.\d+[\w.+-]*)/,
  /Initializing a V1 LLM engine \(v(\d+\.\d+\.\d+[\w.+-]*)\)/,
  /^vllm:\s*v?(\d+\.\d+\.\d+[\w.+-]*)\s*$/i,
  /vLLM banner, `?version v?(\d+\.\d+\.\d+[\w.+-]*)/,
];
const MODEL = [/█\s+model\s+(\S+)/, /Starting to load model (\S+?)(?:\.\.\.)?$/];
/** `vllm serve` (any path to the binary, after a prompt, env assignments or exec) or the module form. */
const LAUNCH =
  /(?:^|[\s`$>#])(?:exec\s+)?(?:\S*\/)?(?:vllm\s+serve|python[0-9.]*\s+-m\s+vllm\.entrypoints\.openai\.api_server)(?=\s|$)/;

function refuse(value: unknown, rule: string, params?: Record<string, number>): never {
  throw new ServerConfigError("VLLM_LOG", "log", value, rule, params);
}

function number(text: string): VllmLoggedNumber {
  const plain = text.replaceAll(",", "");
  const dot = plain.indexOf(".");
  return { text, value: Number(plain), decimals: dot < 0 ? 0 : plain.length - dot - 1 };
}

interface State {
  lines: string[];
  figures: VllmLoggedLine[];
  skipped: VllmSkippedLine[];
  version: { text: string; line: number } | null;
  args: Record<string, unknown> | null;
  argsSource: ParsedVllmLog["argsSource"];
  launchWords: string[] | null;
  modelName: { text: string; line: number } | null;
  dsv4Lines: number[];
  layoutMentions: { layout: string; line: number }[];
}

export interface ParseVllmLogOptions {
  /** The caller says which DeepSeek-V4 model served the log (a `--model` flag): a log that names none is read. */
  statedModel?: string;
}

/** Reads a vLLM start-up log; refuses only text with no vLLM DeepSeek-V4 start-up material. */
export function parseVllmLog(text: string, options: ParseVllmLogOptions = {}): ParsedVllmLog {
  if (typeof text !== "string") refuse(text, "must be the log's text");
  if (text.length > MAX_VLLM_LOG_CHARS) refuse(`${text.length} characters`, `must be at most ${MAX_VLLM_LOG_CHARS}`);
  if (text.includes("\0")) refuse("NUL byte", "is not text (binary data)");
  if (text.trim() === "") refuse("", "is empty");
  const lines = text.replace(ANSI, "").split(/\r?\n|\r/);
  const s: State = {
    lines,
    figures: [],
    skipped: [],
    version: null,
    args: null,
    argsSource: null,
    launchWords: null,
    modelName: null,
    dsv4Lines: [],
    layoutMentions: [],
  };
  for (let i = 0; i < lines.length; i++) i = readLine(s, i);
  const material = s.figures.length > 0 || s.args !== null || s.launchWords !== null;
  if (!material)
    refuse(
      `${lines.length} lines`,
      "holds no vLLM start-up material (no `Available KV cache memory`, `GPU KV cache size`, `Maximum concurrency` " +
        "or refusal line, no `non-default args`, no `vllm serve` command)",
      { lines: lines.length },
    );
  if (s.dsv4Lines.length === 0 && options.statedModel === undefined)
    refuse(
      `${lines.length} lines`,
      "is a vLLM log that names no DeepSeek-V4 model, architecture or backend (another model's?); pass --model to " +
        "say which DeepSeek-V4 checkpoint it served",
      { lines: lines.length },
    );
  return { lines: lines.length, ...pick(s), evidence: evidenceOf(s, options.statedModel) };
}

function pick(s: State) {
  const { version, args, argsSource, launchWords, modelName, figures, skipped, layoutMentions } = s;
  return { version, args, argsSource, launchWords, modelName, figures, skipped, layoutMentions };
}

function evidenceOf(s: State, statedModel: string | undefined): string[] {
  const kinds = [...new Set(s.figures.map((f) => f.kind))];
  const out =
    s.dsv4Lines.length > 0
      ? [`line ${s.dsv4Lines[0]} names DeepSeek-V4`]
      : [`the caller states the model: ${statedModel}`];
  if (kinds.length > 0) out.push(`vLLM lines read: ${kinds.join(", ")}`);
  if (s.argsSource) out.push(`arguments from the ${s.argsSource.kind} (line ${s.argsSource.line})`);
  if (s.version) out.push(`vLLM ${s.version.text} (line ${s.version.line})`);
  return out;
}

/** One line (or a message wrapped over several); returns the index of the last line it used. */
function readLine(s: State, i: number): number {
  const raw = s.lines[i]!;
  if (raw.trim() === "") return i;
  const lineNo = i + 1;
  if (DSV4.test(raw)) s.dsv4Lines.push(lineNo);
  const fp4 = FP4_LAYOUT.exec(raw);
  if (fp4) s.layoutMentions.push({ layout: fp4[0], line: lineNo });
  const c = classifyVllmLine(raw);
  s.version ??= firstMatch(VERSION, c.message, lineNo);
  s.modelName ??= firstMatch(MODEL, c.message, lineNo);
  const args = NON_DEFAULT.exec(c.message);
  if (args) {
    readArgs(s, args[1]!, raw, lineNo);
    return i;
  }
  if (LAUNCH.test(c.message)) return readLaunch(s, i);
  let message = c.message;
  let last = i;
  if (REFUSAL_START.test(message) && !/GiB\)\./.test(message)) {
    // A refusal a person wrapped: join up to three following lines.
    for (
      let j = i + 1;
      j < Math.min(s.lines.length, i + 4) && !/estimated maximum model length is \d+/.test(message);
      j++
    ) {
      message = `${message} ${classifyVllmLine(s.lines[j]!).message}`;
      last = j;
    }
  }
  const before = s.figures.length;
  readMessages(s, message, c.source, c.processLabel, lineNo);
  if (c.source === "quoted" && i + 1 < s.lines.length) readStraddling(s, message, i);
  return s.figures.length > before && last > i ? last : i;
}

/** Prose wrapped mid-message ("GPU KV cache\nsize: N tokens"): a message that starts on this line, ends on the next. */
function readStraddling(s: State, message: string, i: number): void {
  const next = classifyVllmLine(s.lines[i + 1]!).message;
  if (next === "") return;
  const joined = `${message} ${next}`;
  const found: State = { ...s, figures: [] };
  readMessages(found, joined, "quoted", null, i + 1);
  for (const f of found.figures) {
    const m = MESSAGES.find((p) => p.kind === f.kind)!.pattern.exec(joined)!;
    if (m.index < message.length && m.index + m[0].length > message.length + 1) s.figures.push(f);
  }
}

function firstMatch(patterns: readonly RegExp[], text: string, line: number): { text: string; line: number } | null {
  for (const p of patterns) {
    const m = p.exec(text);
    if (m) return { text: m[1]!, line };
  }
  return null;
}

function readMessages(s: State, message: string, source: "log" | "quoted", proc: string | null, line: number) {
  for (const m of MESSAGES) {
    const hit = m.pattern.exec(message);
    if (!hit) continue;
    const numbers: Record<string, VllmLoggedNumber> = {};
    const text: Record<string, string> = {};
    m.numbers.forEach((name, k) => {
      const g = hit[k + 1];
      if (name !== null && g !== undefined) numbers[name] = number(g);
      const t = m.texts?.[k];
      if (t && g !== undefined) text[t] = g;
    });
    s.figures.push({ kind: m.kind, line, source, processLabel: proc, numbers, text });
  }
}

function readArgs(s: State, literal: string, raw: string, line: number): void {
  try {
    const read = readPythonLiteral(literal);
    const value = read.value;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      s.skipped.push({ line, text: excerpt(raw), reason: "non-default args that are not a dict: not read" });
      return;
    }
    if (s.args !== null && s.argsSource?.kind === "non-default-args") {
      s.skipped.push({ line, text: excerpt(raw), reason: "a second non-default args line: the first is read" });
      return;
    }
    s.args = value;
    s.argsSource = { kind: "non-default-args", line };
  } catch (error) {
    if (!(error instanceof PythonLiteralError)) throw error;
    const why = error.truncated ? "cut off mid-way" : "not a Python literal";
    s.skipped.push({ line, text: excerpt(raw), reason: `non-default args ${why} (${error.reason}): not read` });
  }
}

/** A `vllm serve …` command, joined over `\` continuations; its flags become the args unless non-default args exist. */
function readLaunch(s: State, i: number): number {
  let joined = classifyVllmLine(s.lines[i]!).message.replace(/^`+|`+$/g, "");
  let j = i;
  while (/\\\s*$/.test(joined) && j + 1 < s.lines.length)
    joined = `${joined.replace(/\\\s*$/, "")} ${classifyVllmLine(s.lines[++j]!).message.replace(/`+$/, "")}`;
  const at = LAUNCH.exec(joined)!;
  const tail = joined.slice(at.index + at[0].length);
  const split = shellWords(tail, "lenient");
  if ("refused" in split) {
    s.skipped.push({ line: i + 1, text: excerpt(s.lines[i]!), reason: "a launch command with an unclosed quote" });
    return j;
  }
  s.launchWords ??= split.words;
  return j;
}
