/**
 * `dsv4-kv check --engine vllm --against-log FILE [vllm serve flags] [--model NAME] [--json]`: reads a vLLM
 * start-up log of DeepSeek-V4 (server-config parses it), takes the model from --model or the log, the inputs from the
 * log's non-default args (or launch command) and lines with the flags winning (vLLM's own spellings, read through
 * vLLM's flag table), and prints every logged figure against ours: equal, within the print's rounding, or different
 * with its named cause. Exit 0 when nothing differs, 1 when a figure differs or is not computed, 2 when the file
 * holds no vLLM DeepSeek-V4 start-up material (VLLM_LOG) or a flag is wrong.
 */
import {
  CHECK_REPORT_SCHEMA_VERSION,
  MODEL_PRESETS,
  type ModelPreset,
  type VllmLogComparison,
  launchArgs,
  parseVllmLog,
  reconcileVllmLog,
  resolveModelName,
} from "@dsv4-kv/server-config";
import { UsageError } from "../../commands/args.js";
import { readTextInput } from "../../commands/input.js";
import type { CommandIO } from "../../commands/registry.js";
import { formatVllmLogComparison } from "./format-log.js";

const FLAG = "--against-log";
const DEFAULT_MODEL = "DeepSeek-V4-Flash";
/** check's own options on this path; every other word is a `vllm serve` flag. */
const OWN = new Set(["--against-log", "--json", "--help", "--vllm-version"]);

/** True when the words (after `--engine vllm` was taken off) give `--against-log`. */
export function hasAgainstLog(argv: readonly string[]): boolean {
  return argv.some((w) => w === FLAG || w.startsWith(`${FLAG}=`));
}

interface VllmOptions {
  path: string;
  json: boolean;
  vllmVersion?: string;
  serveWords: string[];
}

function splitOptions(argv: readonly string[]): VllmOptions {
  let path: string | undefined;
  let vllmVersion: string | undefined;
  let json = false;
  const serveWords: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const name = word.includes("=") ? word.slice(0, word.indexOf("=")) : word;
    if (!OWN.has(name)) {
      serveWords.push(word);
      continue;
    }
    if (name === "--json") json = true;
    else if (name === "--help")
      throw new UsageError("--help", true, "see `dsv4-kv check --help` (the --engine vllm --against-log part)");
    else {
      const value = word.includes("=") ? word.slice(name.length + 1) : argv[++i];
      if (value === undefined) throw new UsageError(name, null, "needs a value");
      if (name === FLAG) path = value;
      else vllmVersion = value;
    }
  }
  if (path === undefined) throw new UsageError(FLAG, null, "needs a FILE (or - for standard input)");
  return { path, json, serveWords, ...(vllmVersion === undefined ? {} : { vllmVersion }) };
}

/** The model: --model, else the log's model argument, banner or load line, else DeepSeek-V4-Flash (said so). */
function modelOf(stated: unknown, logged: string | null): { preset: ModelPreset; how: string } {
  if (typeof stated === "string") {
    const m = resolveModelName(stated, "--model");
    return { preset: m.preset, how: `${m.preset.name} (--model ${stated})` };
  }
  if (logged !== null) {
    const parts = logged
      .replace(/models--[^/]*?--/g, "")
      .split(/[/\\]/)
      .filter((p) => p !== "")
      .reverse();
    for (const part of parts) {
      try {
        const m = resolveModelName(part, "model");
        return { preset: m.preset, how: `${m.preset.name} (the log's model ${logged})` };
      } catch {
        // Not a model name: the next component up.
      }
    }
  }
  const preset = MODEL_PRESETS[DEFAULT_MODEL]!;
  const why = logged === null ? "the log names no model" : `the log's model ${logged} names no preset`;
  return { preset, how: `${DEFAULT_MODEL} (${why}; --model overrides)` };
}

export function vllmLogOk(c: VllmLogComparison): boolean {
  if (c.nothingCompared !== undefined) return false;
  return c.figures.every((f) => f.role !== "not-computed" && f.verdict !== "different");
}

export async function runVllmAgainstLog(argv: readonly string[], io: CommandIO): Promise<number> {
  const options = splitOptions(argv);
  const flags = launchArgs(options.serveWords);
  if (flags.unknown.length > 0)
    throw new UsageError(
      flags.unknown[0]!,
      null,
      "is neither a check option nor a `vllm serve` flag in dsv4-kv's vLLM table",
    );
  const bare = options.serveWords.find(
    (w, i) => !w.startsWith("-") && (i === 0 || !options.serveWords[i - 1]!.startsWith("-")),
  );
  if (bare !== undefined) throw new UsageError(bare, bare, "is not a flag: give the model as --model NAME");
  const stated = flags.args.model;
  delete flags.args.model;
  const text = await readTextInput(FLAG, options.path, io.stdin);
  const parsed = parseVllmLog(text, typeof stated === "string" ? { statedModel: stated } : {});
  const loggedModel = parsed.args?.model ?? parsed.args?.model_tag ?? parsed.modelName?.text ?? null;
  const { preset, how } = modelOf(stated, typeof loggedModel === "string" ? loggedModel : null);
  const comparison = reconcileVllmLog(parsed, {
    model: preset,
    modelName: how,
    flagArgs: flags.args,
    ...(options.vllmVersion === undefined ? {} : { vllmVersion: options.vllmVersion }),
  });
  const ok = vllmLogOk(comparison);
  if (options.json) {
    const json = { schemaVersion: CHECK_REPORT_SCHEMA_VERSION, engine: "vllm", ok, vllmLogComparison: comparison };
    io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else io.stdout.write(formatVllmLogComparison(comparison, options.path, parsed.lines));
  if (!ok) io.stderr.write(`dsv4-kv check --engine vllm: ${whatDiffers(comparison)}\n`);
  return ok ? 0 : 1;
}

function whatDiffers(c: VllmLogComparison): string {
  if (c.nothingCompared) return `nothing compared: ${c.nothingCompared}`;
  const differ = c.figures.filter((f) => f.verdict === "different").length;
  const missing = c.figures.filter((f) => f.role === "not-computed").length;
  const parts = [];
  if (differ > 0) parts.push(`the log differs from ours in ${differ} figure${differ === 1 ? "" : "s"}`);
  if (missing > 0) parts.push(`${missing} figure${missing === 1 ? "" : "s"} not computed`);
  return parts.join("; ");
}
