/**
 * `dsv4-kv simulate compress`: the compress path proved on data. Random multi-request scenarios planned by the real
 * planner run on the CPU or GPU compress backend; every committed entry is checked against the offline compression
 * of the committed tokens of its window.
 */
import type { PadFormula } from "@dsv4-kv/planner";
import { Dsv4KvError } from "@dsv4-kv/errors";
import type { CompressScenarioOptions, CompressScenarioReport, RingCompressBackend } from "@dsv4-kv/compress";
import type { OnlineMtpBackend } from "@dsv4-kv/online-mtp-controller";
import { LimitError, UsageError } from "./args.js";
import { paintFor } from "../colour.js";
import { loadGpuBackend, requireKernelsCuda } from "../gpu.js";
import { type FlagTable, choice, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import type { CommandIO } from "./registry.js";
import { VERIFY_WRITER_FLAG } from "./pair-ring.js";
import { PAD_FORMULA_FLAG, RATIO_FLAG, refusePadWithFormula, requireRatio } from "./residency-flags.js";
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
import { finiteOrName } from "./simulate-online-mtp.js";
import { RATIO_2_ONLY, runRatio2 } from "./simulate-compress-ratio2.js";

/** The --max-memory-gib default: what a 4 GB address limit, or a small CI machine, leaves a run. */
export const DEFAULT_MAX_MEMORY_GIB = 4;
/** The longest typed array Node allocates (elements of one state pool or its garbage fill). */
const MAX_TYPED_ARRAY_ELEMENTS = 2 ** 32 - 1;

const FLAGS = {
  ratio: { ...RATIO_FLAG, required: true },
  online: { type: "bool", help: "c128: also run the online c128 driver and compare its entries with the ring's" },
  "draft-tokens": {
    type: "int",
    min: 1,
    max: 1024,
    arg: "D",
    required: true,
    help: "draft tokens per verify (the maximum with --adaptive; at most 8 with --online)",
  },
  adaptive: { type: "bool", help: "draw each verify batch's D from [1, D]" },
  backend: choice(["cpu", "gpu"], "cpu or gpu (CUDA kernels; needs a GPU)", "cpu"),
  "pad-formula": { ...PAD_FORMULA_FLAG, arg: "F" },
  pad: { type: "int", min: 0, max: 65536, help: "force the write pad" },
  steps: { type: "int", min: 0, max: 1_000_000, default: 40, help: "batches" },
  seed: { type: "int", min: 0, max: 0xffffffff, default: 1, help: "random seed" },
  requests: { type: "int", min: 1, max: 64, default: 4, help: "most concurrent requests (slots are reused)" },
  "ring-size": {
    type: "int",
    min: 1,
    max: 65536,
    help: "ring size in slots (default c4 16, c128 256; c2: the pair-state ring R₂, default the least power of 2 >= D + 2)",
  },
  "swa-page-size": {
    type: "int",
    min: 1,
    max: 65536,
    help: "SWA page size in tokens (default 256; a request ring's, c128 or --req-ring, a multiple of its ring size)",
  },
  "req-ring": { type: "bool", help: "c4: use the request ring instead of the paged SWA ring" },
  "head-dim": { type: "int", min: 128, max: 512, choices: [128, 512], arg: "128|512", default: 512, help: "head dim" },
  "state-dtype": choice(["fp32", "bf16"], "fp32 or bf16 ring state", "fp32"),
  layout: choice(
    ["v4", "v41", "v41-fp4"],
    "c2: the KV entry layout, v4 (584 B, default), v41 (528 B), v41-fp4 (288 B)",
  ),
  "verify-writer": VERIFY_WRITER_FLAG,
  "max-memory-gib": {
    type: "number",
    min: 0,
    minExclusive: true,
    max: 1024,
    arg: "GIB",
    default: DEFAULT_MAX_MEMORY_GIB,
    help: "refuse before the run starts when its state pool and host buffers need more (GiB of 2^30 bytes)",
  },
  "time-limit": timeLimitFlag(DEFAULT_TIME_LIMIT_SECONDS),
  quiet: QUIET_FLAG,
  json: {
    type: "bool",
    help: "print {ok, entries, wrongEntries, maxAbsError, maxRelError, firstWrong, ringRowsChecked, wrongRingRows, ...}",
  },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--ratio 4|128 --draft-tokens D [--online] [--adaptive] [--backend cpu|gpu]\n[--pad-formula derived|pre-fix-device|pre-fix-host | --pad N]\n[--steps N] [--seed N] [--requests N] [--ring-size N] [--swa-page-size N]\n[--req-ring] [--head-dim 128|512] [--state-dtype fp32|bf16]\n[--max-memory-gib GIB] [--time-limit SECONDS] [--quiet] [--json]",
    "--ratio 2 --draft-tokens D [--ring-size R] [--layout v4|v41|v41-fp4]\n[--verify-writer torch|verify-fused] [--adaptive] [--steps N] [--seed N]\n[--requests N] [--max-memory-gib GIB] [--time-limit SECONDS] [--quiet] [--json]",
  ],
  description: `Proves the compress path on data. A seeded scenario of up to --requests concurrent requests (arriving,
finishing, their slots reused) runs one batch per step: chunked prefills (some longer than a window, some
crossing SWA pages), decodes, and verifies of D draft tokens with a random accept per request; paged c4 adds
radix resumes (a new request sharing another's SWA pages up to a page boundary). The real planner plans every
batch with the chosen pad (CUDA-graph padding on some), the compress backend runs it, and every entry whose
position is committed is compared with the float64 offline compression of the committed tokens of its window
(fp32 or bf16 bound). After every batch each ring row a later window can read must hold its committed token
bitwise. Token rows differ per attempt, so a rejected draft left in the ring shows as a wrong entry: with
--pad-formula pre-fix-device or pre-fix-host this is the upstream bug on data. --online (c128) runs the same
tokens through the online c128 driver and requires the same entries. The first wrong entry is explained: which
window positions the ring did not hold, and what it held instead.

--ratio 2 runs DeepSeek-V4.1's ratio-2 compression instead: no plans, a pair-state ring of R₂ slots per request
(slot req·R₂ + pos mod R₂) written by SGLang's rules (decode: an even position parks its state, an odd one pools
with pos − 1; extend and verify, the torch writer: reads first, then the last R₂ rows of each request;
--verify-writer verify-fused: c2.cuh's verify grid, even rows write). Every committed entry (pair softmax
pooling, RMSNorm, RoPE at pos − 1, the --layout quantisation) must equal byte for byte the offline
compression of its committed pair and lie within the derived bound of the float64 oracle; every ring row a
next position pairs with must hold its committed token. A ring narrower than D (--ring-size) shows wrong
entries. --online, --pad-formula, --pad, --swa-page-size, --req-ring and --backend gpu do not apply to it.

Before it starts, the memory the run needs (its state pool: state rows × row elements, and the host buffer that
fills it) is checked against --max-memory-gib (default ${DEFAULT_MAX_MEMORY_GIB}): a larger run is refused (WORK_LIMIT) naming the
flags that size it and the bytes. Then stderr shows the work (steps × requests, the state rows) and progress
with an ETA: a rewritten line on a terminal, a plain line every 2 s otherwise (--quiet: none). --time-limit
(default ${DEFAULT_TIME_LIMIT_SECONDS} s) stops the run after the batch it is in, with a partial result marked as such ("complete": false
in --json, exit 3 when nothing failed so far).`,
  flags: FLAGS,
  exitCodes: [
    [0, "every entry right, every ring row intact (and, with --online, the online entries equal)"],
    [1, "otherwise"],
    [2, "bad input, a run larger than --max-memory-gib, or --backend gpu without kernels-cuda or a GPU"],
    [EXIT_PARTIAL, "stopped at --time-limit before a wrong entry (partial)"],
  ],
};

/** Scenario fields and the flags that set them, so that a refusal names the flag. */
const FLAG_OF: Readonly<Record<string, string>> = {
  compressRatio: "--ratio",
  ringSize: "--ring-size",
  swaPageSize: "--swa-page-size",
  useReqRing: "--req-ring",
  draftTokens: "--draft-tokens",
  writePad: "--pad",
  padFormula: "--pad-formula",
  requests: "--requests",
  headDim: "--head-dim",
  online: "--online",
  stateDtype: "--state-dtype",
};

interface Backends {
  ring: RingCompressBackend;
  online?: OnlineMtpBackend;
}

async function gpuBackends(options: CompressScenarioOptions, stateRows: number): Promise<Backends | string> {
  requireKernelsCuda("--backend", "gpu");
  const gpu = await import("@dsv4-kv/compress/gpu");
  const probe = gpu.probeGpuCompressBackend();
  if (!probe.ok) return probe.reason;
  const ring = gpu.createGpuCompressBackend({
    compressRatio: options.compressRatio,
    headDim: options.headDim ?? 512,
    stateDtype: options.stateDtype ?? "fp32",
    stateRows,
  });
  if (!options.online) return { ring };
  try {
    const mtpGpu = await loadGpuBackend("--backend", "gpu");
    return { ring, online: mtpGpu.createGpuBackend() };
  } catch (err) {
    ring.dispose(); // its device memory, in a process that outlives the command
    throw err;
  }
}

async function cpuBackends(options: CompressScenarioOptions, stateRows: number): Promise<Backends> {
  const { CpuCompressBackend } = await import("@dsv4-kv/compress");
  const ring = new CpuCompressBackend({
    compressRatio: options.compressRatio,
    headDim: options.headDim ?? 512,
    stateDtype: options.stateDtype ?? "fp32",
    stateRows,
  });
  if (!options.online) return { ring };
  const { CpuBackend } = await import("@dsv4-kv/online-mtp-controller");
  return { ring, online: new CpuBackend() };
}

function scenarioOptions(values: Record<string, unknown>): CompressScenarioOptions {
  const ratio = requireRatio(values.ratio as number);
  const headDim = (values["head-dim"] as number | undefined) ?? 512;
  if (headDim !== 128 && headDim !== 512) throw new UsageError("--head-dim", headDim, "must be 128 or 512");
  refusePadWithFormula(values.pad as number | undefined, values["pad-formula"] as PadFormula | undefined);
  const set = <T>(key: string, v: T | undefined): Record<string, T> => (v === undefined ? {} : { [key]: v });
  return {
    compressRatio: ratio,
    draftTokens: values["draft-tokens"] as number,
    headDim,
    ...set("ringSize", values["ring-size"] as number | undefined),
    ...set("swaPageSize", values["swa-page-size"] as number | undefined),
    ...set("useReqRing", values["req-ring"] as boolean | undefined),
    ...set("adaptive", values.adaptive as boolean | undefined),
    ...set("padFormula", values["pad-formula"] as PadFormula | undefined),
    ...set("writePad", values.pad as number | undefined),
    ...set("steps", values.steps as number | undefined),
    ...set("seed", values.seed as number | undefined),
    ...set("requests", values.requests as number | undefined),
    ...set("stateDtype", values["state-dtype"] as "fp32" | "bf16" | undefined),
    ...set("online", values.online as boolean | undefined),
  };
}

/** A scenario refusal (a CompressError or PlannerError on a field) as a UsageError on the flag that set it. */
function asUsage(err: unknown): unknown {
  if (!Dsv4KvError.isInstance(err) || err.field === undefined) return err;
  const flag = FLAG_OF[err.field];
  if (flag === undefined) return err;
  return new UsageError(flag, err.value, err.rule ?? "is refused", err.params);
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  if (values.ratio !== 2 && values.ratio !== 4 && values.ratio !== 128) {
    throw new UsageError("--ratio", values.ratio, "must be 2, 4 or 128");
  }
  if (values.ratio === 2) {
    const limits = { backend: "cpu", maxGib: values["max-memory-gib"], hostFill: false, requests: values.requests };
    return runRatio2(values, io, (stateRows, rowElems) => checkMemory({ stateRows, rowElems }, limits));
  }
  for (const flag of RATIO_2_ONLY) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag}`, values[flag], "applies to --ratio 2 only");
  }
  const options = scenarioOptions(values);
  const compress = await import("@dsv4-kv/compress");
  const { CompressScenarioRun } = await import("@dsv4-kv/compress/internal");
  let stateRows: number;
  try {
    stateRows = compress.scenarioStateRows(options);
  } catch (err) {
    throw asUsage(err);
  }
  const rowElems = compress.rowBlocks(options.compressRatio) * (options.headDim ?? 512);
  const memory = checkMemory(
    { stateRows, rowElems },
    {
      backend: values.backend ?? "cpu",
      maxGib: values["max-memory-gib"],
      bf16: options.stateDtype === "bf16",
      hostFill: true,
      requests: options.requests,
    },
  );
  const backends =
    values.backend === "gpu" ? await gpuBackends(options, stateRows) : await cpuBackends(options, stateRows);
  if (typeof backends === "string") {
    io.stderr.write(
      `dsv4-kv simulate compress: --backend gpu unavailable: ${backends} ` +
        "(run on a machine with an NVIDIA GPU and driver, or use --backend cpu)\n",
    );
    return 2;
  }
  const steps = options.steps ?? 40;
  const timeLimit = values["time-limit"] ?? DEFAULT_TIME_LIMIT_SECONDS;
  const { progress, deadline } = startTimedRun(
    io.stderr,
    { label: "simulate compress", unit: "steps", quiet: values.quiet },
    timeLimit,
    `${count(steps)} steps of up to ${options.requests ?? 4} requests; ${count(stateRows)} state rows, ` +
      `${(memory / 2 ** 20).toFixed(0)} MiB`,
  );
  let r: CompressScenarioReport;
  try {
    const onStep = (done: number, total: number) => progress.update(done, total);
    const run = new CompressScenarioRun({ ...options, onStep }, backends);
    try {
      while (!deadline.expired() && run.advance(1));
      r = run.report();
    } finally {
      run.dispose();
    }
  } finally {
    progress.clear();
    backends.ring.dispose();
    backends.online?.dispose?.();
  }
  const complete = r.steps === steps;
  const ok = r.wrongEntries === 0 && r.wrongRingRows === 0 && (r.onlineMismatches ?? 0) === 0;
  if (values.json) {
    const body = { ok, ...ringFieldsThatApply(r), ...completionJson(complete, timeLimit) };
    io.stdout.write(`${JSON.stringify(body, finiteOrName)}\n`);
  } else {
    const partial = complete ? "" : `${partialAfter(timeLimit, r.steps, steps, "steps")}\n`;
    io.stdout.write(`${partial}${textReport(r, ok, paintFor(io.stdout, io.env), compress, complete)}`);
  }
  if (!ok) return 1;
  return complete ? 0 : EXIT_PARTIAL;
}

/** What sizes a run's memory besides its pool: where it lives, the limit, its element type, its host fill. */
interface MemoryLimits {
  backend: string;
  maxGib: number | undefined;
  bf16?: boolean;
  /** A host buffer of garbage as large as the pool fills it (the ring backends); ratio 2 fills its pool in place. */
  hostFill: boolean;
  requests: number | undefined;
}

/**
 * Bytes the run allocates before its first batch: the state pool (fp32 4 B, bf16 2 B an element; on the device
 * for gpu) and the fp32 host buffer of garbage that fills it. Refused past --max-memory-gib, or past the longest
 * typed array, naming the flags that size the pool. Returns the host and device bytes together.
 */
function checkMemory(
  { stateRows, rowElems }: { stateRows: number; rowElems: number },
  { backend, maxGib, bf16, hostFill, requests }: MemoryLimits,
): number {
  const elements = stateRows * rowElems;
  const stateBytes = elements * (bf16 ? 2 : 4);
  const bytes = stateBytes + (hostFill ? elements * 4 : 0);
  const limitGib = maxGib ?? DEFAULT_MAX_MEMORY_GIB;
  const sizing = "--requests, --ring-size, --swa-page-size, --head-dim";
  const params = { stateRows, rowElements: rowElems, stateBytes, bytes, maxMemoryGib: limitGib, backend };
  if (bytes > limitGib * 2 ** 30) {
    throw new LimitError(
      "--max-memory-gib",
      limitGib,
      `is less than the run needs: ${count(bytes)} bytes (${(bytes / 2 ** 30).toFixed(1)} GiB: ${count(stateRows)} ` +
        `state rows × ${rowElems} elements, the pool${backend === "gpu" ? " on the device" : ""}` +
        `${hostFill ? " and its fp32 fill on the host" : ""}); lower ${sizing}, or raise --max-memory-gib`,
      params,
    );
  }
  if (elements > MAX_TYPED_ARRAY_ELEMENTS) {
    throw new LimitError(
      "--requests",
      requests ?? 4,
      `with these ${sizing}, the state pool has ${count(elements)} elements (${count(stateRows)} rows × ${rowElems}), ` +
        `more than the ${count(MAX_TYPED_ARRAY_ELEMENTS)} one buffer holds (${count(bytes)} bytes in all); lower ${sizing}`,
      params,
    );
  }
  return bytes;
}

/**
 * The report without the ring fields that do not apply, as the text report and `dsv4-kv plan` input have it: c128
 * always uses a request ring (no `useReqRing`, no SWA pages), and a c4 request ring has no SWA pages.
 */
function ringFieldsThatApply(r: CompressScenarioReport): Partial<CompressScenarioReport> {
  const out: Partial<CompressScenarioReport> = { ...r }; // a copy keeps the report's key order
  if (r.compressRatio !== 4) delete out.useReqRing;
  if (r.compressRatio !== 4 || r.useReqRing) delete out.swaPageSize;
  return out;
}

function textReport(
  r: CompressScenarioReport,
  ok: boolean,
  paint: ReturnType<typeof paintFor>,
  describe: Pick<typeof import("@dsv4-kv/compress"), "describeWrongEntry" | "describeWrongRingRow">,
  complete = true,
): string {
  const ring = r.compressRatio === 4 && !r.useReqRing ? `paged, SWA page ${r.swaPageSize}` : "request ring";
  const b = r.batches;
  const e = r.entriesByKind;
  const lines = [
    `compress scenario: c${r.compressRatio} ring ${r.ringSize} (${ring}), pad ${r.writePad} (${r.padFormula}), ` +
      `D ${r.draftTokens}, ${r.stateDtype} state, head dim ${r.headDim}, ${r.backend} backend, seed ${r.seed}`,
    `  batches        ${r.steps} (${b.prefill} prefill, ${b.decode} decode, ${b.verify} verify); ` +
      `${r.requestsServed} requests, ${r.radixResumes} radix resumes`,
    `  entries        ${r.entries} checked (${e.prefill} prefill, ${e.decode} decode, ${e.verify} verify), ` +
      `${r.wrongEntries} wrong`,
    `  largest error  ${r.maxAbsError.toExponential(3)} abs, ${r.maxRelError.toExponential(3)} relative to max|kv|`,
    `  ring rows      ${r.ringRowsChecked} checked, ${r.wrongRingRows} wrong`,
  ];
  if (r.onlineEntries !== undefined) {
    lines.push(`  online         ${r.onlineEntries} entries, ${r.onlineMismatches} mismatches`);
  }
  const window = r.compressRatio === 4 ? 8 : 128;
  if (r.firstWrong) lines.push("  first wrong entry:", `    ${describe.describeWrongEntry(r.firstWrong, window)}`);
  if (r.firstWrongRingRow) {
    lines.push("  first wrong ring row:", `    ${describe.describeWrongRingRow(r.firstWrongRingRow)}`);
  }
  const m = r.firstOnlineMismatch;
  if (m) {
    lines.push(
      "  first online mismatch:",
      `    step ${m.step}: request ${m.request}, position ${m.position}: ${m.kind}` +
        (m.kind === "values" ? ` (channel ${m.channel}: online ${m.online}, ring ${m.ring})` : ""),
    );
  }
  lines.push(ok ? paint.ok(complete ? "OK" : "OK so far") : paint.bad("FAILED: wrong compressed KV"), "");
  return lines.join("\n");
}
