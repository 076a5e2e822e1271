/**
 * `dsv4-kv check --against-log FILE` for a DeepSeek-V4.1 server: each section of the log checked with V4.1's check
 * (its arguments: the section's server_args or launch command under the flags; its budget: the one it printed) and
 * reconciled figure by figure with server-config's `reconcileV41Log` (docs/reference/deepseek-v4.1.md §8).
 */
import { type LogComparison, type V41CheckReport, reconcileV41Log, v41LoggedArguments } from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";
import type { CommandIO } from "../commands/registry.js";
import type { LogFileInput, LogInput } from "./against-log.js";
import type { Values } from "./launch.js";
import { loadV41Model } from "./model-source.js";
import { formatLogComparison, logComparisonOk } from "./report.js";
import { formatV41Report, runV41Check, v41Json } from "./v41.js";
import { renderReportHtml, writeReportHtml } from "../report-html/render.js";
import { v41Payload } from "../report-html/v41-payload.js";

const BUDGET_FLAGS = ["kv-budget-bytes", "gpu-memory-gib", "weights-gib", "runtime-gib"];

interface V41Run {
  section: LogInput;
  report: V41CheckReport;
  comparison: LogComparison;
  ok: boolean;
}

/** The section's values under the flags (flags win), and whether its model is a V4.1 one. */
async function sectionValues(flags: Values, section: LogInput, flag: string) {
  const merged: Values = { ...section.values };
  for (const [name, value] of Object.entries(flags)) if (value !== undefined) merged[name] = value;
  const model = typeof merged.model === "string" ? await loadV41Model(merged.model, flag) : null;
  return { merged, model };
}

/**
 * The V4.1 check of every picked section when their model is DeepSeek-V4.1 (from --model or the log's own
 * arguments): the exit code after writing the report. Null when no section is V4.1's (the V4 check reads the log).
 */
export async function checkV41AgainstLog(
  flags: Values,
  spelling: Readonly<Record<string, string>>,
  log: LogFileInput,
  sections: readonly LogInput[],
  io: CommandIO,
): Promise<number | null> {
  const flag = spelling.model ?? "--model";
  const read = await Promise.all(sections.map((s) => sectionValues(flags, s, flag)));
  const v41 = read.filter((r) => r.model !== null).length;
  if (v41 === 0) return null;
  if (v41 < read.length)
    throw new UsageError("--against-log", log.path, "mixes DeepSeek-V4.1 and V4 servers: pick one with --section N");
  const runs = sections.map((section, i) => runSection(section, read[i]!.merged, read[i]!.model!));
  const { primary, json } = runsJson(runs);
  if (flags.json === true) io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else writeRuns(runs, io);
  if (typeof flags.html === "string") {
    const model = read[runs.indexOf(primary)]!.model!.model;
    await writeReportHtml(flags.html, renderReportHtml(v41Payload(primary.report, json, model)));
  }
  return runs.every((r) => r.ok) ? 0 : 1;
}

function runSection(
  section: LogInput,
  merged: Values,
  loaded: NonNullable<Awaited<ReturnType<typeof loadV41Model>>>,
): V41Run {
  const budgetGiven = BUDGET_FLAGS.some((f) => merged[f] !== undefined);
  const values = { ...merged };
  if (!budgetGiven && section.budgetBytes !== null) values["kv-budget-bytes"] = section.budgetBytes;
  // A server whose arguments the log shows ran without drafts unless they name an algorithm (no check default).
  const argsShown = section.parsed.serverArgs !== null || section.parsed.launchCommand !== null;
  if (argsShown && values["speculative-algorithm"] === undefined) {
    values["speculative-algorithm"] = "none";
    section.summary.push("no speculative algorithm in the server's arguments: it ran without drafts");
  }
  // What the log shows only through its figures: the request count and the cap-mode SWA cap SGLang computed.
  const logged = v41LoggedArguments(section.parsed.sizingLines);
  if (values["max-running-requests"] === undefined && logged.maxRunningRequests) {
    values["max-running-requests"] = logged.maxRunningRequests.value;
    section.summary.push(
      `max running requests ${logged.maxRunningRequests.value} from line ${logged.maxRunningRequests.line}`,
    );
  }
  const cap = values["swa-full-tokens-ratio"] === undefined ? logged.swaCapTokens : null;
  if (cap) section.summary.push(`cap-mode SWA: request_cap+headroom ${cap.value} from line ${cap.line}`);
  const report = runV41Check(values, loaded.model, loaded.resolvedAs, { swaCapTokens: cap?.value ?? null });
  if (report.config === null) return { section, report, comparison: emptyComparison(section, report), ok: false };
  const comparison = reconcileV41Log(section.parsed, report.config, {
    budgetBytes: budgetGiven ? report.availableBytes : null,
    requestsGiven: merged["max-running-requests"] !== undefined,
  });
  // The server's own sizing is what the log shows: our sizing refusals of its budget do not judge it.
  const ruleErrors = report.errors.filter((e) => e.rule !== null);
  return { section, report, comparison, ok: ruleErrors.length === 0 && logComparisonOk(comparison) };
}

function emptyComparison(section: LogInput, report: V41CheckReport): LogComparison {
  const p = section.parsed;
  const rules = report.errors.map((e) => e.rule).join(", ");
  return {
    section: p.section,
    firstLine: p.firstLine,
    lastLine: p.lastLine,
    startedBy: p.startedBy,
    generation: "dev-dsv41",
    evidence: [],
    platform: section.platform.platform,
    platformEvidence: section.platform.evidence,
    figures: [],
    skipped: p.skipped,
    truncated: [],
    nothingToReconcile: `the arguments are refused (${rules}): nothing was sized to reconcile`,
  };
}

/** `--json`'s object (and the page's data): the first section with sizing lines at the top level, every section. */
function runsJson(runs: readonly V41Run[]): { primary: V41Run; json: Record<string, unknown> } {
  const sections = runs.map((r) => ({
    section: r.section.parsed.section,
    ok: r.ok,
    report: r.report,
    logComparison: r.comparison,
  }));
  const primary = runs.find((r) => r.section.parsed.sizingLines.length > 0) ?? runs[0]!;
  const json = v41Json(primary.report, { ok: runs.every((r) => r.ok), logComparison: primary.comparison, sections });
  return { primary, json };
}

function writeRuns(runs: readonly V41Run[], io: CommandIO) {
  for (const run of runs) {
    const p = run.section.parsed;
    if (runs.length > 1) io.stdout.write(`\n=== section ${p.section} (lines ${p.firstLine}-${p.lastLine}) ===\n`);
    io.stdout.write(formatV41Report(run.report));
    io.stdout.write(formatLogComparison(run.comparison, run.section.path, run.section.summary));
    const differing = run.comparison.figures.filter((f) => f.match === false).length;
    io.stdout.write(
      `${run.ok ? "Log reconciled" : "Log NOT reconciled"}: ${differing} figure(s) differ, ` +
        `${run.comparison.figures.filter((f) => f.match === true).length} match\n`,
    );
  }
}
