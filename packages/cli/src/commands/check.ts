/**
 * `dsv4-kv check`: will this DeepSeek-V4 server configuration corrupt KV, how much does every pool take, how
 * many tokens fit, and which setting is wrong. Exit 0 valid, 1 invalid, 2 unusable input.
 */
import { DEFAULT_MODEL, type ModelPreset, parseCustomModel, reconcileSglangLog } from "@dsv4-kv/server-config";
import { parseFailure, readConfigFile } from "../check/config-file.js";
import { ALL_FLAGS, ENV_SWITCHES } from "../check/flags.js";
import { type IgnoredSetting, type Values, launchEnv, parseCheckWords, splitLaunchCommand } from "../check/launch.js";
import { formatLogComparison, formatReport, logComparisonOk, toJson } from "../check/report.js";
import { readAgainstLog } from "../check/against-log.js";
import { loadModel } from "../check/model-source.js";
import { checkValueFromText, runCheckPipeline } from "../check/pipeline.js";
import { checkPayload } from "../report-html/check-payload.js";
import { renderReportHtml, writeReportHtml } from "../report-html/render.js";
import { InputError, UsageError } from "./args.js";
import { readTextInput } from "./input.js";
import { STDIN_PATH } from "./read-input.js";
import { paintFor } from "../colour.js";
import { type CommandSpec, renderHelp } from "./help.js";
import type { CommandIO } from "./registry.js";

export const spec: CommandSpec = {
  usage: [
    "[--model MODEL | --model-config FILE] [--config FILE] [server flags] [--json] [--html FILE]",
    "[dsv4-kv options] -- [NAME=value …] sglang serve [server flags]",
    "[dsv4-kv options] -- [NAME=value …] python -m sglang.launch_server [server flags]",
    "--against-log FILE [flags] [--json] [--html FILE]",
  ],
  description: `Checks a DeepSeek-V4 SGLang server configuration before it starts: the resolved arguments (what was defaulted
or corrected, and why), the compress-state rings and the draft tokens they serve, a residency check of the
resolved rings (the planner's ring simulator), every KV pool with shape and bytes, the capacity in tokens and
requests, the unused bytes, and every error and warning of the start-up rules (V-A*, V-S*, V-D*, V-M*, V-P*,
V-K*), all at once.

With no flags: DeepSeek-V4-Flash, EAGLE 3 steps, top-k 1, 4 draft tokens, on one rank of an 8×H200
tensor-parallel deployment (139 GiB per GPU, each rank loads 1/8 of the checkpoint's weights),
--mem-fraction-static 0.85. The whole checkpoint on one H200 (--tp-size 1) does not fit.

Budget: --kv-budget-bytes N, or --gpu-memory-gib/--weights-gib/--runtime-gib with --mem-fraction-static.
Environment switches may also come from SGLANG_OPT_USE_ONLINE_COMPRESS, SGLANG_EXPERIMENTAL_ONLINE_C128_MTP
and SGLANG_DSV4_COMPRESS_STATE_DTYPE (flags and --config win).

Server flags are SGLang's, as it spells them, with its aliases (--tp/--tp-size, --dp, --ep, --model/--model-path,
…), as --flag value or --flag=value, here, after -- in a pasted launch command, or as keys of --config (YAML or
JSON, dashes or underscores, None = unset). Flags that do not change KV state are accepted and listed as ignored;
the full table is docs/reference/sglang-flags.md.

--against-log FILE reads an SGLang server's start-up log: its server_args (and SGLANG_* environment) supply the
arguments, its printed KV budget the budget (flags win), and every DSV4 sizing figure it logged is compared with
ours at the log's precision, naming SGLang's configurator generation and the evidence; exit 1 on a difference.

--html FILE also writes the report as one self-contained page (scripts, styles and data inline, no network):
the verdict, every error and warning with its fix, the resolved arguments, and charts of the memory per pool,
the capacity against the draft-token count, the ring during one verify and the residency run. Its controls
(model, tp/dp, draft tokens and algorithm, memory fraction or budget, online compress, state dtype, context
length) rerun this check in the browser; the URL fragment holds them by flag name
(#speculative-num-draft-tokens=11&tp-size=4). Output and exit code are unchanged.`,
  flags: ALL_FLAGS,
  exitCodes: [
    [0, "the configuration is valid"],
    [1, "it is not"],
    [2, "unusable input"],
  ],
};

export const help: string = renderHelp(["check"], spec);

/** What the command line gave: flags (options first, then a launch command's), and the launch command's env. */
interface CheckInput {
  flags: Values;
  env: Record<string, string>;
  ignored: IgnoredSetting[];
  spelling: Record<string, string>;
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const dash = argv.indexOf("--");
  const options = parseCheckWords(dash < 0 ? argv : argv.slice(0, dash));
  const input: CheckInput = { flags: {}, env: {}, ignored: [], spelling: {} };
  if (dash >= 0) {
    const rest = argv.slice(dash + 1);
    const launch = splitLaunchCommand(rest);
    // `pnpm start -- --tp-size 4` passes the `--` through: flags after it are more flags, not a program.
    const server = parseCheckWords(launch ? launch.serverWords : rest);
    const env = launch ? launchEnv(launch.env) : { honoured: {}, ignored: [] };
    Object.assign(input.flags, server.values);
    Object.assign(input.spelling, server.spelling);
    input.env = env.honoured;
    input.ignored.push(...env.ignored, ...server.ignored);
  }
  Object.assign(input.flags, options.values);
  Object.assign(input.spelling, options.spelling);
  input.ignored.push(...options.ignored);
  if (input.flags.help) {
    io.stdout.write(help);
    return 0;
  }
  return check(input, io);
}

async function check(input: CheckInput, io: CommandIO): Promise<number> {
  const { flags } = input;
  refuseStdinTwice(flags);
  const ignored = [...input.ignored];
  // Precedence: defaults < env (the launch command's assignments over the process's, or over the log's) < the
  // log's server_args < config file < flags. A log's environment replaces this process's: it is the server's.
  const log = typeof flags["against-log"] === "string" ? await readAgainstLog(flags["against-log"], io.stdin) : null;
  const merged: Values = {};
  for (const [envName, flag] of Object.entries(ENV_SWITCHES)) {
    const raw = input.env[envName] ?? (log ? log.env : io.env)[envName];
    if (raw === undefined || raw === "") continue;
    merged[flag] = checkValueFromText(envName, flag, raw);
  }
  if (log) {
    Object.assign(merged, log.values);
    ignored.unshift(...log.ignored);
  }
  if (typeof flags.config === "string") {
    const file = await readConfigFile(flags.config, io.stdin);
    Object.assign(merged, file.values);
    ignored.unshift(...file.ignored);
  }
  for (const [name, value] of Object.entries(flags)) if (value !== undefined && name !== "config") merged[name] = value;

  // Model.
  let model: ModelPreset;
  let modelResolvedAs: string;
  if (typeof merged["model-config"] === "string") {
    model = await readModelFile(merged["model-config"], io.stdin);
    modelResolvedAs = `${merged["model-config"]} (--model-config)`;
    if (merged.model !== undefined)
      throw new UsageError("--model", merged.model, "cannot be combined with --model-config: give a preset or a file");
  } else {
    const name = typeof merged.model === "string" ? merged.model : DEFAULT_MODEL;
    ({ model, resolvedAs: modelResolvedAs } = await loadModel(name, input.spelling.model ?? "--model"));
  }

  // With a log: the budget it printed unless a budget flag is given, and SGLang's Gen B arithmetic.
  const budgetGiven = ["kv-budget-bytes", "gpu-memory-gib", "weights-gib", "runtime-gib"].some(
    (f) => merged[f] !== undefined,
  );
  if (log && log.budgetBytes !== null && !budgetGiven) merged["kv-budget-bytes"] = log.budgetBytes;
  if (log && merged.sizing === undefined) merged.sizing = "sglang-gen-b";
  const { report, budget } = runCheckPipeline({ values: merged, model, modelResolvedAs, ignored });
  const comparison = log ? reconcileSglangLog(log.parsed, report) : null;
  const json = comparison ? { ...toJson(report), logComparison: comparison } : toJson(report);
  if (typeof merged.html === "string") {
    const payload = checkPayload({ values: merged, model, modelResolvedAs, ignored, budget, report: json });
    await writeReportHtml(merged.html, renderReportHtml(payload));
  }
  io.stdout.write(
    merged.json ? `${JSON.stringify(json, null, 2)}\n` : formatReport(report, paintFor(io.stdout, io.env)),
  );
  if (ignored.length > 0 && !merged.json) io.stdout.write(ignoredSection(ignored));
  if (log && comparison && !merged.json)
    io.stdout.write(formatLogComparison(comparison, log.path, log.summary, paintFor(io.stdout, io.env)));
  if (!report.ok && !merged.json)
    io.stderr.write(
      `${paintFor(io.stderr, io.env).bad(`dsv4-kv check: the configuration is invalid (${report.errors.length} error${report.errors.length === 1 ? "" : "s"})`)}\n`,
    );
  const logOk = comparison === null || logComparisonOk(comparison);
  if (!logOk && !merged.json) {
    const differ = comparison!.figures.filter((f) => !f.match).length;
    const what =
      comparison!.generation === "unknown"
        ? "the log comes from a configurator generation dsv4-kv does not model"
        : `the log differs from ours in ${differ} figure${differ === 1 ? "" : "s"}`;
    io.stderr.write(`${paintFor(io.stderr, io.env).bad(`dsv4-kv check: ${what}`)}\n`);
  }
  return report.ok && logOk ? 0 : 1;
}

/** The accepted settings that were not read, with their values. */
function ignoredSection(ignored: readonly IgnoredSetting[]): string {
  const line = (i: IgnoredSetting) => `  ${i.name}${i.value === true ? "" : ` ${JSON.stringify(i.value)}`}`;
  const plain = ignored.filter((i) => i.effect === "ignored");
  const unmodelled = ignored.filter((i) => i.effect === "unmodelled");
  let text = "";
  if (plain.length > 0) text += `\nIgnored (no effect on KV state):\n${plain.map(line).join("\n")}\n`;
  if (unmodelled.length > 0)
    text += `\nIgnored, NOT MODELLED (SGLang may change KV state with these; the figures above leave them out):\n${unmodelled.map(line).join("\n")}\n`;
  return text;
}

async function readModelFile(path: string, stdin: CommandIO["stdin"]): Promise<ModelPreset> {
  const text = await readTextInput("--model-config", path, stdin);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw parseFailure("--model-config", path, "JSON", error);
  }
  const result = parseCustomModel(raw);
  if (!result.ok) {
    throw new InputError("--model-config", path, `is not a model config: ${result.issues.join("; ").slice(0, 500)}`, {
      issues: [...result.issues],
    });
  }
  return result.model;
}

/** Standard input can be read once: at most one file flag may be `-`. */
function refuseStdinTwice(flags: Values): void {
  const fromStdin = ["against-log", "config", "model-config"].filter((f) => flags[f] === STDIN_PATH);
  if (fromStdin.length > 1) {
    throw new UsageError(`--${fromStdin[1]}`, STDIN_PATH, `cannot read standard input: --${fromStdin[0]} already does`);
  }
}
