/**
 * `dsv4-kv check`: will this DeepSeek-V4 server configuration corrupt KV, how much does every pool take, how
 * many tokens fit, and which setting is wrong. Exit 0 valid, 1 invalid, 2 unusable input.
 */
import {
  DEFAULT_DEPLOYMENT,
  DEFAULT_MODEL,
  checkServerConfig,
  parseCustomModel,
  reconcileSglangLog,
  parseServerArgs,
  type BudgetInput,
  type ConfigNote,
  type DeploymentDefault,
  type ModelPreset,
} from "@dsv4-kv/server-config";
import { parseFailure, readConfigFile, readText } from "../check/config-file.js";
import { ALL_FLAGS, ENV_SWITCHES, SERVER_FLAGS } from "../check/flags.js";
import {
  type IgnoredSetting,
  type Value,
  type Values,
  launchEnv,
  parseCheckWords,
  splitLaunchCommand,
} from "../check/launch.js";
import { formatLogComparison, formatReport, logComparisonOk, toJson } from "../check/report.js";
import { readAgainstLog } from "../check/against-log.js";
import { loadModel } from "../check/model-source.js";
import { InputError, UsageError } from "./args.js";
import { paintFor } from "../colour.js";
import { flagValueFromText } from "./flags.js";
import { type CommandSpec, renderHelp } from "./help.js";
import type { CommandIO } from "./registry.js";

export const spec: CommandSpec = {
  usage: [
    "[--model MODEL | --model-config FILE] [--config FILE] [server flags] [--json]",
    "[dsv4-kv options] -- [NAME=value …] sglang serve [server flags]",
    "[dsv4-kv options] -- [NAME=value …] python -m sglang.launch_server [server flags]",
    "--against-log FILE [flags] [--json]",
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
ours at the log's precision, naming SGLang's configurator generation and the evidence; exit 1 on a difference.`,
  flags: ALL_FLAGS,
  exitCodes: [
    [0, "the configuration is valid"],
    [1, "it is not"],
    [2, "unusable input"],
  ],
};

export const help: string = renderHelp(["check"], spec);

const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);

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

/** An environment switch: a boolean word, or a value parsed like the flag it stands for. */
function envValue(envName: string, flag: string, raw: string): Value {
  const spec = ALL_FLAGS[flag]!;
  if (spec.type !== "bool") return flagValueFromText(envName, spec, raw);
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word) || FALSE_WORDS.has(word)) return TRUE_WORDS.has(word);
  throw new UsageError(envName, raw, `must be one of ${[...TRUE_WORDS, ...FALSE_WORDS].join(", ")}`);
}

async function check(input: CheckInput, io: CommandIO): Promise<number> {
  const { flags } = input;
  const ignored = [...input.ignored];
  // Precedence: defaults < env (the launch command's assignments over the process's, or over the log's) < the
  // log's server_args < config file < flags. A log's environment replaces this process's: it is the server's.
  const log = typeof flags["against-log"] === "string" ? await readAgainstLog(flags["against-log"]) : null;
  const merged: Values = {};
  for (const [envName, flag] of Object.entries(ENV_SWITCHES)) {
    const raw = input.env[envName] ?? (log ? log.env : io.env)[envName];
    if (raw === undefined || raw === "") continue;
    merged[flag] = envValue(envName, flag, raw);
  }
  if (log) {
    Object.assign(merged, log.values);
    ignored.unshift(...log.ignored);
  }
  if (typeof flags.config === "string") {
    const file = await readConfigFile(flags.config);
    Object.assign(merged, file.values);
    ignored.unshift(...file.ignored);
  }
  for (const [name, value] of Object.entries(flags)) if (value !== undefined && name !== "config") merged[name] = value;

  // Model.
  let model: ModelPreset;
  let modelResolvedAs: string;
  if (typeof merged["model-config"] === "string") {
    model = await readModelFile(merged["model-config"]);
    modelResolvedAs = `${merged["model-config"]} (--model-config)`;
    if (merged.model !== undefined)
      throw new UsageError("--model", merged.model, "cannot be combined with --model-config: give a preset or a file");
  } else {
    const name = typeof merged.model === "string" ? merged.model : DEFAULT_MODEL;
    ({ model, resolvedAs: modelResolvedAs } = await loadModel(name, input.spelling.model ?? "--model"));
  }

  // Default run: EAGLE 3 steps, top-k 1, 4 draft tokens (steps follow the draft count when only that is given).
  const cliNotes: ConfigNote[] = [];
  const applyDefault = (flag: string, value: number | string, reason: string) => {
    if (merged[flag] !== undefined) return;
    merged[flag] = value;
    cliNotes.push({
      field: flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
      kind: "defaulted",
      from: null,
      to: value,
      reason,
    });
  };
  // The default deployment (a server-config preset); steps follow the draft count when only that is given.
  const deployment = DEFAULT_DEPLOYMENT;
  const applyAll = (defaults: readonly DeploymentDefault[]) => {
    const stepsOpen =
      merged["speculative-num-steps"] === undefined && merged["speculative-num-draft-tokens"] === undefined;
    for (const d of defaults) {
      const isStep = d.flag === "speculative-num-steps" || d.flag === "speculative-num-draft-tokens";
      if (!isStep || stepsOpen) applyDefault(d.flag, d.value, d.reason);
    }
  };
  const algorithm = merged["speculative-algorithm"];
  if (algorithm === undefined) applyAll(deployment.speculative);
  else if (typeof algorithm === "string" && ["none", "null", ""].includes(algorithm.toLowerCase()))
    delete merged["speculative-algorithm"];
  else if (algorithm === "EAGLE") applyAll(deployment.eagleSteps);
  const tpDefaulted = merged["tp-size"] === undefined;
  applyDefault(deployment.tpSize.flag, deployment.tpSize.value, deployment.tpSize.reason);

  const serverRaw: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(merged))
    if (name in SERVER_FLAGS && value !== undefined) serverRaw[name] = value;
  delete serverRaw.model;
  const parsed = parseServerArgs({ ...serverRaw, model: model.name });
  if (!parsed.ok) throw serverArgsError(parsed.issues);
  const args = parsed.args;

  // Budget: with a log, the one it printed unless a budget flag is given.
  const budgetGiven = ["kv-budget-bytes", "gpu-memory-gib", "weights-gib", "runtime-gib"].some(
    (f) => merged[f] !== undefined,
  );
  if (log && log.budgetBytes !== null && !budgetGiven) merged["kv-budget-bytes"] = log.budgetBytes;
  if (log && merged.sizing === undefined) merged.sizing = "sglang-gen-b";
  let budget: BudgetInput;
  if (merged["kv-budget-bytes"] !== undefined) {
    budget = { kind: "bytes", kvBudgetBytes: merged["kv-budget-bytes"] as number };
  } else {
    const ranks = args.tpSize * args.ppSize;
    let weightsGiB = merged["weights-gib"] as number | undefined;
    let assumption: string;
    if (weightsGiB !== undefined) assumption = `each rank loads ${weightsGiB} GiB of weights (--weights-gib)`;
    else {
      if (!Number.isFinite(model.checkpointGiB))
        throw new UsageError(
          "--weights-gib",
          undefined,
          `is needed: the model config of ${model.name} has no checkpointGiB (or give --kv-budget-bytes)`,
        );
      weightsGiB = model.checkpointGiB / ranks;
      assumption = `${tpDefaulted ? `${deployment.description}: ` : ""}each of the ${ranks} rank(s) (tp ${args.tpSize} × pp ${args.ppSize}) holds 1/${ranks} of the ${model.checkpointGiB.toFixed(2)} GiB checkpoint = ${weightsGiB.toFixed(2)} GiB of weights; KV is not sharded by TP (one KV head)`;
    }
    const gpuMemoryGiB = (merged["gpu-memory-gib"] as number | undefined) ?? deployment.gpuMemoryGiB;
    const runtimeGiB = (merged["runtime-gib"] as number | undefined) ?? 0;
    assumption += `; ${gpuMemoryGiB} GiB free before load${merged["gpu-memory-gib"] === undefined ? ` (${deployment.gpuName})` : ""}; ${runtimeGiB} GiB runtime overhead`;
    budget = { kind: "gpu", gpuMemoryGiB, weightsGiB, runtimeGiB, assumption };
  }
  // The flag table allows only these two.
  const sizing = (merged.sizing ?? "exact") as "exact" | "sglang-gen-b";

  const report = checkServerConfig(args, model, budget, {
    modelResolvedAs,
    ignored,
    sizing,
    residencySteps: merged["residency-steps"] as number | undefined,
  });
  report.notes.unshift(...cliNotes.filter((note) => !report.notes.some((other) => other.field === note.field)));
  const comparison = log ? reconcileSglangLog(log.parsed, report) : null;
  const json = comparison ? { ...toJson(report), logComparison: comparison } : toJson(report);
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

const kebab = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * server-config's schema refused the arguments (the flag table above catches types and ranges first, so this is
 * rare). Its issues are shown as they come, the first one's field named as its flag.
 */
function issueText(issue: unknown): string {
  return typeof issue === "string" ? issue : String((issue as { message?: unknown } | null)?.message ?? issue);
}

function serverArgsError(issues: readonly unknown[]): UsageError {
  const first = issues[0] as { field?: unknown; path?: unknown; value?: unknown } | string | undefined;
  const text = issues.map(issueText);
  const field = typeof first === "object" && typeof first.field === "string" ? `--${kebab(first.field)}` : "";
  const value = typeof first === "object" ? first.value : undefined;
  return new UsageError(field, value, `server arguments refused: ${text.join("; ")}`, { issues: [...issues] });
}

async function readModelFile(path: string): Promise<ModelPreset> {
  const text = await readText("--model-config", path);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw parseFailure("--model-config", path, "JSON", error);
  }
  const result = parseCustomModel(raw);
  if (!result.ok) {
    throw new InputError(
      "--model-config",
      path,
      `is not a model config: ${result.issues.map(issueText).join("; ").slice(0, 500)}`,
      {
        issues: [...result.issues],
      },
    );
  }
  return result.model;
}
