/**
 * `dsv4-kv prove residency`: the planner's exhaustive residency proof for one ring and draft count.
 */
import {
  type MaxDraftTokens,
  type ResidencyProof,
  type ResidencyProofOptions,
  describeBatches,
  findMaxDraftTokens,
  proveResidency,
} from "@dsv4-kv/planner";
import { UsageError } from "./args.js";
import { type Paint, paintFor } from "../colour.js";
import { type FlagTable, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import type { CommandIO } from "./registry.js";
import { PAD_FORMULA_FLAG, refusePadWithFormula, requireRatio, ringLabel } from "./residency-flags.js";

const FLAGS = {
  ratio: { type: "int", min: 1, max: 2 ** 31 - 1, arg: "4|128", required: true, help: "compression ratio" },
  ring: { type: "int", min: 1, max: 2 ** 31 - 1, required: true, help: "ring size in slots" },
  "swa-page": { type: "int", min: 1, max: 2 ** 31 - 1, required: true, help: "SWA page size in tokens" },
  "req-ring": { type: "bool", help: "c4: the request-scoped ring instead of the paged SWA ring" },
  "draft-tokens": {
    type: "int",
    min: 1,
    max: 65535,
    arg: "D",
    help: "draft tokens per verify (the largest, with --adaptive); or --find-max",
  },
  adaptive: { type: "bool", help: "every draft count 1..D at each verify" },
  "find-max": { type: "bool", help: "the largest D that proves, and the counterexample at the next one" },
  pad: { type: "int", min: 0, max: 65535, help: "force the write pad" },
  "pad-formula": PAD_FORMULA_FLAG,
  "max-states": {
    type: "int",
    min: 1,
    max: 1e9,
    default: 20_000_000,
    help: "refuse beyond this many canonical states",
  },
  json: { type: "bool", help: "print {proved, states, seconds, ring, draftTokens, counterexample, ...}" },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--ratio 4|128 --ring N --swa-page N [--req-ring]\n(--draft-tokens D | --find-max) [--adaptive]\n[--pad N | --pad-formula derived|pre-fix-device|pre-fix-host] [--json]",
  ],
  description: `Proves, for every batch sequence from an empty ring, that no compression reads a lost committed position
(invariant R1): prefill chunks, decodes, verifies of D draft tokens with every accept 1..D (with --adaptive,
every draft count 1..D), and (paged c4) radix resumes at SWA-page boundaries, each planned by the real planner.
States are reduced to what later batches can observe (docs/residency-proof.md) and explored breadth-first, so
a failure comes with a shortest counterexample; save the --json output and replay it with
\`dsv4-kv simulate residency --replay FILE\`.`,
  flags: FLAGS,
  exitCodes: [
    [0, "proved"],
    [1, "not proved (a counterexample)"],
    [2, "bad input"],
  ],
};

function progress(io: CommandIO, label: string): ResidencyProofOptions["onProgress"] {
  if (!io.stderr.isTTY) return undefined;
  return (p) =>
    io.stderr.write(
      `\r\x1b[K${label}: ${p.planned} prefixes planned, ${p.states} states, ${p.explored} explored, ` +
        `depth ${p.depth}, ${p.seconds.toFixed(1)} s`,
    );
}

function clearProgress(io: CommandIO): void {
  if (io.stderr.isTTY) io.stderr.write("\r\x1b[K");
}

function proofJson(p: ResidencyProof) {
  return {
    proved: p.proved,
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

function describeProof(label: string, p: ResidencyProof, paint: Paint): string {
  const ds = p.adaptive ? `every D in [1, ${p.draftTokens}]` : `D = ${p.draftTokens}`;
  const head = `${label}, write pad ${p.writePad} (${p.padSource}), ${ds}`;
  const counts = `${p.states} canonical states, ${p.transitions} transitions, ${p.seconds.toFixed(1)} s`;
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

function describeMax(label: string, m: MaxDraftTokens, paint: Paint): string {
  const lines = [
    `${label}: serves at most ${m.maxDraftTokens} draft token${m.maxDraftTokens === 1 ? "" : "s"} ` +
      `(${m.proofs} proofs, ${m.seconds.toFixed(1)} s)`,
  ];
  if (m.proof !== null) lines.push(describeProof(label, m.proof, paint));
  lines.push(describeProof(label, m.failure, paint));
  return lines.join("\n");
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  const ratio = requireRatio(values.ratio!);
  refusePadWithFormula(values.pad, values["pad-formula"]);
  const findMax = values["find-max"] ?? false;
  if (findMax === (values["draft-tokens"] !== undefined)) {
    throw new UsageError(
      findMax ? "--find-max" : "--draft-tokens",
      findMax ? true : undefined,
      findMax ? "cannot be combined with --draft-tokens: give one" : "is required (or --find-max)",
    );
  }
  const options: ResidencyProofOptions = {
    compressRatio: ratio,
    ringSize: values.ring!,
    swaPageSize: values["swa-page"]!,
    useReqRing: values["req-ring"] ?? false,
    draftTokens: values["draft-tokens"] ?? 1,
    adaptive: values.adaptive ?? false,
    writePad: values.pad,
    padFormula: values["pad-formula"],
    maxStates: values["max-states"],
  };
  const label = ringLabel(options);
  if (findMax) {
    const m = findMaxDraftTokens(options, undefined, (d, p) => progress(io, `${label} D=${d}`)?.(p));
    clearProgress(io);
    if (values.json) {
      const body = {
        maxDraftTokens: m.maxDraftTokens,
        proofs: m.proofs,
        seconds: Number(m.seconds.toFixed(3)),
        proof: m.proof === null ? null : proofJson(m.proof),
        failure: proofJson(m.failure),
      };
      io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    } else {
      io.stdout.write(`${describeMax(label, m, paintFor(io.stdout, io.env))}\n`);
    }
    return 0;
  }
  const p = proveResidency({ ...options, onProgress: progress(io, `${label} D=${options.draftTokens}`) });
  clearProgress(io);
  const text = values.json
    ? JSON.stringify(proofJson(p), null, 2)
    : describeProof(label, p, paintFor(io.stdout, io.env));
  io.stdout.write(`${text}\n`);
  return p.proved ? 0 : 1;
}
