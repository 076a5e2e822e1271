/**
 * `dsv4-kv simulate residency`: the planner's ring-residency checker from the command line.
 */
import {
  SPECULATIVE_RING_SIZE,
  replayResidency,
  type ReplayResult,
  type ResidencyBatch,
  type ResidencyReport,
  type ResidencyScenario,
  windowSize,
} from "@dsv4-kv/planner";
import { ResidencyScenarioRun, describeBatches } from "@dsv4-kv/planner/internal";
import { InputError, LimitError, UsageError } from "./args.js";
import { NO_PAINT, type Paint, paintFor } from "../colour.js";
import { renderReportHtml, requireWritableReportHtml, writeReportHtml } from "../report-html/render.js";
import {
  type ResidencyInputs,
  type ResidencyPayload,
  type ResidencyRingView,
  WindowRecorder,
  ringView,
} from "../report-html/residency-payload.js";
import { type FlagTable, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import { readJsonInput } from "./input.js";
import {
  DEFAULT_TIME_LIMIT_SECONDS,
  heapBytesFree,
  type Deadline,
  EXIT_PARTIAL,
  type Progress,
  QUIET_FLAG,
  completionJson,
  count,
  partialAfter,
  partialLine,
  startTimedRun,
  timeLimitFlag,
} from "./progress.js";
import type { CommandIO } from "./registry.js";
import {
  VERIFY_WRITER_FLAG,
  pairReplayRing,
  refusePairRingFlags,
  replayPairRingRun,
  simulatePairRingRun,
} from "./pair-ring.js";
import { PAD_FORMULA_FLAG, RATIO_FLAG, refusePadWithFormula, requireRatio, ringLabel } from "./residency-flags.js";

const FLAGS = {
  ratio: RATIO_FLAG,
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
  "verify-writer": VERIFY_WRITER_FLAG,
  steps: { type: "int", min: 0, max: 10_000_000, default: 300, help: "batches after the initial prefill" },
  seed: { type: "int", min: 0, max: 0xffffffff, default: 1, help: "random seed" },
  pad: { type: "int", min: 0, max: 2 ** 31 - 1, help: "force the write pad" },
  "pad-formula": { ...PAD_FORMULA_FLAG, arg: "F" },
  replay: { type: "string", arg: "FILE", help: "replay a `prove residency --json` counterexample (- for stdin)" },
  "time-limit": timeLimitFlag(DEFAULT_TIME_LIMIT_SECONDS),
  quiet: QUIET_FLAG,
  json: { type: "bool", help: "print {steps, verifies, violations, firstViolation, ...} per ring" },
  html: {
    type: "string",
    arg: "FILE",
    help: "also write a self-contained HTML page of the ring around the first violation (no network needed)",
  },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--ratio 4|128 --ring N --swa-page N --draft-tokens D\n[--req-ring] [--adaptive] [--steps N] [--seed N]\n[--pad N | --pad-formula derived|pre-fix-device|pre-fix-host]\n[--time-limit SECONDS] [--quiet] [--json] [--html FILE]",
    "--ratio 2 --ring N --draft-tokens D [--adaptive]\n[--verify-writer torch|verify-fused] [--steps N] [--seed N] [--json]",
    "--replay FILE [--time-limit SECONDS] [--quiet] [--json] [--html FILE]",
  ],
  description: `Drives one request's compress-state ring through an initial prefill, then speculative verifies of D draft
tokens with random accept lengths, mixed with plain chunks, decode steps and (paged c4) radix resumes, using
the real planner. Every compression must read the committed value of every position it needs; the first
violation is explained (position, slot, what the slot held, which write clobbered it).

With no ring flags it checks DeepSeek-V4's speculative rings at their limits: c4 ring 16 at 10 draft tokens
and c128 ring 256 at 130 (SWA page 256). Memory stays O(ring + window) however many batches run. Before it
starts, stderr shows the work (rings × batches; for --replay, its batches and the tokens they plan), then
progress with an ETA: a rewritten line on a terminal, a plain line every 2 s otherwise (--quiet: none). Ctrl-C
stops the run and prints the summary so far; --time-limit (default ${DEFAULT_TIME_LIMIT_SECONDS} s) stops it with a partial result,
marked as such ("complete": false in --json, exit 3 when nothing failed so far).

--replay FILE runs the batch sequence of a \`dsv4-kv prove residency --json\` counterexample (its ring and pad
come from the file, which must give each of them: nothing is derived) and explains its violation.

--html FILE also writes one self-contained page (scripts, styles and data inline) for a bug report: the last
batches before the first violation (prefix, D, accepted tokens, what each wrote), the ring's slots over those
batches with the committed positions, and the slot at fault, the write that clobbered it and the committed
position it destroyed; with no violation, the page says so and draws the last batches. Exit codes are unchanged.

--ratio 2 runs DeepSeek-V4.1's ratio-2 pair-state ring (docs/reference/ratio2-pair-ring.md) instead: verifies of D
rows with random accepts, extend chunks and decode steps, each reading the partner of an odd first row from the
ring and writing as SGLang's writers do (--verify-writer); every pooled row must find its committed partner.
--replay also replays a \`prove residency --ratio 2 --json\` counterexample (no --html for it).`,
  flags: FLAGS,
  exitCodes: [
    [0, "no violation"],
    [1, "a violation"],
    [2, "bad input"],
    [EXIT_PARTIAL, "stopped at --time-limit before a violation (partial)"],
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

/** Batches per slice: between slices the event loop runs, so Ctrl-C is seen, and the time limit is checked. */
const SLICE_BATCHES = 200;

/** How a sliced run ended. */
type RunEnd = "done" | "interrupted" | "time-limit";

/**
 * Runs a scenario in slices; a SIGINT stops it after the current slice. The deadline is the run's own `stop`
 * (asked before every batch, the initial prefill's chunks included), so a run past it reports "time-limit".
 */
async function runSliced(run: ResidencyScenarioRun): Promise<RunEnd> {
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
  };
  process.on("SIGINT", onSigint);
  try {
    while (run.advance(SLICE_BATCHES)) {
      await new Promise((resolve) => setImmediate(resolve));
      if (interrupted) return "interrupted";
    }
    return run.stopped ? "time-limit" : "done";
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/** A JS Map holds at most 2^24 entries; the simulator keeps one per ring slot it has written. */
const MAX_MAP_ENTRIES = 2 ** 24;
/** Pages of a paged ring whose slots the simulator can hold at once, at most (the window spans two; one spare). */
const LIVE_PAGES = 3;
/** Bytes one slot entry of the simulator takes (key, object, strings shared), measured and rounded up. */
const SLOT_ENTRY_BYTES = 160;

/**
 * The ring slots a scenario may hold at once: every slot of its live ring(s), or every position it can write (the
 * initial prefill of up to 2 × the SWA page, then at most the longest batch per step), whichever is fewer. Refused
 * (WORK_LIMIT) past a Map's size or this process's heap, naming the flags that size it.
 */
function checkScenarioMemory(s: ResidencyScenario): { slots: number; bytes: number } {
  const longestBatch = Math.max(s.draftTokens, 2 * windowSize(s.compressRatio) + 3);
  const positions = 2 * s.swaPageSize + (s.steps ?? 300) * longestBatch;
  // a request ring reuses its slots; a paged ring drops a page's slots once no batch can read them (a few live)
  const ringSlots = s.ringSize * (s.compressRatio === 4 && !s.useReqRing ? LIVE_PAGES : 1);
  const slots = Math.min(positions, ringSlots);
  const bytes = slots * SLOT_ENTRY_BYTES;
  const free = heapBytesFree();
  if (slots >= MAX_MAP_ENTRIES || bytes > free) {
    const why =
      slots >= MAX_MAP_ENTRIES
        ? `more than the ${count(MAX_MAP_ENTRIES - 1)} one map of the simulator holds`
        : `${count(bytes)} bytes, more than the ${count(free)} this process may still use`;
    throw new LimitError(
      "--ring",
      s.ringSize,
      `with --swa-page ${s.swaPageSize} and --steps ${s.steps ?? 300}, the run may hold ${count(slots)} ring slots ` +
        `(${why}); lower --ring, --swa-page or --steps`,
      { slots, bytes, heapBytesFree: free, maxEntries: MAX_MAP_ENTRIES - 1 },
    );
  }
  return { slots, bytes };
}

/** Tokens a batch plans (a radix resume plans none): the replay's unit of work. */
function batchTokens(b: ResidencyBatch): number {
  if (b.kind === "prefill") return typeof b.tokens === "number" ? b.tokens : 0;
  if (b.kind === "verify") return typeof b.draftTokens === "number" ? b.draftTokens : 0;
  return b.kind === "decode" ? 1 : 0;
}

/** A `prove residency --ratio 2 --json` file's pair ring and counterexample, or null for another ratio. */
function pairReplay(doc: unknown, path: string) {
  const d = (doc ?? {}) as Record<string, unknown>;
  const proof = (typeof d.failure === "object" && d.failure !== null ? d.failure : d) as Record<string, unknown>;
  const ring = proof.ring as Record<string, unknown> | undefined;
  if (typeof ring !== "object" || ring === null) return null;
  const pairRing = pairReplayRing(ring, path);
  if (pairRing === null) return null;
  const cx = proof.counterexample as Record<string, unknown> | null | undefined;
  if (typeof cx !== "object" || cx === null) {
    throw new UsageError("--replay", path, "holds no counterexample (the proof succeeded): nothing to replay");
  }
  return {
    ring: pairRing,
    batches: replayField(path, "counterexample.batches", cx.batches, "array") as ResidencyBatch[],
  };
}

/** --ratio 2 without --replay: a random run on one pair-state ring. */
function simulatePairRing(values: Values, io: CommandIO): number {
  const missing = (["ring", "draft-tokens"] as const).filter((f) => values[f] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`--${missing[0]!}`, undefined, "is required with --ratio 2", {
      missing: missing.map((f) => `--${f}`),
    });
  }
  return simulatePairRingRun(
    {
      ring: values.ring!,
      draftTokens: values["draft-tokens"]!,
      adaptive: values.adaptive ?? false,
      verifyWriter: values["verify-writer"],
      steps: values.steps ?? 300,
      seed: values.seed ?? 1,
      json: values.json ?? false,
    },
    io,
  );
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
  const need = (where: string, obj: Record<string, unknown>, key: string, type: "number" | "boolean" | "array") =>
    replayField(path, `${where}${key}`, obj[key], type);
  const config = {
    compressRatio: need("ring.", ring, "compressRatio", "number") as number,
    ringSize: need("ring.", ring, "ringSize", "number") as number,
    swaPageSize: need("ring.", ring, "swaPageSize", "number") as number,
    useReqRing: need("ring.", ring, "useReqRing", "boolean") as boolean,
    writePad: need("", proof, "writePad", "number") as number,
    draftTokens: 1,
  };
  return { config, batches: need("counterexample.", cx, "batches", "array") as ResidencyBatch[] };
}

/**
 * A field a replay file must give, of its type: a missing write pad used to be derived from the ring, so a file cut
 * down by hand replayed against another pad than the one it recorded (and reported 0 violations).
 */
function replayField(path: string, where: string, value: unknown, type: "number" | "boolean" | "array"): unknown {
  const ok = type === "array" ? Array.isArray(value) : typeof value === type;
  if (ok) return value;
  const what = value === undefined ? "has no" : `has a ${value === null ? "null" : typeof value}`;
  throw new InputError("--replay", path, `${what} ${where} (a prove residency --json file gives it as a ${type})`, {
    missing: where,
    expected: type,
    ...(value === undefined ? {} : { given: value }),
  });
}

/** Batches a text replay lists one by one; a longer replay shows its first and last ones. */
const LISTED_BATCHES = 200;

function replayLines(
  config: ResidencyScenario,
  batches: ResidencyBatch[],
  r: ReplayResult,
  paint: Paint,
  limit: { seconds: number; total: number },
): string[] {
  const lines = [`replay on ${ringLabel(config)}, write pad ${config.writePad}:`];
  const described = describeBatches(batches);
  for (const [i, b] of described.entries()) {
    if (described.length <= LISTED_BATCHES || i < LISTED_BATCHES / 2 || i >= described.length - LISTED_BATCHES / 2) {
      lines.push(`  ${i + 1}. ${b}`);
    } else if (i === LISTED_BATCHES / 2) lines.push(`  … ${described.length - LISTED_BATCHES} batches …`);
  }
  if (!r.complete) lines.push(paint.bad(partialAfter(limit.seconds, batches.length, limit.total, "batches")));
  const clean = r.complete ? paint.ok("clean") : "no violation so far";
  lines.push(`result: ${r.firstViolation === null ? clean : paint.bad(r.firstViolation.message)}`);
  return lines;
}

interface ReplayFlags {
  json: boolean;
  html: string | undefined;
  timeLimit: number;
  quiet: boolean;
}

async function replay(path: string, flags: ReplayFlags, argv: readonly string[], io: CommandIO): Promise<number> {
  const { json, html, timeLimit } = flags;
  const doc = await readJsonInput({ field: "--replay", path }, io.stdin);
  const pair = pairReplay(doc, path);
  if (pair !== null) {
    if (html !== undefined) throw new UsageError("--html", html, "does not apply to a --ratio 2 replay");
    return replayPairRingRun(pair.ring, pair.batches, json, io);
  }
  const { config, batches: all } = replayInput(doc, path);
  const weights = all.map(batchTokens);
  const totalTokens = weights.reduce((a, b) => a + b, 0);
  const { progress, deadline } = startTimedRun(
    io.stderr,
    { label: "simulate residency --replay", unit: "tokens", quiet: flags.quiet },
    timeLimit,
    `${count(all.length)} batches planning ${count(totalTokens)} tokens on ${ringLabel(config)}`,
  );
  const recorder = html === undefined ? null : new WindowRecorder();
  let tokensDone = 0;
  let ran = 0;
  const r = replayResidency(config, all, {
    onBatch: (done, _total, batch, sim) => {
      ran = done;
      tokensDone += weights[done - 1]!;
      progress.update(tokensDone, totalTokens, `${count(done)}/${count(all.length)} batches`);
      recorder?.record(batch, sim);
    },
    stop: () => deadline.expired(),
  });
  progress.clear();
  // what ran is what the page and the text show: a partial replay stops at the batch the limit came in
  const batches = all.slice(0, ran);
  if (html !== undefined && recorder !== null) {
    const plain = replayLines(config, batches, r, NO_PAINT, { seconds: timeLimit, total: all.length });
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
      recorded: recorder.window(r.steps, r.firstViolation),
    });
    await writeResidencyPage(
      html,
      argv,
      { lines: plain.slice(0, -1), result: plain.at(-1)!, clean: r.violations === 0 },
      [view],
    );
  }
  if (json) {
    const { complete: _complete, ...rest } = r;
    const body = { ...rest, ...completionJson(r.complete, timeLimit), batches: all.length };
    io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    io.stdout.write(
      `${replayLines(config, batches, r, paintFor(io.stdout, io.env), { seconds: timeLimit, total: all.length }).join("\n")}\n`,
    );
  }
  if (r.violations > 0) return 1;
  return r.complete ? 0 : EXIT_PARTIAL;
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

/** One ring's run: its scenario, its report and (with --html) the window recorded as it ran. */
interface RingResult {
  run: RingRun;
  report: ResidencyReport;
  recorder: WindowRecorder | null;
}

/** One ring's part of the page: the window its run recorded. */
function scenarioView({ run, report, recorder }: RingResult): ResidencyRingView {
  return ringView({
    label: run.label,
    inputs: { ...ringInputs(run.scenario), writePad: report.writePad },
    batchesRun: report.steps,
    verifies: report.verifies,
    violations: report.violations,
    firstViolation: report.firstViolation,
    recorded: recorder!.window(report.steps, report.firstViolation),
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
  const timeLimit = values["time-limit"] ?? DEFAULT_TIME_LIMIT_SECONDS;
  if (values.replay === undefined) refusePairRingFlags(values, values.ratio);
  if (values.ratio === 2 && values.replay === undefined) return simulatePairRing(values, io);
  if (values.replay !== undefined) {
    const withReplay = ["replay", "json", "html", "time-limit", "quiet"];
    const other = Object.keys(values).find((k) => !withReplay.includes(k));
    if (other !== undefined) throw new UsageError(`--${other}`, undefined, "cannot be combined with --replay");
    if (values.html !== undefined) await requireWritableReportHtml(values.html);
    const flags = { json: values.json ?? false, html: values.html, timeLimit, quiet: values.quiet ?? false };
    return replay(values.replay, flags, argv, io);
  }
  const steps = values.steps ?? 300;
  const runs = ringRuns(values, steps);
  if (values.html !== undefined) await requireWritableReportHtml(values.html);
  const rings = runs.length === 1 ? "1 ring" : `${runs.length} rings`;
  const memory = Math.max(...runs.map((r) => checkScenarioMemory(r.scenario).bytes));
  const { progress, deadline } = startTimedRun(
    io.stderr,
    { label: "simulate residency", unit: "batches", quiet: values.quiet },
    timeLimit,
    `${rings} × ${count(steps)} batches after the initial prefill = ${count(runs.length * steps)} batches, ` +
      `at most ${(memory / 2 ** 20).toFixed(0)} MiB of ring state`,
  );
  const { results, end } = await runRings(runs, steps, { progress, deadline, html: values.html !== undefined }, io);
  const out: RingsOutcome = { rings: runs.length, results, end, timeLimit, ran: ranOf(results, runs.length * steps) };
  const violations = results.reduce((n, r) => n + r.report.violations, 0);
  if (values.html !== undefined) await writeScenarioPage(values.html, argv, out, violations);
  io.stdout.write(values.json ? scenarioJson(out, violations) : scenarioText(out, violations, io));
  if (violations > 0) return 1;
  if (end === "interrupted") return 130;
  return end === "time-limit" ? EXIT_PARTIAL : 0;
}

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>["values"];

/** The rings to run: DeepSeek-V4's two speculative rings with no ring flags, else the one the flags give. */
function ringRuns(values: Values, steps: number): RingRun[] {
  const seed = values.seed ?? 1;
  const padFormula = values["pad-formula"];
  const pad = values.pad;
  refusePadWithFormula(pad, padFormula);
  const ringFlags = [values.ratio, values.ring, values["swa-page"], values["draft-tokens"]];
  if (ringFlags.every((f) => f === undefined)) {
    return defaultRuns(steps, seed).map((r) => ({
      ...r,
      scenario: { ...r.scenario, adaptive: values.adaptive ?? false, writePad: pad, padFormula },
    }));
  }
  const names = ["ratio", "ring", "swa-page", "draft-tokens"];
  const missing = names.filter((_, i) => ringFlags[i] === undefined);
  if (missing.length > 0)
    throw new UsageError(
      `--${missing[0]!}`,
      undefined,
      `is required when any of --ratio, --ring, --swa-page, --draft-tokens is given${missing.length > 1 ? ` (so are --${missing.slice(1).join(", --")})` : ""}`,
      { missing: missing.map((name) => `--${name}`) },
    );
  const scenario: ResidencyScenario = {
    compressRatio: requireRatio(values.ratio!),
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
  return [{ label: ringLabel(scenario), scenario }];
}

/** What the rings' runs came to: each ring's result, how the runs ended, the time limit and what ran. */
interface RingsOutcome {
  /** rings asked for (one result each unless a run was stopped) */
  rings: number;
  results: RingResult[];
  end: RunEnd;
  timeLimit: number;
  /** `N of M batches`, for a partial result */
  ran: string;
}

/** Runs the rings in turn (the ETA covers all of them) until one is stopped by Ctrl-C or the time limit. */
async function runRings(
  runs: readonly RingRun[],
  steps: number,
  o: { progress: Progress; deadline: Deadline; html: boolean },
  io: CommandIO,
): Promise<{ results: RingResult[]; end: RunEnd }> {
  const results: RingResult[] = [];
  let end: RunEnd = "done";
  for (const r of runs) {
    const before = results.length * steps;
    const onStep = (done: number) => o.progress.update(before + done, runs.length * steps, r.label);
    const recorder = o.html ? new WindowRecorder() : null;
    const scenarioRun = new ResidencyScenarioRun({
      ...r.scenario,
      onStep,
      stop: () => o.deadline.expired(),
      ...(recorder === null ? {} : { onBatch: (b: ResidencyBatch, sim) => recorder.record(b, sim) }),
    });
    end = await runSliced(scenarioRun);
    results.push({ run: r, report: scenarioRun.report(), recorder });
    o.progress.clear();
    if (end === "interrupted") {
      io.stderr.write(`interrupted after ${scenarioRun.done} of ${scenarioRun.total} batches; the summary so far:\n`);
    }
    if (end !== "done") break;
  }
  return { results, end };
}

function ranOf(results: readonly RingResult[], total: number): string {
  return `${count(results.reduce((n, r) => n + r.report.steps, 0))} of ${count(total)} batches`;
}

async function writeScenarioPage(path: string, argv: readonly string[], out: RingsOutcome, violations: number) {
  const lines = out.results.flatMap((r) => describeRun(r.run, r.report, NO_PAINT).split("\n"));
  if (out.end === "time-limit") lines.push(partialLine(out.timeLimit, out.ran));
  const verdict = { lines, result: resultLine(violations, NO_PAINT), clean: violations === 0 };
  await writeResidencyPage(path, argv, verdict, out.results.map(scenarioView));
}

function scenarioJson(out: RingsOutcome, violations: number): string {
  const one = (x: RingResult) => ({
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
  const done =
    out.end === "interrupted"
      ? { complete: false, stoppedBy: "interrupted" }
      : completionJson(out.end === "done", out.timeLimit);
  const body =
    out.rings === 1 ? { ...one(out.results[0]!), ...done } : { rings: out.results.map(one), violations, ...done };
  return `${JSON.stringify(body, null, 2)}\n`;
}

function scenarioText(out: RingsOutcome, violations: number, io: CommandIO): string {
  const paint = paintFor(io.stdout, io.env);
  const partial = out.end === "time-limit" ? `${paint.bad(partialLine(out.timeLimit, out.ran))}\n` : "";
  const rings = out.results.map((r) => describeRun(r.run, r.report, paint)).join("\n");
  return `${rings}\n${partial}${resultLine(violations, paint)}\n`;
}
