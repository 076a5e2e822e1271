/**
 * Reconciles a vLLM DeepSeek-V4 start-up log with `planVllmKvCache` (docs/reference/vllm-kv-cache.md §16): the
 * log's arguments and lines give the inputs (the caller's overrides win), its printed KV memory is the budget anchor
 * (an input, never a match: the profile run is not modelled), and every figure it printed from that budget (blocks,
 * tokens, concurrency, the refusal's needed memory and estimate) is recomputed and judged equal, within the print's
 * rounding, or different. A difference carries a named cause: an alternative for an input the log does not state
 * that reproduces every figure (the batched-token budget, async scheduling, the FP4 indexer, the layer-tuple stride),
 * or the reason nothing here sizes it (a layout or draft the model leaves out, a vLLM version before the modelled one).
 */
import type { VllmKvInput } from "../vllm/inputs.js";
import { type ReadInputs, type VllmLogOverrides, inputsFromArgs, readLogInputs } from "./args.js";
import { type CauseEnv, findCause } from "./causes.js";
import { type Anchor, type Recomputed, gibRange, recompute, recomputeRefusal } from "./recompute.js";
import { inputFigures, settingFigures } from "./settings.js";
import type {
  ParsedVllmLog,
  VllmFigureComparison,
  VllmLogComparison,
  VllmLoggedLine,
  VllmVerdict,
  VllmVersionUsed,
} from "./types.js";
import { versionUsed } from "./version-used.js";

export interface VllmReconcileOptions {
  /** The model the log served (a ModelPreset fits) and its name for the report. */
  model: VllmKvInput["model"] & { contextLen: number };
  modelName: string;
  /** Inputs the caller states: they win over the log's. */
  overrides?: VllmLogOverrides;
  /** The caller's flags as vLLM's dest keys (`launchArgs` of a command line): read as `overrides` are. */
  flagArgs?: Readonly<Record<string, unknown>>;
  /** `--vllm-version`: whose sizing to use; without it the log's printed version, else the default (D45). */
  vllmVersion?: string;
}

type Env = CauseEnv;

interface Ctx {
  parsed: ParsedVllmLog;
  version: VllmVersionUsed;
  read: ReadInputs;
  base: Env;
  anchor: Anchor | null;
  anchorLine: VllmLoggedLine | null;
  out: VllmFigureComparison[];
}

const figuresOf = (p: ParsedVllmLog, kind: VllmLoggedLine["kind"]) => p.figures.filter((f) => f.kind === kind);

function baseInput(
  read: ReadInputs,
  options: VllmReconcileOptions,
  version: VllmVersionUsed,
): Omit<VllmKvInput, "budget"> {
  const { kvCacheMemoryBytes: _, ...values } = read.values;
  // Without a stated length vLLM takes the model's (its max_position_embeddings, the preset's context).
  const len = values.maxModelLen ?? options.model.contextLen;
  return { model: options.model, ...values, maxModelLen: len, inFlightRule: version.behaviour.inFlight };
}

/** The budget: --kv-cache-memory-bytes exactly, else the smallest logged available memory, else the refusal's. */
function anchorOf(parsed: ParsedVllmLog, read: ReadInputs): { anchor: Anchor | null; line: VllmLoggedLine | null } {
  if (read.values.kvCacheMemoryBytes !== undefined) {
    const bytes = read.values.kvCacheMemoryBytes;
    return { anchor: { kind: "bytes", lo: bytes, hi: bytes }, line: null };
  }
  const lines = [...figuresOf(parsed, "available-kv-gib"), ...figuresOf(parsed, "refusal")];
  if (lines.length > 0) {
    const line = lines.reduce((a, b) => (b.numbers.availableKvGiB!.value < a.numbers.availableKvGiB!.value ? b : a));
    const n = line.numbers.availableKvGiB!;
    return { anchor: { kind: "bytes", ...gibRange(n.value, Math.max(2, n.decimals)) }, line };
  }
  const tokens = figuresOf(parsed, "kv-cache-tokens")[0];
  if (tokens) return { anchor: { kind: "tokens", tokens: tokens.numbers.kvCacheTokens!.value }, line: tokens };
  return { anchor: null, line: null };
}

const shown = (values: readonly (number | string | null)[]) => {
  const list = [...new Set(values.map((v) => (v === null ? "none" : String(v))))];
  if (list.length <= 1) return list[0] ?? "none";
  const nums = list.map(Number);
  return nums.every(Number.isFinite) ? `${Math.min(...nums)}…${Math.max(...nums)}` : list.join(" or ");
};

function verdict(logged: string, computed: readonly (number | string | null)[], range?: boolean): VllmVerdict {
  if (range) {
    const [lo = null, hi = null] = computed as (number | null)[];
    const n = Number(logged);
    if (lo === null || hi === null || !(n >= lo && n <= hi)) return "different";
    return lo === hi ? "equal" : "within-rounding";
  }
  const texts = new Set(computed.map((v) => (v === null ? "none" : String(v))));
  if (!texts.has(logged)) return "different";
  return texts.size === 1 ? "equal" : "within-rounding";
}

/** The KV figures of the log under `env`: each logged one with its computed values. */
interface KvFigure {
  line: VllmLoggedLine;
  name: string;
  logged: string;
  values: (number | string | null)[];
  /** `values` is [lo, hi] of a monotone figure: the logged value must lie inside. */
  range?: boolean;
  why: string;
}

function kvFigures(ctx: Ctx, env: Env): KvFigure[] {
  const { parsed } = ctx;
  const out: KvFigure[] = [];
  const anchor = ctx.anchor;
  if (anchor && (figuresOf(parsed, "kv-cache-tokens").length > 0 || figuresOf(parsed, "max-concurrency").length > 0)) {
    const r = recompute(env.input, anchor, env.stride);
    pushPrinted(ctx, r, out);
  }
  for (const line of figuresOf(parsed, "refusal")) {
    const n = line.numbers;
    const avail = gibRange(n.availableKvGiB!.value, Math.max(2, n.availableKvGiB!.decimals));
    const r = recomputeRefusal({ ...env.input, maxModelLen: n.maxModelLen!.value }, avail);
    const why = "the start-up check's price: tuples × tuple bytes × blocks per request, in GiB as vLLM rounds it";
    out.push({ line, name: "refusal.neededGiB", logged: n.neededGiB!.text, values: [r.neededText], why });
    if (n.estimatedMaxModelLen)
      out.push({
        line,
        name: "refusal.estimatedMaxModelLen",
        logged: String(n.estimatedMaxModelLen.value),
        values: r.estimates,
        range: true,
        why: "the longest max_model_len whose request passes the check, over the logged available memory's range",
      });
  }
  return out;
}

function pushPrinted(ctx: Ctx, r: Recomputed, out: KvFigure[]) {
  const per = `${r.strideBytes.toLocaleString("en-US")} B per block, ${r.blocksPerRequest} blocks per request`;
  for (const line of figuresOf(ctx.parsed, "num-gpu-blocks"))
    out.push({
      line,
      name: "numGpuBlocks",
      logged: String(line.numbers.numGpuBlocks!.value),
      values: r.blocks,
      why: per,
    });
  for (const line of figuresOf(ctx.parsed, "kv-cache-tokens")) {
    if (ctx.anchor?.kind === "tokens" && line === ctx.anchorLine) continue;
    const logged = String(line.numbers.kvCacheTokens!.value);
    out.push({ line, name: "kvCacheTokens", logged, values: r.tokens, why: `int(blocks / per request × L); ${per}` });
  }
  for (const line of figuresOf(ctx.parsed, "max-concurrency")) {
    const logged = line.numbers.maxConcurrency!.text;
    const values = r.blocks.length === 0 ? [null] : r.concurrency;
    out.push({
      line,
      name: "maxConcurrency",
      logged,
      values,
      why: `blocks / blocks per request, two decimals; ${per}`,
    });
  }
  if (r.availableText !== null)
    for (const line of figuresOf(ctx.parsed, "available-kv-gib"))
      out.push({
        line,
        name: "availableKvGiB",
        logged: line.numbers.availableKvGiB!.text,
        values: [r.availableText],
        why: "--kv-cache-memory-bytes as vLLM prints it: round(bytes / GiB, 2)",
      });
}

const reproduces = (figs: KvFigure[]) =>
  figs.length > 0 && figs.every((f) => verdict(f.logged, f.values, f.range) !== "different");

export function reconcileVllmLog(parsed: ParsedVllmLog, options: VllmReconcileOptions): VllmLogComparison {
  const flags = options.flagArgs ? inputsFromArgs(options.flagArgs) : null;
  const read = readLogInputs(parsed, { ...flags?.overrides, ...options.overrides });
  if (flags) read.notModelled.push(...flags.notModelled);
  const { anchor, line: anchorLine } = anchorOf(parsed, read);
  const version = versionUsed(parsed, options.vllmVersion);
  const base: Env = { id: "base", text: "", input: baseInput(read, options, version), stride: "packed" };
  const ctx: Ctx = { parsed, version, read, base, anchor, anchorLine, out: [] };
  const layout = read.notModelled.find((n) => n.name === "kv_cache_dtype" || n.name === "kv cache format");
  inputFigures(ctx);
  if (layout) notComputed(ctx, layout);
  else compareKv(ctx);
  settingFigures(ctx);
  const compared = ctx.out.filter((f) => f.role === "compared").length;
  const comparison: VllmLogComparison = {
    engine: "vllm",
    version: parsed.version?.text ?? null,
    model: options.modelName,
    evidence: parsed.evidence,
    inputs: read.sources,
    figures: ctx.out.sort((a, b) => a.line - b.line),
    skipped: parsed.skipped,
    versionUsed: version,
  };
  if (compared > 0) return comparison;
  const why = layout
    ? `the log's ${layout.name} ${layout.value} is a layout dsv4-kv does not size`
    : "the log prints no KV figure sized from a budget (no GPU KV cache size, concurrency, blocks or refusal line)";
  return { ...comparison, nothingCompared: why };
}

function compareKv(ctx: Ctx): void {
  const figs = kvFigures(ctx, ctx.base);
  const differs = figs.some((f) => verdict(f.logged, f.values, f.range) === "different");
  const cause = differs
    ? findCause(ctx.base, ctx.read, ctx.parsed, ctx.version, (env) => reproduces(kvFigures(ctx, env)))
    : undefined;
  for (const f of figs) {
    const v = verdict(f.logged, f.values, f.range);
    ctx.out.push({
      name: f.name,
      line: f.line.line,
      source: f.line.source,
      logged: f.logged,
      computed: shown(f.values),
      role: "compared",
      verdict: v,
      why: f.why,
      ...(v === "different" && cause ? { cause } : {}),
    });
  }
}

function notComputed(ctx: Ctx, layout: { name: string; value: string }): void {
  const kinds = ["kv-cache-tokens", "max-concurrency", "num-gpu-blocks", "refusal"] as const;
  for (const line of ctx.parsed.figures.filter((f) => (kinds as readonly string[]).includes(f.kind)))
    ctx.out.push({
      name: line.kind,
      line: line.line,
      source: line.source,
      logged: Object.values(line.numbers)
        .map((n) => n.text)
        .join(" / "),
      computed: null,
      role: "not-computed",
      verdict: null,
      why: `${layout.name} ${layout.value}: its page sizes are not modelled`,
      cause: {
        id: "layout-not-modelled",
        explained: false,
        text: `the ${layout.name} ${layout.value} (a community fork's 4-bit layout) stores pages of other sizes; only fp8_ds_mla is modelled`,
      },
    });
}
