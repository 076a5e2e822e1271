/**
 * `dsv4-kv check`: will this DeepSeek-V4 server configuration corrupt KV, how much does every pool take, how
 * many tokens fit, and which setting is wrong. Exit 0 valid, 1 invalid, 2 unusable input.
 */
import {
  type CheckReport,
  RULES,
  type LogComparison,
  type ModelPreset,
  type OverriddenSetting,
  reconcileSglangLog,
} from "@dsv4-kv/server-config";
import { DEFAULT_MODEL } from "@dsv4-kv/server-config/internal";
import { type ConfigFileValues, readConfigFile } from "../check/config-file.js";
import { CHECK_HELP_FLAGS, ENGINES, type Engine, ENV_SWITCHES } from "../check/flags.js";
import { type IgnoredSetting, type Values, launchEnv, parseCheckWords, splitLaunchCommand } from "../check/launch.js";
import { formatLogComparison, formatReport, logComparisonOk, toJson } from "../check/report.js";
import { type LogFileInput, type LogInput, readAgainstLog } from "../check/against-log.js";
import { loadModel, readModelFile } from "../check/model-source.js";
import { checkValueFromText, runCheckPipeline } from "../check/pipeline.js";
import { checkIfV41 } from "../check/v41.js";
import { checkV41AgainstLog } from "../check/v41-against-log.js";
import { hasAgainstLog, runVllmAgainstLog } from "../check/vllm/against-log.js";
import { vllmHelp } from "../check/vllm/help.js";
import { runVllmCheck } from "../check/vllm/run.js";
import { enginesComparisonOf } from "../check/compare-engines.js";
import { formatEnginesComparison } from "../check/compare-engines-text.js";
import { type CheckPayload, checkPayload } from "../report-html/check-payload.js";
import { renderReportHtml, writeReportHtml } from "../report-html/render.js";
import { InputError, UsageError } from "./args.js";
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
V-K*, V-TP*, V-I1), all at once.

With no flags: DeepSeek-V4-Flash, EAGLE 3 steps, top-k 1, 4 draft tokens, on one rank of an 8×H200
tensor-parallel deployment (139 GiB per GPU, each rank loads 1/8 of the checkpoint's weights),
--mem-fraction-static 0.85. The whole checkpoint on one H200 (--tp-size 1) does not fit.

--engine vllm checks a DeepSeek-V4 vLLM server instead (the default is --engine sglang): vLLM's flags as vLLM
spells them or a pasted vllm serve command, vLLM's KV cache groups, block pool and printed figures, and its rules
(VL-*). \`dsv4-kv check --engine vllm --help\` shows its usage and flags.

Budget: --kv-budget-bytes N, or --gpu-memory-gib/--weights-gib/--runtime-gib with --mem-fraction-static.
Environment switches may also come from SGLANG_OPT_USE_ONLINE_COMPRESS, SGLANG_EXPERIMENTAL_ONLINE_C128_MTP
and SGLANG_DSV4_COMPRESS_STATE_DTYPE (flags and --config win).

Server flags are SGLang's, as it spells them, with its aliases (--tp/--tp-size, --dp, --ep, --model/--model-path,
…), as --flag value or --flag=value, here, after -- in a pasted launch command, or as keys of --config (YAML or
JSON, dashes or underscores, None = unset). A setting given twice is taken as SGLang's loader takes it and the
report says which one won (a YAML key repeated: its last value; two of SGLang's spellings: the later; a flag over
the file); a snake_case twin of a flag, or a JSON key twice, is refused naming both. Flags that do not change KV
state are accepted and listed as ignored; the full table is docs/reference/sglang-flags.md.

--against-log FILE reads an SGLang server's start-up log as operators paste it: cut, wrapped, mixed with prose
and tables, several servers in one file. Each sizing line is read on its own (one that cannot be read is listed
as skipped, a cut value as truncated, a line wrapped by a person is joined); the file splits into sections at
each server_args line, launch command and restart, each checked on its own (--section N picks one). A section's
server_args (or launch command) and SGLANG_* environment supply the arguments, its printed KV budget the budget
(an input, not a match; flags win), its platform (Ascend NPU, ROCm, CUDA) the start-up rules that apply. Every
figure is computed from the logged figures it depends on and compared at the log's precision, naming SGLang's
configurator generation and the evidence; each difference carries its cause, found by recomputing under the
arithmetic real servers used (generations, rings, layer count, state dtype, FP4 indexer, HiSparse, page size,
SWA ratio, model), or says that none explains it and gives the residual. Exit 1 on a difference or a failed rule
in any section; a section without sizing lines is checked as a launch.

--compare-engines also shows the deployment on vLLM (the same model, context, page size, dtype and speculation;
vLLM gets SGLang's KV bytes unless --compare-gpu-memory-utilization is given): tokens, concurrency and bytes per
token of every cache kind on both engines, and each difference as a named cause with its size.

--html FILE also writes the report as one self-contained page (scripts, styles and data inline, no network):
the verdict, every error and warning with its fix, the resolved arguments, and charts of the memory per pool,
the capacity against the draft-token count, the ring during one verify and the residency run. Its controls
(model, tp/dp, draft tokens and algorithm, memory fraction or budget, online compress, state dtype, context
length) rerun this check in the browser; the URL fragment holds them by flag name
(#speculative-num-draft-tokens=11&tp-size=4). Output and exit code are unchanged.`,
  flags: CHECK_HELP_FLAGS,
  exitCodes: [
    [0, "the configuration is valid (with --against-log: every compared figure matches and no rule fails)"],
    [1, "it is not (with --against-log: a figure differs or a rule fails; the report says which)"],
    [2, "unusable input (with --against-log: nothing in the file is DSV4 start-up material)"],
  ],
};

export const help: string = renderHelp(["check"], spec);

/** `check --help` is the SGLang path's; with `--engine vllm` among the options, in any order, the vLLM path's. */
export function helpFor(words: readonly string[]): { text: string; command: string } {
  if (findEngine(words)?.engine === "vllm") return { text: vllmHelp, command: "dsv4-kv check --engine vllm --help" };
  return { text: help, command: "dsv4-kv check --help" };
}

/** What the command line gave: flags (options first, then a launch command's), and the launch command's env. */
interface CheckInput {
  flags: Values;
  env: Record<string, string>;
  ignored: IgnoredSetting[];
  spelling: Record<string, string>;
}

export async function run(given: string[], io: CommandIO): Promise<number> {
  const { engine, argv } = splitEngine(given);
  // A vLLM log is reconciled on its own path (check/vllm/against-log.ts), with vLLM's flags as overrides.
  if (engine === "vllm" && hasAgainstLog(argv)) return runVllmAgainstLog(argv, io);
  const dash = argv.indexOf("--");
  if (engine === "vllm")
    return runVllmCheck(dash < 0 ? argv : argv.slice(0, dash), dash < 0 ? null : argv.slice(dash + 1), io);
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

/** The first `--engine V` or `--engine=V` before any `--`: its value as typed, where, and how many words. */
function findEngine(words: readonly string[]): { engine: string | undefined; at: number; count: number } | null {
  const end = words.indexOf("--");
  const options = end < 0 ? words.length : end;
  for (let at = 0; at < options; at++) {
    const w = words[at]!;
    if (w.startsWith("--engine=")) return { engine: w.slice("--engine=".length), at, count: 1 };
    if (w === "--engine") return { engine: words[at + 1], at, count: 2 };
  }
  return null;
}

/** `--engine sglang|vllm` before any `--` (default sglang): the engine, and the words without it. */
function splitEngine(words: readonly string[]): { engine: Engine; argv: string[] } {
  const found = findEngine(words);
  if (found === null) return { engine: "sglang", argv: [...words] };
  const { engine, at, count } = found;
  if (!ENGINES.includes(engine as Engine))
    throw new UsageError("--engine", engine, `must be ${ENGINES.join(" or ")}`, { choices: [...ENGINES] });
  return { engine: engine as Engine, argv: [...words.slice(0, at), ...words.slice(at + count)] };
}

/** One check: its report, and under --against-log the section it came from and the reconciliation. */
interface CheckRun {
  report: ReturnType<typeof runCheckPipeline>["report"];
  json: Record<string, unknown>;
  comparison: LogComparison | null;
  section: LogInput | null;
  ok: boolean;
  payload: Parameters<typeof checkPayload>[0];
  ignored: IgnoredSetting[];
  overridden: OverriddenSetting[];
  /** With --compare-engines: the text section (null without). */
  enginesText: string | null;
}

const BUDGET_FLAGS = ["kv-budget-bytes", "gpu-memory-gib", "weights-gib", "runtime-gib"];

async function check(input: CheckInput, io: CommandIO): Promise<number> {
  const { flags } = input;
  refuseStdinTwice(flags);
  if (flags.section !== undefined && typeof flags["against-log"] !== "string")
    throw new UsageError("--section", flags.section, "picks a section of --against-log FILE: give --against-log too");
  const log = typeof flags["against-log"] === "string" ? await readAgainstLog(flags["against-log"], io.stdin) : null;
  if (!log) {
    const values = await mergeValues(input, null, io);
    const v41 = await checkIfV41(values.merged, input.spelling, io);
    if (v41 !== null) return v41;
    const run = await runOne(input, null, io, values);
    writeRun(run, io, flags.json === true, null);
    return run.ok ? 0 : 1;
  }
  const picked = pickSections(log, flags.section);
  const v41 = await checkV41AgainstLog(flags, input.spelling, log, picked, io);
  if (v41 !== null) return v41;
  const runs: CheckRun[] = [];
  for (const section of picked) runs.push(await runOne(input, section, io));
  // The first section with sizing lines stands for the file at the top level of --json and in --html.
  const primary = runs.find((r) => (r.section?.parsed.sizingLines.length ?? 0) > 0) ?? runs[0]!;
  const sections = runs.map((r) => {
    const { schemaVersion: _, logComparison: __, enginesComparison, ...report } = r.json;
    const engines = enginesComparison === undefined ? {} : { enginesComparison };
    return { section: r.section!.parsed.section, ok: r.ok, report, logComparison: r.comparison!, ...engines };
  });
  const json = { ...primary.json, sections };
  if (typeof primary.payload.values.html === "string") {
    const payload = checkPayload({ ...primary.payload, report: json as CheckPayload["report"] });
    await writeReportHtml(primary.payload.values.html, renderReportHtml(payload));
  }
  if (flags.json) io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else for (const run of runs) writeRun(run, io, false, runs.length > 1 ? log.sections.length : null);
  if (runs.length > 1 && !flags.json) io.stdout.write(sectionsSummary(runs));
  return runs.every((r) => r.ok) ? 0 : 1;
}

function pickSections(log: LogFileInput, section: unknown): LogInput[] {
  if (section === undefined) return log.sections;
  const n = section as number;
  const picked = log.sections[n - 1];
  const spans = log.sections.map((s) => `${s.parsed.firstLine}-${s.parsed.lastLine}`);
  if (!picked)
    throw new UsageError(
      "--section",
      n,
      `must name a section of ${log.path}: it has ${log.sections.length} (lines ${spans.join(", ")})`,
      { sections: log.sections.length },
    );
  return [picked];
}

/** The flag values of one check: env < the log's server_args < config file < flags, and the settings not read. */
async function mergeValues(input: CheckInput, log: LogInput | null, io: CommandIO): Promise<MergedValues> {
  const { flags } = input;
  const ignored = [...input.ignored];
  // Precedence: defaults < env (the launch command's assignments over the process's, or over the log's) < the
  // log's server_args < config file < flags. A log's environment replaces this process's: it is the server's.
  const merged: Values = {};
  for (const [envName, flag] of Object.entries(ENV_SWITCHES)) {
    const raw = input.env[envName] ?? (log ? log.env : io.env)[envName];
    if (raw === undefined || raw === "") continue;
    const fromLog = log !== null && input.env[envName] === undefined;
    try {
      merged[flag] = checkValueFromText(envName, flag, raw);
    } catch (error) {
      // A log shows the server's environment as it was: a value this check refuses is listed, not fatal.
      if (!fromLog || !(UsageError.isInstance(error) || InputError.isInstance(error))) throw error;
      ignored.push({ name: `${envName} (from the log)`, value: raw, effect: "unmodelled" });
    }
  }
  if (log) {
    Object.assign(merged, log.values);
    ignored.unshift(...log.ignored);
  }
  const overridden: OverriddenSetting[] = [];
  let fromFile: ConfigFileValues["sources"] = {};
  if (typeof flags.config === "string") {
    const file = await readConfigFile(flags.config, io.stdin);
    Object.assign(merged, file.values);
    ignored.unshift(...file.ignored);
    overridden.push(...file.overridden);
    fromFile = file.sources;
  }
  for (const [name, value] of Object.entries(flags)) {
    if (value === undefined || name === "config") continue;
    merged[name] = value;
    const lost = fromFile[name];
    // SGLang puts the file's settings before the command line's, so argparse keeps the flag (D35).
    if (lost !== undefined) {
      const won = { source: "flag" as const, name: input.spelling[name] ?? `--${name}`, value, line: null };
      overridden.push({ flag: `--${name}`, won, lost: [lost], rule: "flag-over-config" });
    }
  }
  return { merged, ignored, overridden };
}

type MergedValues = { merged: Values; ignored: IgnoredSetting[]; overridden: OverriddenSetting[] };

async function runOne(
  input: CheckInput,
  log: LogInput | null,
  io: CommandIO,
  values?: MergedValues,
): Promise<CheckRun> {
  const { merged, ignored, overridden } = values ?? (await mergeValues(input, log, io));
  const { model, modelResolvedAs } = await modelOf(merged, input, io.stdin);

  // With a log: the budget it printed unless a budget flag is given, and SGLang's Gen B arithmetic.
  const budgetGiven = BUDGET_FLAGS.some((f) => merged[f] !== undefined);
  // Without a budget flag the logged budget is an input of the comparison (even one the check cannot use).
  const budgetFromLog = log !== null && !budgetGiven;
  if (budgetFromLog && log.budgetBytes !== null) merged["kv-budget-bytes"] = log.budgetBytes;
  if (log && merged.sizing === undefined) merged.sizing = "sglang-gen-b";
  const { report, budget } = runCheckPipeline({ values: merged, model, modelResolvedAs, ignored, overridden });
  const reconciled = log ? reconcileSglangLog(log.parsed, report, { budgetFromLog }) : null;
  const { report: checked, comparison } = reconciled ? rulesForLog(report, reconciled) : { report, comparison: null };
  const engines = enginesComparisonOf(merged, checked, model);
  const json = (comparison ? { ...toJson(checked), logComparison: comparison } : toJson(checked)) as Record<
    string,
    unknown
  >;
  if (engines) json.enginesComparison = engines;
  const ok = checked.ok && (comparison === null || logComparisonOk(comparison));
  const payload = {
    values: merged,
    model,
    modelResolvedAs,
    ignored,
    overridden,
    budget,
    report: json as CheckPayload["report"],
  };
  if (!log && typeof merged.html === "string")
    await writeReportHtml(merged.html, renderReportHtml(checkPayload(payload)));
  const enginesText = engines ? formatEnginesComparison(engines) : null;
  return { report: checked, json, comparison, section: log, ok, payload, ignored, overridden, enginesText };
}

/**
 * The check sizes with Gen B's arithmetic. For a log of an earlier configurator that sized its pools (a positive
 * full_token or full is logged), the rules that judge Gen B's sizing of the budget (sized and check stages) do not
 * describe that server: they are listed in the comparison as not applied, and leave the verdict.
 */
function rulesForLog(report: CheckReport, c: LogComparison): { report: CheckReport; comparison: LogComparison } {
  if (c.generation !== "gen-a" && c.generation !== "gen-a-pools") return { report, comparison: c };
  const sized = c.figures.find((f) => (f.name === "full_token" || f.name === "pools.full") && Number(f.logged) > 0);
  if (!sized) return { report, comparison: c };
  const bySizing = (rule: string) => RULES[rule as keyof typeof RULES]?.stage !== "resolve";
  const dropped = report.errors.filter((e) => bySizing(e.rule));
  if (dropped.length === 0) return { report, comparison: c };
  const errors = report.errors.filter((e) => !bySizing(e.rule));
  const reason =
    `raised by Gen B's sizing of this budget; the server's ${c.generation} configurator sized ${sized.name}=` +
    `${sized.logged} from it (line ${sized.line}): not applied to this log`;
  return {
    report: { ...report, errors, ok: errors.length === 0 },
    comparison: { ...c, rulesNotApplied: dropped.map((e) => ({ rule: e.rule, reason })) },
  };
}

async function modelOf(
  merged: Values,
  input: CheckInput,
  stdin: CommandIO["stdin"],
): Promise<{ model: ModelPreset; modelResolvedAs: string }> {
  if (typeof merged["model-config"] === "string") {
    if (merged.model !== undefined)
      throw new UsageError("--model", merged.model, "cannot be combined with --model-config: give a preset or a file");
    return {
      model: await readModelFile(merged["model-config"], stdin),
      modelResolvedAs: `${merged["model-config"]} (--model-config)`,
    };
  }
  const name = typeof merged.model === "string" ? merged.model : DEFAULT_MODEL;
  const loaded = await loadModel(name, input.spelling.model ?? "--model");
  return { model: loaded.model, modelResolvedAs: loaded.resolvedAs };
}

/** The run's text report (or JSON without a log), with the log's comparison and a section header when several. */
function writeRun(run: CheckRun, io: CommandIO, json: boolean, sectionCount: number | null) {
  const paint = paintFor(io.stdout, io.env);
  const bad = paintFor(io.stderr, io.env).bad;
  if (json) {
    io.stdout.write(`${JSON.stringify(run.json, null, 2)}\n`);
    return;
  }
  const p = run.section?.parsed;
  const where = p
    ? `section ${p.section}${sectionCount ? ` of ${sectionCount}` : ""} (lines ${p.firstLine}-${p.lastLine})`
    : "";
  if (p && sectionCount) io.stdout.write(`\n=== ${where}, started by ${p.startedBy} ===\n`);
  io.stdout.write(formatReport(run.report, paint));
  if (run.enginesText) io.stdout.write(run.enginesText);
  if (run.ignored.length > 0) io.stdout.write(ignoredSection(run.ignored));
  if (run.overridden.length > 0) io.stdout.write(overriddenSection(run.overridden));
  if (run.section && run.comparison)
    io.stdout.write(formatLogComparison(run.comparison, run.section.path, run.section.summary, paint));
  const prefix = p && sectionCount ? `dsv4-kv check (${where})` : "dsv4-kv check";
  if (!run.report.ok) {
    const n = run.report.errors.length;
    io.stderr.write(`${bad(`${prefix}: the configuration is invalid (${n} error${n === 1 ? "" : "s"})`)}\n`);
  }
  const c = run.comparison;
  if (c && !logComparisonOk(c)) {
    const differ = c.figures.filter((f) => f.match === false).length;
    const what =
      c.generation === "unknown"
        ? "the log comes from a configurator generation dsv4-kv does not model"
        : `the log differs from ours in ${differ} figure${differ === 1 ? "" : "s"}`;
    io.stderr.write(`${bad(`${prefix}: ${what}`)}\n`);
  }
}

function sectionsSummary(runs: readonly CheckRun[]): string {
  const rows = runs.map((r) => {
    const p = r.section!.parsed;
    const c = r.comparison!;
    const differ = c.figures.filter((f) => f.match === false).length;
    const what = c.nothingToReconcile
      ? "launch checked, nothing to reconcile"
      : `${c.generation} on ${c.platform}, ${differ} figure(s) differ, ${c.truncated.length} cut`;
    const where = `section ${p.section} (lines ${p.firstLine}-${p.lastLine}, ${p.startedBy})`;
    return `  ${where}: ${r.ok ? "ok" : "NOT ok"}: ${what}`;
  });
  return `\nSections of the log (--section N picks one):\n${rows.join("\n")}\n`;
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

const WHY: Readonly<Record<OverriddenSetting["rule"], string>> = {
  "yaml-repeated-key": "a YAML key given twice keeps its last value",
  "later-spelling": "two spellings of one flag: SGLang's parser keeps the later",
  "flag-over-config": "a command-line flag wins over --config",
};

/** Settings given more than once that SGLang accepts: which one won, what it replaced, and why. */
function overriddenSection(overridden: readonly OverriddenSetting[]): string {
  const place = (s: OverriddenSetting["won"]) =>
    `${s.name} ${JSON.stringify(s.value)}${s.line === null ? "" : ` (line ${s.line})`}`;
  const lines = overridden.map(
    (o) => `  ${o.flag}: ${place(o.won)} wins over ${o.lost.map(place).join(", ")}: ${WHY[o.rule]}`,
  );
  return `\nGiven more than once (the one SGLang takes wins):\n${lines.join("\n")}\n`;
}

/** Standard input can be read once: at most one file flag may be `-`. */
function refuseStdinTwice(flags: Values): void {
  const fromStdin = ["against-log", "config", "model-config"].filter((f) => flags[f] === STDIN_PATH);
  if (fromStdin.length > 1) {
    throw new UsageError(`--${fromStdin[1]}`, STDIN_PATH, `cannot read standard input: --${fromStdin[0]} already does`);
  }
}
