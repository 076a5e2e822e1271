/**
 * `dsv4-kv simulate online-mtp`: the online c128 + MTP controller against a float64 sequential reference.
 */
import { paintFor } from "../colour.js";
import { type FlagTable, choice, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import type { CommandIO } from "./registry.js";
import type { GpuBackend as GpuBackendClass } from "@dsv4-kv/online-mtp-controller/gpu";
import { loadGpuBackend } from "../gpu.js";
import {
  DEFAULT_TIME_LIMIT_SECONDS,
  EXIT_PARTIAL,
  QUIET_FLAG,
  completionJson,
  count,
  partialAfter,
  startTimedRun,
  timeLimitFlag,
} from "./progress.js";

const FLAGS = {
  requests: { type: "int", min: 1, max: 4096, required: true, help: "concurrent request slots" },
  steps: { type: "int", min: 0, max: 1_000_000, required: true, help: "batches (verify or extend)" },
  "draft-tokens": {
    type: "int",
    min: 1,
    max: 8,
    arg: "D",
    required: true,
    help: "verify width (the maximum with --adaptive)",
  },
  adaptive: { type: "bool", help: "draw each verify's D from [1, D]" },
  seed: { type: "int", min: 0, max: 0xffffffff, default: 1, help: "random seed" },
  backend: choice(["cpu", "gpu"], "cpu or gpu (CUDA kernels; needs a GPU)", "cpu"),
  "state-dtype": choice(
    ["fp32", "bf16"],
    "fp32 (tolerance 2e-4 + 2e-4·|ref|) or bf16 (the bound derived from each row's roundings)",
    "fp32",
  ),
  lifecycle: choice(
    ["hardened", "upstream"],
    "hardened or upstream (upstream's lifecycle, which loses commits)",
    "hardened",
  ),
  "max-violations": { type: "int", min: 0, max: 10_000, default: 20, help: "violations listed (all are counted)" },
  "time-limit": timeLimitFlag(DEFAULT_TIME_LIMIT_SECONDS),
  quiet: QUIET_FLAG,
  json: {
    type: "bool",
    help: "print {ok, reason, steps, verifies, commits, lostCommits, maxAbsError, maxRelError, violationCount, violations}",
  },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--requests N --steps N --draft-tokens D [--adaptive] [--seed N]\n[--backend cpu|gpu] [--state-dtype fp32|bf16] [--lifecycle hardened|upstream]\n[--max-violations N] [--time-limit SECONDS] [--quiet] [--json]",
  ],
  description: `Runs the online c128 MTP controller (state banks, pending markers, lazy commit) through a seeded scenario:
target verifies of random subsets of the running requests with random accept lengths (chunk crossings included),
EXTEND batches of new requests interleaved between verifies, CUDA-graph padding rows, requests finishing right
after a verify, and slot reuse. After every forward, bank 0 of each request in it is compared with the float64
sequential fold of its accepted tokens, and every commit is checked to be the bitwise copy its accept selects.
With a bf16 state each row is checked against the bound derived from its roundings and against a reference that
rounds where the kernels round (docs/reference/online-mtp.md §5.4). On failure the output says why: --json gives
"reason" and up to --max-violations entries of "violations" ({kind, layer, request, row, length, position,
roundings, element, channel, actual, expected, error, bound}) with "violationCount"; a non-finite number is written
as the string "Infinity", "-Infinity" or "NaN". Before it starts, stderr shows the work (steps × requests × draft
tokens), then progress with an ETA: a rewritten line on a terminal, a plain line every 2 s otherwise (--quiet:
none). --time-limit (default ${DEFAULT_TIME_LIMIT_SECONDS} s) stops the run after the step it is in, checks the requests still running, and
prints a partial result marked as such ("complete": false in --json, exit 3 when nothing failed so far).`,
  flags: FLAGS,
  exitCodes: [
    [0, "no lost commit and every error within its tolerance (fp32) or derived bound (bf16)"],
    [1, "otherwise"],
    [2, "bad input"],
    [EXIT_PARTIAL, "stopped at --time-limit before a failure (partial)"],
  ],
};

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  const { requests, steps, "draft-tokens": draftTokens } = values as Required<typeof values>;
  const seed = values.seed ?? 1;
  const backendName = values.backend ?? "cpu";
  const stateDtype = values["state-dtype"] ?? "fp32";
  const lifecycle = values.lifecycle ?? "hardened";

  const mtp = await import("@dsv4-kv/online-mtp-controller");
  let backend: InstanceType<typeof mtp.CpuBackend> | InstanceType<typeof GpuBackendClass>;
  if (backendName === "gpu") {
    const gpu = await loadGpuBackend("--backend", "gpu");
    const probe = gpu.probeGpuBackend();
    if (!probe.ok) {
      io.stderr.write(`dsv4-kv simulate online-mtp: --backend gpu unavailable: ${probe.reason}\n`);
      return 2;
    }
    backend = gpu.createGpuBackend();
  } else {
    backend = new mtp.CpuBackend();
  }
  const timeLimit = values["time-limit"] ?? DEFAULT_TIME_LIMIT_SECONDS;
  const { progress, deadline } = startTimedRun(
    io.stderr,
    { label: "simulate online-mtp", unit: "steps", quiet: values.quiet },
    timeLimit,
    `${count(steps)} steps of up to ${count(requests)} requests × ${draftTokens} draft tokens (${backendName} backend)`,
  );
  const r = mtp.runSimulation({
    backend,
    requests,
    steps,
    draftTokens,
    adaptive: values.adaptive ?? false,
    seed,
    stateDtype,
    lifecycle,
    maxViolationsListed: values["max-violations"] ?? 20,
    onProgress: (done, total) => progress.update(done, total),
    stop: () => deadline.expired(),
  });
  progress.clear();
  const complete = r.steps === steps;
  (backend as { dispose?: () => void }).dispose?.();
  const ok = r.ok;
  const paint = paintFor(io.stdout, io.env);
  if (values.json) {
    const out = {
      ok: r.ok,
      reason: r.reason,
      steps: r.steps,
      verifies: r.verifies,
      commits: r.commits,
      lostCommits: r.lostCommits,
      maxAbsError: r.maxAbsError,
      maxRelError: r.maxRelError,
      violationCount: r.violations + r.lostCommits,
      violations: r.violationDetails,
      ...completionJson(complete, timeLimit),
    };
    io.stdout.write(`${JSON.stringify(out, finiteOrName)}\n`);
  } else {
    io.stdout.write(
      [
        `online c128 MTP simulation (${r.backend} backend, ${r.stateDtype} state, ${r.lifecycle} lifecycle, seed ${seed})`,
        `  steps          ${r.steps} (${r.verifies} verifies, ${r.extends} extends, ${r.finished} finished requests)`,
        `  commits        ${r.commits}`,
        `  lost commits   ${r.lostCommits}`,
        `  bank 0 vs sequential reference: max abs error ${r.maxAbsError.toExponential(3)}, max rel error ${r.maxRelError.toExponential(3)} (|ref| >= 1e-2)`,
        r.tolerance === "derived"
          ? `  bound          derived from each row's bf16 roundings (at most ${r.bf16?.maxRoundings} per row; max error/bound ${r.bf16?.maxRatio.toFixed(3)}): ${r.violations} violations`
          : `  tolerance      |x - ref| <= ${r.tolerance.atol} + ${r.tolerance.rtol}·|ref|: ${r.violations} violations`,
        `  emitted entries ${r.emittedEntries} vs offline pooling: max abs error ${r.maxEmittedAbsError.toExponential(3)}`,
        ...violationLines(r.violationDetails, r.violations + r.lostCommits),
        ...(complete ? [] : [paint.bad(partialAfter(timeLimit, r.steps, steps, "steps"))]),
        ok ? paint.ok(complete ? "OK" : "OK so far") : paint.bad(`FAILED: ${r.reason}`),
        "",
      ].join("\n"),
    );
  }
  if (!ok) return 1;
  return complete ? 0 : EXIT_PARTIAL;
}

type Violation = Awaited<
  ReturnType<typeof import("@dsv4-kv/online-mtp-controller").runSimulation>
>["violationDetails"][number];

function violationLines(list: readonly Violation[], count: number): string[] {
  if (count === 0) return [];
  const lines = list.map(
    (v) =>
      `    ${v.kind}: layer ${v.layer}, request ${v.request}, row ${v.row}, length ${v.length} (position ${v.position}, ` +
      `${v.roundings} roundings), ${v.element}[${v.channel}] = ${v.actual} vs ${v.expected}: error ${v.error} > bound ${v.bound}`,
  );
  const more = count > list.length ? [`    … ${count - list.length} more`] : [];
  return [`  violations     ${count}`, ...lines, ...more];
}

/** JSON has no ±∞ or NaN (JSON.stringify writes null): such numbers are written as their names. */
export function finiteOrName(_key: string, value: unknown): unknown {
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}
