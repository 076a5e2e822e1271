/**
 * `dsv4-kv simulate residency`: the planner's ring-residency checker from the command line.
 */
import { parseArgs } from "node:util";
import {
  SPECULATIVE_RING_SIZE,
  runResidencyScenario,
  type PadFormula,
  type ResidencyReport,
  type ResidencyScenario,
} from "@dsv4-kv/planner";
import { UsageError, intFlag } from "./args.js";
import type { CommandIO } from "./registry.js";

export const help = `Usage: dsv4-kv simulate residency --ratio 4|128 --ring N --swa-page N --draft-tokens D
                                  [--req-ring] [--adaptive] [--steps N] [--seed N]
                                  [--pad N | --pad-formula derived|pre-fix-device|pre-fix-host] [--json]

Drives one request's compress-state ring through an initial prefill, then speculative verifies of D draft
tokens with random accept lengths, mixed with plain chunks, decode steps and (paged c4) radix resumes, using
the real planner. Every compression must read the committed value of every position it needs; the first
violation is explained (position, slot, what the slot held, which write clobbered it).

With no ring flags it checks DeepSeek-V4's speculative rings at their limits: c4 ring 16 at 10 draft tokens
and c128 ring 256 at 130 (SWA page 256).

Options:
  --ratio 4|128        compression ratio
  --ring N             ring size in slots (a multiple of the ratio dividing the SWA page)
  --swa-page N         SWA page size in tokens
  --req-ring           c4: use the request-scoped ring instead of the paged SWA ring
  --draft-tokens D     draft tokens per verify (the maximum, with --adaptive)
  --adaptive           draw each verify's D from [1, D]
  --steps N            batches after the initial prefill (default 300)
  --seed N             random seed (default 1)
  --pad N              force the write pad
  --pad-formula F      derived (default) | pre-fix-device (min(ring - ratio, 4)) | pre-fix-host (no pad)
  --json               print {steps, verifies, violations, firstViolation, ...} per ring

Exit codes: 0 no violation, 1 a violation, 2 bad input.
`;

const PAD_FORMULAS: readonly PadFormula[] = ["derived", "pre-fix-device", "pre-fix-host"];

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
  return (step, total) => {
    const pct = Math.floor((step / total) * 100);
    if (pct === last && step !== total) return;
    last = pct;
    const filled = Math.round(pct / 4);
    io.stderr.write(
      `\r${label} [${"#".repeat(filled)}${".".repeat(25 - filled)}] ${String(pct).padStart(3)}% ${step}/${total}`,
    );
    if (step === total) io.stderr.write("\r\x1b[K");
  };
}

function describeRun(run: RingRun, r: ResidencyReport): string {
  const s = run.scenario;
  const padSource = s.writePad !== undefined ? "forced" : (s.padFormula ?? "derived");
  const lines = [
    `${run.label}: write pad ${r.writePad} (${padSource}) serves at most ${r.writePad} draft tokens`,
    `  ${r.steps} batches (seed ${s.seed ?? 1}), ${r.verifies} verifies of ${s.adaptive ? `D in [1, ${s.draftTokens}]` : `D = ${s.draftTokens}`}, final prefix ${r.finalPrefix}`,
  ];
  if (r.violations === 0) {
    lines.push("  clean: every compression read the committed value of every position");
  } else {
    lines.push(`  ${r.violations} violation${r.violations === 1 ? "" : "s"}; first:`);
    lines.push(`  ${r.firstViolation!.message}`);
  }
  return lines.join("\n");
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ratio: { type: "string" },
      ring: { type: "string" },
      "swa-page": { type: "string" },
      "req-ring": { type: "boolean", default: false },
      "draft-tokens": { type: "string" },
      adaptive: { type: "boolean", default: false },
      steps: { type: "string" },
      seed: { type: "string" },
      pad: { type: "string" },
      "pad-formula": { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const steps = intFlag("steps", values.steps, 0, 10_000_000) ?? 300;
  const seed = intFlag("seed", values.seed, 0, 0xffffffff) ?? 1;
  const padFormula = values["pad-formula"] as PadFormula | undefined;
  if (padFormula !== undefined && !PAD_FORMULAS.includes(padFormula)) {
    throw new UsageError(`--pad-formula = ${JSON.stringify(padFormula)}: must be one of ${PAD_FORMULAS.join(", ")}`);
  }
  const pad = intFlag("pad", values.pad, 0);
  if (pad !== undefined && padFormula !== undefined)
    throw new UsageError("--pad and --pad-formula are exclusive: give one");

  const ringFlags = [values.ratio, values.ring, values["swa-page"], values["draft-tokens"]];
  let runs: RingRun[];
  if (ringFlags.every((f) => f === undefined)) {
    runs = defaultRuns(steps, seed).map((r) => ({
      ...r,
      scenario: { ...r.scenario, adaptive: values.adaptive, writePad: pad, padFormula },
    }));
  } else {
    const names = ["ratio", "ring", "swa-page", "draft-tokens"];
    const missing = names.filter((_, i) => ringFlags[i] === undefined);
    if (missing.length > 0)
      throw new UsageError(
        `--${missing.join(", --")} ${missing.length === 1 ? "is" : "are"} required with --ratio/--ring/--swa-page/--draft-tokens (see --help)`,
      );
    const ratio = intFlag("ratio", values.ratio, 1)!;
    if (ratio !== 4 && ratio !== 128) throw new UsageError(`--ratio = ${ratio}: must be 4 or 128`);
    const scenario: ResidencyScenario = {
      compressRatio: ratio,
      ringSize: intFlag("ring", values.ring, 1)!,
      swaPageSize: intFlag("swa-page", values["swa-page"], 1)!,
      useReqRing: values["req-ring"],
      draftTokens: intFlag("draft-tokens", values["draft-tokens"], 1, 65535)!,
      adaptive: values.adaptive,
      steps,
      seed,
      writePad: pad,
      padFormula,
    };
    const kind =
      ratio === 128 ? "request ring" : values["req-ring"] ? "request ring" : `paged, SWA page ${scenario.swaPageSize}`;
    runs = [{ label: `c${ratio} ring ${scenario.ringSize} (${kind})`, scenario }];
  }

  const reports: Array<{ run: RingRun; report: ResidencyReport }> = [];
  for (const r of runs) {
    const onStep = values.json || steps < 2000 ? undefined : progressBar(io, r.label);
    reports.push({ run: r, report: runResidencyScenario({ ...r.scenario, onStep }) });
  }
  const violations = reports.reduce((n, r) => n + r.report.violations, 0);
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
    io.stdout.write(`${reports.map((r) => describeRun(r.run, r.report)).join("\n")}\n`);
    io.stdout.write(
      violations === 0
        ? "result: clean\n"
        : `result: ${violations} violation${violations === 1 ? "" : "s"}: committed KV would be silently corrupted\n`,
    );
  }
  return violations === 0 ? 0 : 1;
}
