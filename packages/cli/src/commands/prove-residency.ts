/**
 * `dsv4-kv prove residency`: the planner's exhaustive residency proof for one ring and draft count.
 */
import {
  type MaxDraftTokens,
  type ResidencyProof,
  type ResidencyProofOptions,
  findMaxDraftTokens,
  proveResidency,
} from "@dsv4-kv/planner";
import { type ResidencyProofEstimate, describeBatches, estimateResidencyProof } from "@dsv4-kv/planner/internal";
import { LimitError, UsageError } from "./args.js";
import { type Paint, paintFor } from "../colour.js";
import { type FlagTable, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import type { CommandIO } from "./registry.js";
import {
  DEFAULT_TIME_LIMIT_SECONDS,
  heapBytesFree,
  Deadline,
  EXIT_PARTIAL,
  Progress,
  QUIET_FLAG,
  completionJson,
  count,
  formatDuration,
  partialLine,
  timeLimitFlag,
} from "./progress.js";
import { VERIFY_WRITER_FLAG, provePairRingRun, refusePairRingFlags } from "./pair-ring.js";
import { PAD_FORMULA_FLAG, RATIO_FLAG, refusePadWithFormula, requireRatio, ringLabel } from "./residency-flags.js";

/** The --max-states default: about 2 GB of states and a few minutes of search on one core. */
export const DEFAULT_MAX_STATES = 20_000_000;
/** The most --max-states takes. */
const MAX_MAX_STATES = 1e9;
/**
 * Planned tokens per second the estimate assumes: 6-13 million measured on one core of the development machine
 * (c4 ring 16 SWA page 256, c128 ring 256, c4 ring 32 SWA page 512); the estimate is an order of magnitude, the
 * time limit the bound.
 */
export const PLANNED_TOKENS_PER_SECOND = 10_000_000;

const FLAGS = {
  ratio: { ...RATIO_FLAG, required: true },
  ring: { type: "int", min: 1, max: 2 ** 31 - 1, help: "ring size in slots (required but with --ratio 2 --find-max)" },
  "swa-page": { type: "int", min: 1, max: 2 ** 31 - 1, help: "SWA page size in tokens (required for 4 and 128)" },
  "req-ring": { type: "bool", help: "c4: the request-scoped ring instead of the paged SWA ring" },
  "draft-tokens": {
    type: "int",
    min: 1,
    max: 65535,
    arg: "D",
    help: "draft tokens per verify (the largest, with --adaptive); or --find-max",
  },
  adaptive: { type: "bool", help: "every draft count 1..D at each verify" },
  "verify-writer": VERIFY_WRITER_FLAG,
  "find-max": { type: "bool", help: "the largest D that proves, and the counterexample at the next one" },
  pad: { type: "int", min: 0, max: 65535, help: "force the write pad" },
  "pad-formula": PAD_FORMULA_FLAG,
  "max-states": {
    type: "int",
    min: 1,
    max: MAX_MAX_STATES,
    default: DEFAULT_MAX_STATES,
    help: "refuse beyond this many canonical states (before the proof starts when the estimate passes it)",
  },
  "time-limit": timeLimitFlag(DEFAULT_TIME_LIMIT_SECONDS),
  quiet: QUIET_FLAG,
  json: { type: "bool", help: "print {proved, complete, states, seconds, ring, draftTokens, counterexample, ...}" },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--ratio 4|128 --ring N --swa-page N [--req-ring]\n(--draft-tokens D | --find-max) [--adaptive]\n[--pad N | --pad-formula derived|pre-fix-device|pre-fix-host]\n[--max-states N] [--time-limit SECONDS] [--quiet] [--json]",
    "--ratio 2 (--ring N (--draft-tokens D | --find-max) | --find-max)\n[--adaptive] [--verify-writer torch|verify-fused] [--time-limit SECONDS] [--json]",
  ],
  description: `Proves, for every batch sequence from an empty ring, that no compression reads a lost committed position
(invariant R1): prefill chunks, decodes, verifies of D draft tokens with every accept 1..D (with --adaptive,
every draft count 1..D), and (paged c4) radix resumes at SWA-page boundaries, each planned by the real planner.
States are reduced to what later batches can observe (docs/residency-proof.md) and explored breadth-first, so
a failure comes with a shortest counterexample; save the --json output and replay it with
\`dsv4-kv simulate residency --replay FILE\`.

Before it starts, the proof's cost is estimated from the ring (canonical prefixes × chunk lengths planned, the
tokens those plans cover, the time and memory they take) and printed on stderr; a proof whose prefixes alone
pass --max-states (default ${count(DEFAULT_MAX_STATES)}), or whose kept plans pass this process's heap, is refused
then (WORK_LIMIT), naming the estimate and the flag. While it runs, stderr shows progress with an ETA (a plain
line every 2 s when it is not a terminal; --quiet for none). At --time-limit (default ${DEFAULT_TIME_LIMIT_SECONDS} s)
the proof stops with a partial result, marked as such (\`complete: false\` in --json, exit 3): every batch
sequence up to the depth it reached was checked.

--ratio 2 proves DeepSeek-V4.1's ratio-2 pair-state ring (docs/reference/ratio2-pair-ring.md) by the same search:
extend chunks, decode steps and verify blocks of D rows with every accept, each reading and writing the ring as
SGLang's writers do (--verify-writer: torch, SGLang's routing for target-verify, or verify-fused, the c2 verify
grid). It prints the bound derived by hand and SGLang's own guards (the verify kernel's ring_size > draft_len,
the write pad) beside the proof; --find-max without --ring prints which R₂ serves which D for SGLang's rings.`,
  flags: FLAGS,
  exitCodes: [
    [0, "proved"],
    [1, "not proved (a counterexample)"],
    [2, "bad input, or refused by its estimate (WORK_LIMIT)"],
    [EXIT_PARTIAL, "stopped at --time-limit before a counterexample (partial)"],
  ],
};

/** Progress lines of one proof: prefixes planned (the bulk of the time) of those the estimate counts. */
function proofProgress(progress: Progress, label: string, prefixes: number): ResidencyProofOptions["onProgress"] {
  return (p) =>
    progress.update(
      p.planned,
      prefixes,
      `${label}: ${count(p.states)} states, ${count(p.explored)} explored, depth ${p.depth}`,
    );
}

/**
 * The estimate, printed before the proof starts, and the refusals it decides (WORK_LIMIT): a state space past
 * --max-states, kept plans past the heap. Time is bounded by --time-limit, not refused on an estimate.
 */
function checkEstimate(e: ResidencyProofEstimate, maxStates: number, timeLimit: number): string {
  const seconds = e.plannedTokens / PLANNED_TOKENS_PER_SECOND;
  const params = { ...e, estimatedSeconds: Number(seconds.toFixed(1)) };
  if (e.canonicalPrefixes > maxStates) {
    const raise =
      e.canonicalPrefixes <= MAX_MAX_STATES
        ? "raise --max-states"
        : `more than --max-states takes (${count(MAX_MAX_STATES)})`;
    throw new LimitError(
      "--max-states",
      maxStates,
      `is below the proof's state space: at least ${count(e.canonicalPrefixes)} states (one per canonical prefix ` +
        `of this ring); ${raise}, or prove a smaller ring or SWA page`,
      params,
    );
  }
  const free = heapBytesFree();
  if (e.effectBytes > free) {
    throw new LimitError(
      "memory",
      e.effectBytes,
      `bytes are needed for the kept plans (${count(e.plans)} batches, estimated), more than the ${count(free)} ` +
        "bytes this Node process may still use (its heap limit: NODE_OPTIONS=--max-old-space-size=MIB raises it); " +
        "prove a smaller ring or SWA page",
      { ...params, heapBytesFree: free },
    );
  }
  return (
    `${count(e.canonicalPrefixes)} canonical prefixes × ${count(e.chunkLengths)} chunk lengths and ` +
    `${e.draftCounts} draft count${e.draftCounts === 1 ? "" : "s"}: ${count(e.plans)} plans of ` +
    `${count(e.plannedTokens)} tokens, about ${formatDuration(seconds)} and ${(e.effectBytes / 2 ** 20).toFixed(0)} MiB; ` +
    `at most ${count(maxStates)} states (--max-states), time limit ${timeLimit} s (--time-limit)` +
    (seconds > timeLimit ? "; the estimate passes the time limit: expect a partial result" : "")
  );
}

function proofJson(p: ResidencyProof, timeLimit: number) {
  return {
    proved: p.proved,
    ...completionJson(p.complete, timeLimit),
    depth: p.depth,
    states: p.states,
    seconds: Number(p.seconds.toFixed(3)),
    ring: p.ring,
    draftTokens: p.draftTokens,
    adaptive: p.adaptive,
    writePad: p.writePad,
    padSource: p.padSource,
    transitions: p.transitions,
    chunkLengths: p.chunkLengths,
    counterexample: p.counterexample,
  };
}

function describeProof(label: string, p: ResidencyProof, paint: Paint, timeLimit: number): string {
  const ds = p.adaptive ? `every D in [1, ${p.draftTokens}]` : `D = ${p.draftTokens}`;
  const head = `${label}, write pad ${p.writePad} (${p.padSource}), ${ds}`;
  const counts = `${p.states} canonical states, ${p.transitions} transitions, ${p.seconds.toFixed(1)} s`;
  if (!p.complete) {
    const ran = `${counts}, depth ${p.depth}`;
    return `${head}\n${paint.bad(partialLine(timeLimit, ran))}\n  not proved: no batch sequence of at most ${p.depth} batch${p.depth === 1 ? "" : "es"} loses a committed position; longer ones were not all checked`;
  }
  if (p.proved) return `${head}\n${paint.ok("proved")}: no batch sequence loses a committed position (${counts})`;
  const cx = p.counterexample!;
  const steps = describeBatches(cx.batches).map((d, i) => `  ${i + 1}. ${d}`);
  return [
    head,
    `${paint.bad("NOT proved")} (${counts}); a shortest counterexample, ${cx.batches.length} batches from an empty ring:`,
    ...steps,
    `  ${cx.violation.message}`,
    "  (save the --json output and run `dsv4-kv simulate residency --replay FILE` to replay it)",
  ].join("\n");
}

function describeMax(label: string, m: MaxDraftTokens, paint: Paint, timeLimit: number): string {
  const tokens = `${m.maxDraftTokens} draft token${m.maxDraftTokens === 1 ? "" : "s"}`;
  const serves = m.complete ? `serves at most ${tokens}` : `serves at least ${tokens} (the search did not finish)`;
  const lines = [`${label}: ${serves} (${m.proofs} proofs, ${m.seconds.toFixed(1)} s)`];
  if (m.proof !== null) lines.push(describeProof(label, m.proof, paint, timeLimit));
  lines.push(describeProof(label, m.failure, paint, timeLimit));
  return lines.join("\n");
}

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>["values"];

/** --find-max or --draft-tokens: exactly one. */
function requireFindMaxOrDraftTokens(values: Values): boolean {
  const findMax = values["find-max"] ?? false;
  if (findMax === (values["draft-tokens"] !== undefined)) {
    throw new UsageError(
      findMax ? "--find-max" : "--draft-tokens",
      findMax ? true : undefined,
      findMax ? "cannot be combined with --draft-tokens: give one" : "is required (or --find-max)",
    );
  }
  return findMax;
}

/** --ratio 2: the pair-state ring's proof, --find-max, or the table of SGLang's rings. */
function provePairRing(values: Values, io: CommandIO): number {
  const findMax = requireFindMaxOrDraftTokens(values);
  const timeLimit = values["time-limit"] ?? DEFAULT_TIME_LIMIT_SECONDS;
  return provePairRingRun(
    {
      ring: values.ring,
      draftTokens: values["draft-tokens"],
      findMax,
      adaptive: values.adaptive ?? false,
      verifyWriter: values["verify-writer"],
      maxStates: values["max-states"] ?? DEFAULT_MAX_STATES,
      json: values.json ?? false,
      timeLimit,
      deadline: new Deadline(timeLimit).endsAt,
    },
    io,
  );
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  refusePairRingFlags(values, values.ratio);
  if (values.ratio === 2) return provePairRing(values, io);
  if (values.ring === undefined || values["swa-page"] === undefined) {
    const missing = ["ring", "swa-page"].filter((f) => values[f as "ring"] === undefined).map((f) => `--${f}`);
    const also = missing.length > 1 ? ` (so are ${missing[1]})` : "";
    throw new UsageError(missing[0]!, undefined, `is required${also}`, { missing });
  }
  const ratio = requireRatio(values.ratio!);
  refusePadWithFormula(values.pad, values["pad-formula"]);
  const findMax = requireFindMaxOrDraftTokens(values);
  const timeLimit = values["time-limit"] ?? DEFAULT_TIME_LIMIT_SECONDS;
  const maxStates = values["max-states"] ?? DEFAULT_MAX_STATES;
  const options: ResidencyProofOptions = {
    compressRatio: ratio,
    ringSize: values.ring!,
    swaPageSize: values["swa-page"]!,
    useReqRing: values["req-ring"] ?? false,
    draftTokens: values["draft-tokens"] ?? 1,
    adaptive: values.adaptive ?? false,
    writePad: values.pad,
    padFormula: values["pad-formula"],
    maxStates,
  };
  const label = ringLabel(options);
  const estimate = estimateResidencyProof(findMax ? { ...options, draftTokens: 1 } : options);
  const progress = new Progress(io.stderr, { label: "prove residency", unit: "prefixes planned", quiet: values.quiet });
  progress.note(`${label}: ${checkEstimate(estimate, maxStates, timeLimit)}`);
  const deadline = new Deadline(timeLimit).endsAt;
  if (findMax) {
    const m = findMaxDraftTokens({ ...options, deadline }, undefined, (d, p) =>
      proofProgress(progress, `D=${d}`, estimate.canonicalPrefixes)?.(p),
    );
    progress.clear();
    if (values.json) {
      const body = {
        maxDraftTokens: m.maxDraftTokens,
        ...completionJson(m.complete, timeLimit),
        proofs: m.proofs,
        seconds: Number(m.seconds.toFixed(3)),
        proof: m.proof === null ? null : proofJson(m.proof, timeLimit),
        failure: proofJson(m.failure, timeLimit),
      };
      io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    } else {
      io.stdout.write(`${describeMax(label, m, paintFor(io.stdout, io.env), timeLimit)}\n`);
    }
    return m.complete ? 0 : EXIT_PARTIAL;
  }
  const onProgress = proofProgress(progress, `D=${options.draftTokens}`, estimate.canonicalPrefixes);
  const p = proveResidency({ ...options, deadline, onProgress });
  progress.clear();
  const text = values.json
    ? JSON.stringify(proofJson(p, timeLimit), null, 2)
    : describeProof(label, p, paintFor(io.stdout, io.env), timeLimit);
  io.stdout.write(`${text}\n`);
  if (!p.complete) return EXIT_PARTIAL;
  return p.proved ? 0 : 1;
}
