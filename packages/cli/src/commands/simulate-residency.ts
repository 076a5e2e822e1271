/**
 * `dsv4-kv simulate residency`: the planner's ring-residency checker from the command line.
 */
import {
  SPECULATIVE_RING_SIZE,
  ResidencyScenarioRun,
  RingResidencySimulator,
  describeBatches,
  replayResidency,
  type ReplayResult,
  type ResidencyBatch,
  type ResidencyReport,
  type ResidencyScenario,
} from "@dsv4-kv/planner";
import { UsageError } from "./args.js";
import { NO_PAINT, type Paint, paintFor } from "../colour.js";
import { renderReportHtml, requireWritableReportHtml, writeReportHtml } from "../report-html/render.js";
import {
  type ResidencyInputs,
  type ResidencyPayload,
  type ResidencyRingView,
  replayWindow,
  ringView,
  scenarioWindow,
} from "../report-html/residency-payload.js";
import { type FlagTable, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import { readJsonInput } from "./input.js";
import type { CommandIO } from "./registry.js";
import { PAD_FORMULA_FLAG, refusePadWithFormula, requireRatio, ringLabel } from "./residency-flags.js";

const FLAGS = {
  ratio: { type: "int", min: 1, max: 2 ** 31 - 1, arg: "4|128", help: "compression ratio" },
  ring: {
    type: "int",
    min: 1,
    max: 2 ** 31 - 1,
    help: "ring size in slots (a multiple of the ratio dividing the SWA page)",
  },
  "swa-page": { type: "int", min: 1, max: 2 ** 31 - 1, help: "SWA page size in tokens" },
  "req-ring": { type: "bool", help: "c4: use the request-scoped ring instead of the paged SWA ring" },
  "draft-tokens": {
    type: "int",
    min: 1,
    max: 65535,
    arg: "D",
    help: "draft tokens per verify (the maximum, with --adaptive)",
  },
  adaptive: { type: "bool", help: "draw each verify's D from [1, D]" },
  steps: { type: "int", min: 0, max: 10_000_000, default: 300, help: "batches after the initial prefill" },
  seed: { type: "int", min: 0, max: 0xffffffff, default: 1, help: "random seed" },
  pad: { type: "int", min: 0, max: 2 ** 31 - 1, help: "force the write pad" },
  "pad-formula": { ...PAD_FORMULA_FLAG, arg: "F" },
  replay: { type: "string", arg: "FILE", help: "replay a `prove residency --json` counterexample" },
  json: { type: "bool", help: "print {steps, verifies, violations, firstViolation, ...} per ring" },
  html: {
    type: "string",
    arg: "FILE",
    help: "also write a self-contained HTML page of the ring around the first violation (no network needed)",
  },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--ratio 4|128 --ring N --swa-page N --draft-tokens D\n[--req-ring] [--adaptive] [--steps N] [--seed N]\n[--pad N | --pad-formula derived|pre-fix-device|pre-fix-host] [--json] [--html FILE]",
    "--replay FILE [--json] [--html FILE]",
  ],
  description: `Drives one request's compress-state ring through an initial prefill, then speculative verifies of D draft
tokens with random accept lengths, mixed with plain chunks, decode steps and (paged c4) radix resumes, using
the real planner. Every compression must read the committed value of every position it needs; the first
violation is explained (position, slot, what the slot held, which write clobbered it).

With no ring flags it checks DeepSeek-V4's speculative rings at their limits: c4 ring 16 at 10 draft tokens
and c128 ring 256 at 130 (SWA page 256). Memory stays O(ring + window) however many batches run; on a terminal
a progress bar shows the ETA, and Ctrl-C stops the run and prints the summary so far.

--replay FILE runs the batch sequence of a \`dsv4-kv prove residency --json\` counterexample (its ring and pad
come from the file) and explains its violation.

--html FILE also writes one self-contained page (scripts, styles and data inline) for a bug report: the last
batches before the first violation (prefix, D, accepted tokens, what each wrote), the ring's slots over those
batches with the committed positions, and the slot at fault, the write that clobbered it and the committed
position it destroyed; with no violation, the page says so and draws the last batches. Exit codes are unchanged.`,
  flags: FLAGS,
  exitCodes: [
    [0, "no violation"],
    [1, "a violation"],
    [2, "bad input"],
    [130, "interrupted (Ctrl-C) before a violation"],
  ],
};

interface RingRun {
  label: string;
  scenario: ResidencyScenario;
}

function defaultRuns(steps: number, seed: number): RingRun[] {
  return [
    {
      label: "c4 ring 16 (paged, SWA page 256)",
      scenario: {
        compressRatio: 4,
        ringSize: SPECULATIVE_RING_SIZE[4],
        swaPageSize: 256,
        draftTokens: 10,
        steps,
        seed,
      },
    },
    {
      label: "c128 ring 256 (request ring)",
      scenario: {
        compressRatio: 128,
        ringSize: SPECULATIVE_RING_SIZE[128],
        swaPageSize: 256,
        draftTokens: 130,
        steps,
        seed,
      },
    },
  ];
}

function progressBar(io: CommandIO, label: string): ((step: number, total: number) => void) | undefined {
  if (!io.stderr.isTTY) return undefined;
  let last = -1;
  const started = performance.now();
  return (step, total) => {
    const pct = Math.floor((step / total) * 100);
    if (pct === last && step !== total) return;
    last = pct;
    const filled = Math.round(pct / 4);
    const elapsed = (performance.now() - started) / 1000;
    const eta = step > 0 ? `ETA ${formatSeconds((elapsed * (total - step)) / step)}` : "";
    io.stderr.write(
      `\r${label} [${"#".repeat(filled)}${".".repeat(25 - filled)}] ${String(pct).padStart(3)}% ` +
        `${step}/${total} ${eta}\x1b[K`,
    );
    if (step === total) io.stderr.write("\r\x1b[K");
  };
}

function formatSeconds(s: number): string {
  return s < 60 ? `${s.toFixed(0)} s` : `${Math.floor(s / 60)} min ${(s % 60).toFixed(0).padStart(2, "0")} s`;
}

/** Batches per slice: between slices the event loop runs, so Ctrl-C is seen. */
const SLICE_BATCHES = 5000;

/** Runs a scenario in slices; a SIGINT stops it after the current slice. Returns whether it was interrupted. */
async function runSliced(run: ResidencyScenarioRun): Promise<boolean> {
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
  };
  process.on("SIGINT", onSigint);
  try {
    while (run.advance(SLICE_BATCHES)) {
      await new Promise((resolve) => setImmediate(resolve));
      if (interrupted) return true;
    }
    return false;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/** The batches of a prove residency --json file (a proof or a --find-max failure) and the ring they ran on. */
function replayInput(doc: unknown, path: string): { config: ResidencyScenario; batches: ResidencyBatch[] } {
  const d = (doc ?? {}) as Record<string, unknown>;
  const proof = (typeof d.failure === "object" && d.failure !== null ? d.failure : d) as Record<string, unknown>;
  const ring = proof.ring as Record<string, unknown> | undefined;
  const cx = proof.counterexample as Record<string, unknown> | null | undefined;
  if (typeof ring !== "object" || ring === null) {
    throw new UsageError("--replay", path, "must name a prove residency --json file (it has no ring)");
  }
  if (typeof cx !== "object" || cx === null) {
    throw new UsageError("--replay", path, "holds no counterexample (the proof succeeded): nothing to replay");
  }
  const config = {
    compressRatio: ring.compressRatio as number,
    ringSize: ring.ringSize as number,
    swaPageSize: ring.swaPageSize as number,
    useReqRing: ring.useReqRing as boolean,
    writePad: proof.writePad as number,
    draftTokens: 1,
  };
  return { config, batches: cx.batches as ResidencyBatch[] };
}

function replayLines(config: ResidencyScenario, batches: ResidencyBatch[], r: ReplayResult, paint: Paint): string[] {
  const lines = [`replay on ${ringLabel(config)}, write pad ${config.writePad}:`];
  for (const [i, b] of describeBatches(batches).entries()) lines.push(`  ${i + 1}. ${b}`);
  lines.push(`result: ${r.firstViolation === null ? paint.ok("clean") : paint.bad(r.firstViolation.message)}`);
  return lines;
}

async function replay(
  path: string,
  json: boolean,
  html: string | undefined,
  argv: readonly string[],
  io: CommandIO,
): Promise<number> {
  const { config, batches } = replayInput(await readJsonInput({ field: "--replay", path }, io.stdin), path);
  const r = replayResidency(config, batches);
  if (html !== undefined) {
    const plain = replayLines(config, batches, r, NO_PAINT);
    const view = ringView({
      label: ringLabel(config),
      inputs: {
        ...ringInputs(config),
        draftTokens: null,
        writePad: config.writePad!,
        padSource: "replay",
        steps: null,
        seed: null,
        replayFile: path,
      },
      batchesRun: r.steps,
      verifies: batches.filter((b) => b.kind === "verify").length,
      violations: r.violations,
      firstViolation: r.firstViolation,
      recorded: replayWindow(new RingResidencySimulator(config), batches, r.firstViolation),
    });
    await writeResidencyPage(
      html,
      argv,
      { lines: plain.slice(0, -1), result: plain.at(-1)!, clean: r.violations === 0 },
      [view],
    );
  }
  if (json) {
    io.stdout.write(`${JSON.stringify({ ...r, batches: batches.length }, null, 2)}\n`);
  } else {
    io.stdout.write(`${replayLines(config, batches, r, paintFor(io.stdout, io.env)).join("\n")}\n`);
  }
  return r.violations === 0 ? 0 : 1;
}

function ringInputs(s: ResidencyScenario): ResidencyInputs {
  return {
    compressRatio: s.compressRatio,
    ringSize: s.ringSize,
    swaPageSize: s.swaPageSize,
    useReqRing: s.useReqRing ?? false,
    draftTokens: s.draftTokens,
    adaptive: s.adaptive ?? false,
    writePad: 0,
    padSource: s.writePad !== undefined ? "forced" : (s.padFormula ?? "derived"),
    steps: s.steps ?? 300,
    seed: s.seed ?? 1,
    replayFile: null,
  };
}

/** The command as typed, for the page's heading (arguments with spaces or quotes are JSON-quoted). */
function commandLine(argv: readonly string[]): string {
  const quoted = argv.map((a) => (/^[\w./:=@+-]+$/.test(a) ? a : JSON.stringify(a)));
  return ["dsv4-kv", "simulate", "residency", ...quoted].join(" ");
}

async function writeResidencyPage(
  path: string,
  argv: readonly string[],
  verdict: ResidencyPayload["verdict"],
  rings: ResidencyRingView[],
): Promise<void> {
  const payload: ResidencyPayload = { kind: "residency", command: commandLine(argv), verdict, rings };
  await writeReportHtml(path, renderReportHtml(payload));
}

function resultLine(violations: number, paint: Paint): string {
  if (violations === 0) return `result: ${paint.ok("clean")}`;
  const count = `${violations} violation${violations === 1 ? "" : "s"}`;
  return `result: ${paint.bad(`${count}: committed KV would be silently corrupted`)}`;
}

/** One ring's part of the page: the window replayed in the planner's simulator with the run's seed. */
function scenarioView({ run, report }: { run: RingRun; report: ResidencyReport }): ResidencyRingView {
  return ringView({
    label: run.label,
    inputs: { ...ringInputs(run.scenario), writePad: report.writePad },
    batchesRun: report.steps,
    verifies: report.verifies,
    violations: report.violations,
    firstViolation: report.firstViolation,
    recorded: scenarioWindow(run.scenario, report.steps, report.firstViolation),
  });
}

function describeRun(run: RingRun, r: ResidencyReport, paint: Paint): string {
  const s = run.scenario;
  const padSource = s.writePad !== undefined ? "forced" : (s.padFormula ?? "derived");
  const lines = [
    `${run.label}: write pad ${r.writePad} (${padSource}) serves at most ${r.writePad} draft tokens`,
    `  ${r.steps} batches (seed ${s.seed ?? 1}), ${r.verifies} verifies of ${s.adaptive ? `D in [1, ${s.draftTokens}]` : `D = ${s.draftTokens}`}, final prefix ${r.finalPrefix}`,
  ];
  if (r.violations === 0) {
    lines.push(`  ${paint.ok("clean")}: every compression read the committed value of every position`);
  } else {
    lines.push(`  ${r.violations} violation${r.violations === 1 ? "" : "s"}; first:`);
    lines.push(`  ${r.firstViolation!.message}`);
  }
  return lines.join("\n");
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  if (values.replay !== undefined) {
    const other = Object.keys(values).find((k) => k !== "replay" && k !== "json" && k !== "html");
    if (other !== undefined) throw new UsageError(`--${other}`, undefined, "cannot be combined with --replay");
    if (values.html !== undefined) await requireWritableReportHtml(values.html);
    return replay(values.replay, values.json ?? false, values.html, argv, io);
  }
  const steps = values.steps ?? 300;
  const seed = values.seed ?? 1;
  const padFormula = values["pad-formula"];
  const pad = values.pad;
  refusePadWithFormula(pad, padFormula);

  const ringFlags = [values.ratio, values.ring, values["swa-page"], values["draft-tokens"]];
  let runs: RingRun[];
  if (ringFlags.every((f) => f === undefined)) {
    runs = defaultRuns(steps, seed).map((r) => ({
      ...r,
      scenario: { ...r.scenario, adaptive: values.adaptive ?? false, writePad: pad, padFormula },
    }));
  } else {
    const names = ["ratio", "ring", "swa-page", "draft-tokens"];
    const missing = names.filter((_, i) => ringFlags[i] === undefined);
    if (missing.length > 0)
      throw new UsageError(
        `--${missing[0]!}`,
        undefined,
        `is required when any of --ratio, --ring, --swa-page, --draft-tokens is given${missing.length > 1 ? ` (so are --${missing.slice(1).join(", --")})` : ""}`,
        { missing: missing.map((name) => `--${name}`) },
      );
    const ratio = requireRatio(values.ratio!);
    const scenario: ResidencyScenario = {
      compressRatio: ratio,
      ringSize: values.ring!,
      swaPageSize: values["swa-page"]!,
      useReqRing: values["req-ring"] ?? false,
      draftTokens: values["draft-tokens"]!,
      adaptive: values.adaptive ?? false,
      steps,
      seed,
      writePad: pad,
      padFormula,
    };
    runs = [{ label: ringLabel(scenario), scenario }];
  }

  if (values.html !== undefined) await requireWritableReportHtml(values.html);
  const reports: Array<{ run: RingRun; report: ResidencyReport }> = [];
  let interrupted = false;
  for (const r of runs) {
    const onStep = values.json || steps < 2000 ? undefined : progressBar(io, r.label);
    const scenarioRun = new ResidencyScenarioRun({ ...r.scenario, onStep });
    interrupted = await runSliced(scenarioRun);
    reports.push({ run: r, report: scenarioRun.report() });
    if (interrupted) {
      if (io.stderr.isTTY) io.stderr.write("\r\x1b[K");
      io.stderr.write(`interrupted after ${scenarioRun.done} of ${scenarioRun.total} batches; the summary so far:\n`);
      break;
    }
  }
  const violations = reports.reduce((n, r) => n + r.report.violations, 0);
  if (values.html !== undefined) {
    const lines = reports.flatMap((r) => describeRun(r.run, r.report, NO_PAINT).split("\n"));
    const verdict = { lines, result: resultLine(violations, NO_PAINT), clean: violations === 0 };
    await writeResidencyPage(values.html, argv, verdict, reports.map(scenarioView));
  }
  if (values.json) {
    const one = (x: (typeof reports)[number]) => ({
      ring: {
        compressRatio: x.run.scenario.compressRatio,
        ringSize: x.run.scenario.ringSize,
        swaPageSize: x.run.scenario.swaPageSize,
        useReqRing: !!x.run.scenario.useReqRing,
      },
      draftTokens: x.run.scenario.draftTokens,
      adaptive: !!x.run.scenario.adaptive,
      writePad: x.report.writePad,
      padFormula: x.run.scenario.writePad !== undefined ? "forced" : (x.run.scenario.padFormula ?? "derived"),
      steps: x.report.steps,
      verifies: x.report.verifies,
      violations: x.report.violations,
      firstViolation: x.report.firstViolation,
    });
    const body = reports.length === 1 ? one(reports[0]!) : { rings: reports.map(one), violations };
    io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    const paint = paintFor(io.stdout, io.env);
    io.stdout.write(`${reports.map((r) => describeRun(r.run, r.report, paint)).join("\n")}\n`);
    io.stdout.write(`${resultLine(violations, paint)}\n`);
  }
  if (interrupted) return violations === 0 ? 130 : 1;
  return violations === 0 ? 0 : 1;
}
