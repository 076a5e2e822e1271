/**
 * `prove residency --ratio 2` and `simulate residency --ratio 2`: DeepSeek-V4.1's ratio-2 pair-state ring
 * (docs/reference/ratio2-pair-ring.md), proved and simulated by the planner's pair-ring model. No SWA page, pad or
 * request-ring flag applies: the ring is request-scoped and has no pad.
 */
import {
  PAIR_VERIFY_WRITERS,
  type PairRingMaxDraftTokens,
  type PairRingProof,
  type PairVerifyWriter,
  type ReplayResult,
  type ResidencyBatch,
  findPairRingMaxDraftTokens,
  pairRingServedDraftTokens,
  provePairRing,
  replayPairRing,
  runPairRingScenario,
} from "@dsv4-kv/planner";
import { describeBatches } from "@dsv4-kv/planner/internal";
import { sglangPairRingSize } from "@dsv4-kv/server-config";
import { InputError, UsageError } from "./args.js";
import { type Paint, paintFor } from "../colour.js";
import { choice } from "./flags.js";
import { completionJson, partialLine } from "./progress.js";
import type { CommandIO } from "./registry.js";

/** `--verify-writer`: who writes a verify block's pair state (ratio 2 only). */
export const VERIFY_WRITER_FLAG = {
  ...choice(
    PAIR_VERIFY_WRITERS,
    "ratio 2: the verify writer: torch (SGLang's routing) or verify-fused (the c2 verify grid)",
  ),
  arg: "W",
};

/** Flags of the c4/c128 ring that a ratio-2 run refuses, and the reason. */
const NOT_FOR_PAIR_RING: Record<string, string> = {
  "swa-page": "the pair-state ring is request-scoped: it has no SWA page",
  "req-ring": "the pair-state ring is always request-scoped",
  pad: "the pair-state ring has no write pad (its writers keep whole blocks or their last R₂ rows)",
  "pad-formula": "the pair-state ring has no write pad",
  html: "the HTML page draws the c4/c128 ring only",
};

/** Refuses the flags that do not apply to ratio 2 (and --verify-writer on any other ratio). */
export function refusePairRingFlags(values: Record<string, unknown>, ratio: number | undefined): void {
  if (ratio !== 2) {
    if (values["verify-writer"] !== undefined) {
      throw new UsageError("--verify-writer", values["verify-writer"], "applies only to --ratio 2 (the pair ring)");
    }
    return;
  }
  for (const [flag, why] of Object.entries(NOT_FOR_PAIR_RING)) {
    if (values[flag] !== undefined)
      throw new UsageError(`--${flag}`, values[flag], `does not apply to --ratio 2: ${why}`);
  }
}

export function pairRingLabel(ringSize: number, writer: PairVerifyWriter): string {
  return `c2 pair ring ${ringSize} (request ring, ${writer} verify writer)`;
}

function guardLine(p: PairRingProof): string {
  const g = p.guards;
  const kernel = g.kernelCheck ? "passes" : "refuses it";
  const pad = `${g.writePad} ${g.padServes ? ">=" : "<"} ${p.draftTokens}`;
  return (
    `  by hand this ring serves D <= ${p.derivedMaxDraftTokens} (${p.ring.verifyWriter} writer); SGLang's guards at ` +
    `D = ${p.draftTokens}: the c2 verify kernel's ring_size > draft_len ${kernel}, write pad ${pad}`
  );
}

function describePairProof(p: PairRingProof, paint: Paint, timeLimit: number): string {
  const ds = p.adaptive ? `every D in [1, ${p.draftTokens}]` : `D = ${p.draftTokens}`;
  const head = `${pairRingLabel(p.ring.ringSize, p.ring.verifyWriter)}, ${ds}`;
  const counts = `${p.states} canonical states, ${p.transitions} transitions, ${p.seconds.toFixed(1)} s`;
  if (!p.complete) return `${head}\n${paint.bad(partialLine(timeLimit, `${counts}, depth ${p.depth}`))}`;
  if (p.proved) {
    return `${head}\n${paint.ok("proved")}: no batch sequence loses a committed partner (${counts})\n${guardLine(p)}`;
  }
  const cx = p.counterexample!;
  return [
    head,
    `${paint.bad("NOT proved")} (${counts}); a shortest counterexample, ${cx.batches.length} batches from an empty ring:`,
    ...describeBatches(cx.batches).map((d, i) => `  ${i + 1}. ${d}`),
    `  ${cx.violation.message}`,
    "  (save the --json output and run `dsv4-kv simulate residency --replay FILE` to replay it)",
    guardLine(p),
  ].join("\n");
}

function pairProofJson(p: PairRingProof, timeLimit: number) {
  const { complete, seconds, ...rest } = p;
  return { ...rest, ...completionJson(complete, timeLimit), seconds: Number(seconds.toFixed(3)) };
}

/** Rings SGLang sizes (R₂ = 2 without speculation, else the smallest power of two >= 2 + D), for the table. */
const TABLE_RINGS = [2, 4, 8, 16, 32, 64];

/** The verify widths SGLang gives ring `ringSize` (`sglangPairRingSize`), as `a-b`, or none. */
function sglangWidths(ringSize: number): string {
  const ds: number[] = [];
  for (let d = 1; d <= 2 * ringSize; d++) {
    if (sglangPairRingSize(d) === ringSize) ds.push(d);
  }
  const base = ringSize === 2 ? "no speculation" : "";
  if (ds.length === 0) return base || "none";
  return `${base}${base ? ", " : ""}D ${ds[0]}-${ds.at(-1)}`;
}

/** `--find-max` without `--ring`: which R₂ serves which verify width, by proofs, next to SGLang's guards. */
function servesTable(adaptive: boolean, deadline: number, json: boolean): string {
  const rows = TABLE_RINGS.map((ringSize) => {
    const max = (verifyWriter: PairVerifyWriter) =>
      findPairRingMaxDraftTokens({ compressRatio: 2, ringSize, verifyWriter, adaptive, deadline });
    const torch = max("torch");
    const fused = max("verify-fused");
    const pad = torch.failure.guards.writePad;
    return { ringSize, torch, fused, kernelMax: ringSize - 1, writePad: pad, sglang: sglangWidths(ringSize) };
  });
  if (json) {
    const body = rows.map((r) => ({
      ringSize: r.ringSize,
      torchMaxDraftTokens: r.torch.maxDraftTokens,
      fusedMaxDraftTokens: r.fused.maxDraftTokens,
      complete: r.torch.complete && r.fused.complete,
      kernelCheckMaxDraftTokens: r.kernelMax,
      writePad: r.writePad,
      sglangSizesFor: r.sglang,
    }));
    return JSON.stringify({ rings: body }, null, 2);
  }
  const lines = ["R₂   torch serves   fused grid serves   kernel check   write pad   SGLang sizes it for"];
  for (const r of rows) {
    const cell = (m: PairRingMaxDraftTokens) => `D <= ${m.maxDraftTokens}${m.complete ? "" : "+"}`;
    lines.push(
      `${String(r.ringSize).padEnd(5)}${cell(r.torch).padEnd(15)}${cell(r.fused).padEnd(20)}` +
        `${`D <= ${r.kernelMax}`.padEnd(15)}${String(r.writePad).padEnd(12)}${r.sglang}`,
    );
  }
  lines.push(
    '(each "serves" cell is proved: D proves and D + 1 fails with a counterexample; prove one ring with --ring)',
  );
  return lines.join("\n");
}

export interface PairProveFlags {
  ring: number | undefined;
  draftTokens: number | undefined;
  findMax: boolean;
  adaptive: boolean;
  verifyWriter: PairVerifyWriter | undefined;
  maxStates: number;
  json: boolean;
  timeLimit: number;
  deadline: number;
}

/** `prove residency --ratio 2 …`: one proof, a --find-max scan, or (--find-max, no --ring) the table. */
export function provePairRingRun(f: PairProveFlags, io: CommandIO): number {
  const verifyWriter = f.verifyWriter ?? "torch";
  if (f.ring === undefined) {
    if (!f.findMax) throw new UsageError("--ring", undefined, "is required (or --find-max alone: the table of rings)");
    if (f.verifyWriter !== undefined) {
      throw new UsageError("--verify-writer", f.verifyWriter, "the table shows both writers: give --ring to pick one");
    }
    io.stdout.write(`${servesTable(f.adaptive, f.deadline, f.json)}\n`);
    return 0;
  }
  const base = { compressRatio: 2 as const, ringSize: f.ring, verifyWriter, adaptive: f.adaptive };
  const control = { maxStates: f.maxStates, deadline: f.deadline };
  const paint = paintFor(io.stdout, io.env);
  if (f.findMax) {
    const m = findPairRingMaxDraftTokens({ ...base, ...control });
    if (f.json) {
      const body = {
        maxDraftTokens: m.maxDraftTokens,
        ...completionJson(m.complete, f.timeLimit),
        proofs: m.proofs,
        proof: m.proof === null ? null : pairProofJson(m.proof, f.timeLimit),
        failure: pairProofJson(m.failure, f.timeLimit),
      };
      io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    } else {
      const head = `${pairRingLabel(f.ring, verifyWriter)}: serves at most ${m.maxDraftTokens} draft tokens per verify`;
      const parts = [head, ...(m.proof === null ? [] : [describePairProof(m.proof, paint, f.timeLimit)])];
      io.stdout.write(`${[...parts, describePairProof(m.failure, paint, f.timeLimit)].join("\n")}\n`);
    }
    return m.complete ? 0 : 3;
  }
  const p = provePairRing({ ...base, ...control, draftTokens: f.draftTokens! });
  const text = f.json
    ? JSON.stringify(pairProofJson(p, f.timeLimit), null, 2)
    : describePairProof(p, paint, f.timeLimit);
  io.stdout.write(`${text}\n`);
  if (!p.complete) return 3;
  return p.proved ? 0 : 1;
}

export interface PairSimulateFlags {
  ring: number;
  draftTokens: number;
  adaptive: boolean;
  verifyWriter: PairVerifyWriter | undefined;
  steps: number;
  seed: number;
  json: boolean;
}

/** `simulate residency --ratio 2 …`: a random run of verifies, chunks and decodes on one pair ring. */
export function simulatePairRingRun(f: PairSimulateFlags, io: CommandIO): number {
  const verifyWriter = f.verifyWriter ?? "torch";
  const r = runPairRingScenario({
    compressRatio: 2,
    ringSize: f.ring,
    verifyWriter,
    draftTokens: f.draftTokens,
    adaptive: f.adaptive,
    steps: f.steps,
    seed: f.seed,
  });
  const paint = paintFor(io.stdout, io.env);
  if (f.json) {
    const ring = { compressRatio: 2, ringSize: f.ring, verifyWriter };
    io.stdout.write(`${JSON.stringify({ ring, draftTokens: f.draftTokens, adaptive: f.adaptive, ...r }, null, 2)}\n`);
  } else {
    const served = pairRingServedDraftTokens(f.ring, verifyWriter);
    const ds = f.adaptive ? `D in [1, ${f.draftTokens}]` : `D = ${f.draftTokens}`;
    const lines = [
      `${pairRingLabel(f.ring, verifyWriter)}: serves at most ${served} draft tokens per verify`,
      `  ${r.steps} batches (seed ${f.seed}), ${r.verifies} verifies of ${ds}, final prefix ${r.finalPrefix}`,
      r.violations === 0
        ? `  ${paint.ok("clean")}: every pooled row found its committed partner`
        : `  ${r.violations} violation${r.violations === 1 ? "" : "s"}; first:\n  ${r.firstViolation!.message}`,
    ];
    io.stdout.write(`${lines.join("\n")}\n`);
  }
  return r.violations > 0 ? 1 : 0;
}

/** A `prove residency --ratio 2 --json` file's ring, or null when the file is of another ratio. */
export function pairReplayRing(
  ring: Record<string, unknown>,
  path: string,
): { ringSize: number; verifyWriter: PairVerifyWriter } | null {
  if (ring.compressRatio !== 2) return null;
  const { ringSize, verifyWriter } = ring;
  if (typeof ringSize !== "number") {
    throw new InputError("--replay", path, "has no ring.ringSize (a prove residency --json file gives it as a number)");
  }
  if (typeof verifyWriter !== "string" || !(PAIR_VERIFY_WRITERS as readonly string[]).includes(verifyWriter)) {
    throw new InputError("--replay", path, `has no ring.verifyWriter of ${PAIR_VERIFY_WRITERS.join(", ")}`);
  }
  return { ringSize, verifyWriter: verifyWriter as PairVerifyWriter };
}

/** Replays a pair-ring counterexample and explains its violation. */
export function replayPairRingRun(
  ring: { ringSize: number; verifyWriter: PairVerifyWriter },
  batches: ResidencyBatch[],
  json: boolean,
  io: CommandIO,
): number {
  const r: ReplayResult = replayPairRing({ compressRatio: 2, ...ring }, batches);
  if (json) {
    const { complete: _complete, ...rest } = r;
    io.stdout.write(`${JSON.stringify({ ...rest, complete: true, batches: batches.length }, null, 2)}\n`);
  } else {
    const paint = paintFor(io.stdout, io.env);
    const lines = [
      `replay on ${pairRingLabel(ring.ringSize, ring.verifyWriter)}:`,
      ...describeBatches(batches).map((d, i) => `  ${i + 1}. ${d}`),
      `result: ${r.firstViolation === null ? paint.ok("clean") : paint.bad(r.firstViolation.message)}`,
    ];
    io.stdout.write(`${lines.join("\n")}\n`);
  }
  return r.violations > 0 ? 1 : 0;
}
