/**
 * `dsv4-kv simulate compress --ratio 2`: DeepSeek-V4.1's ratio-2 compression proved on data (the pair-state ring of
 * @dsv4-kv/compress's ratio-2 scenario), with the flag table, progress, time limit and memory bound of the ring
 * scenarios (simulate-compress.ts).
 */
import type { Ratio2ScenarioOptions, Ratio2ScenarioReport } from "@dsv4-kv/compress";
import { Dsv4KvError } from "@dsv4-kv/errors";
import { UsageError } from "./args.js";
import { paintFor } from "../colour.js";
import type { CommandIO } from "./registry.js";
import {
  DEFAULT_TIME_LIMIT_SECONDS,
  EXIT_PARTIAL,
  completionJson,
  count,
  partialAfter,
  startTimedRun,
} from "./progress.js";
import { finiteOrName } from "./simulate-online-mtp.js";

/** Flags of the ring scenarios that ratio 2 has no use for, and why (one source: the refusal names the rule). */
const NOT_FOR_RATIO_2: Readonly<Record<string, string>> = {
  online: "online compression exists for c128 only",
  "pad-formula": "ratio 2 has no plan records and no write pad (the ring is req·R₂ + pos mod R₂)",
  pad: "ratio 2 has no plan records and no write pad (the ring is req·R₂ + pos mod R₂)",
  "swa-page-size": "the pair-state ring is per request, not per SWA page",
  "req-ring": "the pair-state ring is always a request ring",
};

/** Flags only ratio 2 takes. */
export const RATIO_2_ONLY = ["layout", "verify-writer"] as const;

/** Scenario fields and the flags that set them, so that a refusal names the flag. */
const FLAG_OF: Readonly<Record<string, string>> = {
  draftTokens: "--draft-tokens",
  ringSize: "--ring-size",
  layout: "--layout",
  verifyWriter: "--verify-writer",
  requests: "--requests",
  steps: "--steps",
  seed: "--seed",
};

/** The ratio-2 options from the parsed flags; refuses the ring scenarios' flags that do not apply. */
export function ratio2Options(values: Record<string, unknown>): Ratio2ScenarioOptions {
  for (const [flag, why] of Object.entries(NOT_FOR_RATIO_2)) {
    if (values[flag] !== undefined)
      throw new UsageError(`--${flag}`, values[flag], `does not apply to --ratio 2: ${why}`);
  }
  if (values["head-dim"] !== undefined && values["head-dim"] !== 512) {
    throw new UsageError("--head-dim", values["head-dim"], "must be 512 with --ratio 2 (the V4.1 latent)");
  }
  if (values["state-dtype"] !== undefined && values["state-dtype"] !== "fp32") {
    throw new UsageError(
      "--state-dtype",
      values["state-dtype"],
      "must be fp32 with --ratio 2 (the pair state is fp32)",
    );
  }
  if (values.backend === "gpu") {
    throw new UsageError("--backend", "gpu", "must be cpu with --ratio 2 (no CUDA kernel of c2 in this package yet)");
  }
  const set = <T>(key: string, v: T | undefined): Record<string, T> => (v === undefined ? {} : { [key]: v });
  return {
    draftTokens: values["draft-tokens"] as number,
    ...set("ringSize", values["ring-size"] as number | undefined),
    ...set("layout", values.layout as Ratio2ScenarioOptions["layout"]),
    ...set("verifyWriter", values["verify-writer"] as Ratio2ScenarioOptions["verifyWriter"]),
    ...set("adaptive", values.adaptive as boolean | undefined),
    ...set("steps", values.steps as number | undefined),
    ...set("seed", values.seed as number | undefined),
    ...set("requests", values.requests as number | undefined),
  };
}

function asUsage(err: unknown): unknown {
  if (!Dsv4KvError.isInstance(err) || err.field === undefined) return err;
  const flag = FLAG_OF[err.field];
  return flag === undefined ? err : new UsageError(flag, err.value, err.rule ?? "is refused", err.params);
}

type CheckMemory = (stateRows: number, rowElements: number) => number;

/** Runs the ratio-2 scenario of `values` (parsed by simulate-compress.ts) under its time limit; the exit code. */
export async function runRatio2(values: Record<string, unknown>, io: CommandIO, checkMemory: CheckMemory) {
  const options = ratio2Options(values);
  const compress = await import("@dsv4-kv/compress");
  const { Ratio2ScenarioRun } = await import("@dsv4-kv/compress/internal");
  let stateRows: number;
  try {
    stateRows = compress.ratio2StateRows(options);
  } catch (err) {
    throw asUsage(err);
  }
  const memory = checkMemory(stateRows, 1024);
  const steps = options.steps ?? 40;
  const timeLimit = (values["time-limit"] as number | undefined) ?? DEFAULT_TIME_LIMIT_SECONDS;
  const { progress, deadline } = startTimedRun(
    io.stderr,
    { label: "simulate compress", unit: "steps", quiet: values.quiet as boolean | undefined },
    timeLimit,
    `${count(steps)} steps of up to ${options.requests ?? 4} requests; ${count(stateRows)} pair-state rows, ` +
      `${(memory / 2 ** 20).toFixed(0)} MiB`,
  );
  let r: Ratio2ScenarioReport;
  try {
    const run = new Ratio2ScenarioRun({ ...options, onStep: (done, total) => progress.update(done, total) });
    while (!deadline.expired() && run.advance(1));
    r = run.report();
  } finally {
    progress.clear();
  }
  const complete = r.steps === steps;
  const ok = r.wrongEntries === 0 && r.wrongRingRows === 0;
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ ok, ...r, ...completionJson(complete, timeLimit) }, finiteOrName)}\n`);
  } else {
    const partial = complete ? "" : `${partialAfter(timeLimit, r.steps, steps, "steps")}\n`;
    io.stdout.write(`${partial}${ratio2Text(r, ok, paintFor(io.stdout, io.env), compress, complete)}`);
  }
  if (!ok) return 1;
  return complete ? 0 : EXIT_PARTIAL;
}

type Describe = Pick<typeof import("@dsv4-kv/compress"), "describeRatio2WrongEntry" | "describeRatio2WrongRingRow">;

function ratio2Text(
  r: Ratio2ScenarioReport,
  ok: boolean,
  paint: ReturnType<typeof paintFor>,
  describe: Describe & Pick<typeof import("@dsv4-kv/compress"), "ENTRY_LAYOUT_TRAITS">,
  complete: boolean,
): string {
  const b = r.batches;
  const e = r.entriesByKind;
  const ring =
    r.ringSize === r.speculativeRingSize
      ? "SGLang's ring for this D"
      : `SGLang's ring for this D is ${r.speculativeRingSize}`;
  const lines = [
    `compress scenario: c2 pair-state ring ${r.ringSize} per request (${ring}), ${r.layout} entries ` +
      `(${describe.ENTRY_LAYOUT_TRAITS[r.layout].bytesPerToken} B), ${r.verifyWriter} verify writer, ` +
      `D ${r.draftTokens}, cpu backend, seed ${r.seed}`,
    `  batches        ${r.steps} (${b.extend} extend, ${b.decode} decode, ${b.verify} verify); ` +
      `${r.requestsServed} requests`,
    `  entries        ${r.entries} checked (${e.extend} extend, ${e.decode} decode, ${e.verify} verify), ` +
      `${r.wrongEntries} wrong`,
    `  largest error  ${r.maxAbsError.toExponential(3)} abs against the float64 oracle, ` +
      `${r.maxBoundRatio.toFixed(3)} of its derived bound`,
    `  ring rows      ${r.ringRowsChecked} checked, ${r.wrongRingRows} wrong`,
  ];
  if (r.firstWrong) lines.push("  first wrong entry:", `    ${describe.describeRatio2WrongEntry(r.firstWrong)}`);
  if (r.firstWrongRingRow) {
    lines.push("  first wrong ring row:", `    ${describe.describeRatio2WrongRingRow(r.firstWrongRingRow)}`);
  }
  lines.push(ok ? paint.ok(complete ? "OK" : "OK so far") : paint.bad("FAILED: wrong compressed KV"), "");
  return lines.join("\n");
}
