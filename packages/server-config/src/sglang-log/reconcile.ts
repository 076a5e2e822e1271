/**
 * Reconciles the DSV4 sizing an SGLang server logged with what we compute from the logged budget, per rank, with the
 * arithmetic of the configurator generation that wrote the log (docs/reference/configurator-generations.md).
 */
import { GIB, numReqSlots, resolveMaxRunningRequests, type SizingConfig } from "@dsv4-kv/memory-pool";
import {
  type ConfiguratorGenerationId,
  type GenerationSizing,
  compressedPoolSizes,
  finalizedC128StatePoolSize,
  npuStatePoolSize,
  sizeForGeneration,
  sizesFromMaxTokensForGeneration,
} from "@dsv4-kv/memory-pool/internal";
import type { CheckReport } from "../check.js";
import { MODEL_PRESETS, type ModelPreset } from "../presets.js";
import { resolveServerConfig } from "../resolve.js";
import { detectGeneration } from "./detect.js";
import type { FigureComparison, LogComparison, LoggedNumber, LoggedSizingLine, ParsedSglangLog } from "./types.js";

export { detectGeneration } from "./detect.js";

/** The model of the report as sizing needs it: the preset of that name, or one rebuilt from the report's facts. */
function modelOf(report: CheckReport): ModelPreset {
  const contextLen = report.derived.contextLen;
  const known = MODEL_PRESETS[report.model.name];
  if (known) return { ...known, contextLen };
  const ratios = [...report.model.compressRatios];
  return {
    name: report.model.name,
    numHiddenLayers: report.model.layers.total,
    headDim: 512,
    qkNopeHeadDim: 448,
    qkRopeHeadDim: 64,
    indexHeadDim: 128,
    slidingWindow: 128,
    compressRatios: ratios,
    maxPositionEmbeddings: contextLen,
    contextLen,
    mtpLayers: ratios.length - report.model.layers.total,
    dsparkBlockSize: null,
    checkpointGiB: 0,
  };
}

/** The sizing config of the report, on the platform the log's generation ran on (NPU: page size 128). */
export function sizingConfigOf(report: CheckReport, generation: ConfiguratorGenerationId): SizingConfig {
  const args = generation === "npu" ? { ...report.args, platform: "npu" as const } : report.args;
  return resolveServerConfig(args, modelOf(report)).sizing;
}

function num(line: LoggedSizingLine, key: string): LoggedNumber | null {
  const v = line.fields[key];
  return v != null && typeof v === "object" ? v : null;
}

/** `[lo, hi]` bytes a GB figure printed to `decimals` places stands for (`x / 2^30` rounded). */
export function loggedGbRange(n: LoggedNumber): { lo: number; hi: number } {
  const half = 0.5 * 10 ** -n.decimals;
  return { lo: Math.max(0, Math.ceil((n.value - half) * GIB)), hi: Math.floor((n.value + half) * GIB) };
}

const gb = (bytes: number, decimals: number) => (bytes / GIB).toFixed(decimals);

interface Ctx {
  generation: ConfiguratorGenerationId;
  config: SizingConfig;
  rank: string | null;
  out: FigureComparison[];
  /** Sizing at the low and high end of the logged budget, and the one matching the logged full tokens. */
  lo: GenerationSizing | null;
  hi: GenerationSizing | null;
  current: GenerationSizing | null;
  /** The bytes the logged available_bytes stands for. */
  budget: { lo: number; hi: number } | null;
  /** The logged full tokens lie outside what the logged budget gives: the pools sized from it differ too. */
  fullDiffers: boolean;
  swaCapTokens?: number;
  targetInitSeen: boolean;
}

function push(
  ctx: Ctx,
  line: LoggedSizingLine,
  name: string,
  logged: string,
  computed: string | null,
  match: boolean,
  why?: string,
) {
  // Repeated lines (a re-sizing, the draft worker) are told apart by their line number in the reason.
  const where = why ? { why: `line ${line.line}: ${why}` } : {};
  const fig: FigureComparison = { name, rank: ctx.rank, logged, computed, match, ...where };
  ctx.out.push(fig);
}

/** An exact integer figure. */
function intFigure(ctx: Ctx, line: LoggedSizingLine, key: string, name: string, value: number, formula: string) {
  const n = num(line, key);
  if (!n) return;
  const match = n.value === value && n.decimals === 0;
  const follows = ctx.fullDiffers ? " (it follows from the full_token difference)" : "";
  const why = match ? undefined : `${formula} gives ${value}; the log says ${n.text}${follows}`;
  push(ctx, line, name, n.text, String(value), match, why);
}

/** A figure that depends on the budget: a range over the logged budget's precision. */
function rangeFigure(
  ctx: Ctx,
  line: LoggedSizingLine,
  key: string,
  name: string,
  at: (s: GenerationSizing) => number,
  render: (v: number, decimals: number) => string,
  formula: string,
) {
  const n = num(line, key);
  if (!n || !ctx.lo || !ctx.hi) return;
  const a = render(at(ctx.lo), n.decimals);
  const b = render(at(ctx.hi), n.decimals);
  const [lo, hi] = Number(a) <= Number(b) ? [a, b] : [b, a];
  const computed = lo === hi ? lo : `${lo}…${hi}`;
  const match = n.value >= Number(lo) && n.value <= Number(hi) && (lo !== hi || n.text === lo);
  const why = match
    ? undefined
    : `${formula}: over the logged budget (${ctx.budget?.lo}…${ctx.budget?.hi} B) this gives ${computed}; ` +
      `the log says ${n.text}`;
  push(ctx, line, name, n.text, computed, match, why);
}

function memoryCalculation(ctx: Ctx, line: LoggedSizingLine, report: CheckReport) {
  const avail = num(line, "available_bytes");
  if (!avail) {
    push(ctx, line, "available_bytes", "(absent)", null, false, "the memory calculation line has no available_bytes");
    return;
  }
  const { lo, hi } = loggedGbRange(avail);
  ctx.budget = { lo, hi };
  const opts = { swaCapTokens: ctx.swaCapTokens };
  ctx.lo = sizeForGeneration(ctx.generation, ctx.config, lo, opts);
  ctx.hi = sizeForGeneration(ctx.generation, ctx.config, hi, opts);
  // bytes_per_full_token does not depend on the budget.
  const bpft = num(line, "bytes_per_full_token");
  if (bpft) {
    const ours = ctx.lo.bytesPerFullToken.toFixed(bpft.decimals);
    const match = ours === bpft.text;
    push(ctx, line, "bytes_per_full_token", bpft.text, ours, match, match ? undefined : bpftWhy(ctx, ours, bpft.text));
  }
  availableFigure(ctx, line, avail, report);
  rangeFigure(
    ctx,
    line,
    "c128_state_fixed",
    "c128_state_fixed",
    (s) => s.c128StateFixedBytes,
    gb,
    "request-scoped c128 state for the requested (or estimated) running requests, in GB",
  );
  rangeFigure(
    ctx,
    line,
    "swa_fixed",
    "swa_fixed",
    (s) => s.swaFixedBytes,
    gb,
    "cap mode's SWA reservation: swa_tokens × bytes per SWA token, in GB",
  );
  const full = num(line, "full_token");
  const F = full && full.value >= ctx.lo.fullTokens && full.value <= ctx.hi.fullTokens ? full.value : null;
  rangeFigure(
    ctx,
    line,
    "full_token",
    "full_token",
    (s) => s.fullTokens,
    (v) => String(v),
    `full_token = int((available − fixed) / ${ctx.lo.bytesPerFullToken.toFixed(2)}) // page_size × page_size`,
  );
  ctx.fullDiffers = full != null && F == null;
  // Inside the logged range, the budget that gives the logged full tokens is the one the server had.
  ctx.current =
    F != null
      ? {
          ...ctx.lo,
          ...sizesFromMaxTokensForGeneration(ctx.generation, ctx.config, F, opts),
          c128StateFixedBytes: ctx.lo.c128StateFixedBytes,
          swaFixedBytes: ctx.lo.swaFixedBytes,
        }
      : ctx.lo;
}

function bpftWhy(ctx: Ctx, ours: string, logged: string): string {
  const c = ctx.config;
  return (
    `the server priced ${logged} B per full token, this generation's arithmetic gives ${ours} for ` +
    `swa_full_tokens_ratio=${c.swaFullTokensRatio}, speculative=${c.isSpeculative}, state dtype ` +
    `${c.stateDtypeBytes ?? 4} B, online c128=${!!c.onlineC128}: check the model and these arguments`
  );
}

function availableFigure(ctx: Ctx, line: LoggedSizingLine, avail: LoggedNumber, report: CheckReport) {
  const ours = report.budget.availableBytes;
  if (ours == null) {
    push(
      ctx,
      line,
      "available_bytes",
      avail.text,
      avail.text,
      true,
      "taken from the log: every other figure is computed from this budget",
    );
    return;
  }
  // Gen A logs the budget after scaling it by L / (L + 1) for the draft worker.
  const layers = report.derived.layers.total;
  const scaled =
    ctx.generation === "gen-a" && ctx.config.isSpeculative ? Math.trunc((ours * layers) / (layers + 1)) : ours;
  const computed = gb(scaled, avail.decimals);
  const match = computed === avail.text;
  push(
    ctx,
    line,
    "available_bytes",
    avail.text,
    computed,
    match,
    match
      ? undefined
      : `the check's budget (${scaled} B) prints as ${computed} GB, the server had ${avail.text} GB; the other figures ` +
          "are computed from the logged budget",
  );
}

function poolSizes(ctx: Ctx, line: LoggedSizingLine, report: CheckReport) {
  const full = num(line, "full");
  if (!ctx.current || !full) return unmodelledLine(ctx, line, "no memory calculation line sizes this pool line");
  let s = ctx.current;
  let source = "the logged budget";
  if (full.value !== s.fullTokens && ctx.lo && full.value < ctx.lo.fullTokens) {
    // A re-sizing from a token count: --max-total-tokens, or the logged full tokens themselves.
    const T = report.args.maxTotalTokens ?? full.value;
    s = sizesFromMaxTokensForGeneration(ctx.generation, ctx.config, T, { swaCapTokens: ctx.swaCapTokens });
    source = report.args.maxTotalTokens != null ? `--max-total-tokens=${T}` : `the logged full=${T}`;
    ctx.current = { ...ctx.current, ...s, c128StateFixedBytes: ctx.current.c128StateFixedBytes };
  }
  const H = ctx.config.hisparseRatio ?? 1;
  const W = ctx.config.model.slidingWindow;
  intFigure(ctx, line, "full", "pools.full", s.fullTokens, `full from ${source} (page-aligned)`);
  intFigure(
    ctx,
    line,
    "swa",
    "pools.swa",
    s.swaTokens,
    ctx.generation === "gen-b-cap"
      ? "swa = the cap (request_cap+headroom)"
      : "swa = int(full × ratio) // page_size × page_size",
  );
  intFigure(ctx, line, "c4", "pools.c4", s.c4Size, `c4 = full // ${4 * H}`);
  intFigure(ctx, line, "c128", "pools.c128", s.c128Size, "c128 = full // 128");
  intFigure(
    ctx,
    line,
    "c4_state",
    "pools.c4_state",
    s.c4StatePoolSize,
    `c4_state = swa // ${W} (the window) × c4 ring`,
  );
  intFigure(
    ctx,
    line,
    "c128_state",
    "pools.c128_state",
    s.c128StatePoolSize,
    "c128_state = 0 here (finalized from the request count at pool init)",
  );
}

function poolInit(ctx: Ctx, line: LoggedSizingLine) {
  const s = ctx.current;
  if (!s) return unmodelledLine(ctx, line, "no memory calculation line sizes this pool");
  const c4 = num(line, "c4_size");
  const c128 = num(line, "c128_size");
  if (ctx.targetInitSeen && c4?.value === 0 && c128?.value === 0) {
    // The draft worker's pool: one SWA layer of the same SWA tokens, no compressed pools.
    intFigure(ctx, line, "swa_size", "draft-pool-init.swa_size", s.swaTokens, "the draft worker shares swa tokens");
    return;
  }
  ctx.targetInitSeen = true;
  const mrr = resolveMaxRunningRequests(ctx.config, s.fullTokens);
  const slots = numReqSlots(ctx.config, mrr);
  const P = ctx.config.pageSize;
  const loggedReqs = num(line, "max_num_reqs")?.value ?? mrr;
  intFigure(
    ctx,
    line,
    "max_num_reqs",
    "pool-init.max_num_reqs",
    mrr,
    "max_num_reqs = min(requested per worker, full // 2), or the estimate clamp(full / context × 512, 2048, 4096)",
  );
  intFigure(ctx, line, "swa_size", "pool-init.swa_size", s.swaTokens, "swa_size = swa");
  intFigure(ctx, line, "c4_size", "pool-init.c4_size", s.c4Size, "c4_size = c4");
  intFigure(ctx, line, "c4_logical_size", "pool-init.c4_logical_size", s.c4LogicalSize, "c4_logical_size = c128 × 32");
  intFigure(ctx, line, "c128_size", "pool-init.c128_size", s.c128Size, "c128_size = c128");
  if (ctx.generation === "npu") {
    for (const ratio of [4, 128] as const) {
      const key = `c${ratio}_state_pool_size`;
      const how = `NPU paged state: max(2, ceil(1.8 × ${ratio} / ${P}) + 1) × max_num_reqs × ${P}`;
      intFigure(ctx, line, key, `pool-init.${key}`, npuStatePoolSize(ratio, P, loggedReqs), how);
    }
    return;
  }
  intFigure(
    ctx,
    line,
    "c4_state_pool_size",
    "pool-init.c4_state_pool_size",
    s.c4StatePoolSize,
    "c4_state_pool_size = c4_state",
  );
  const c128State = ctx.generation === "gen-a" ? s.c128StatePoolSize : finalizedC128StatePoolSize(ctx.config, slots);
  intFigure(
    ctx,
    line,
    "c128_state_pool_size",
    "pool-init.c128_state_pool_size",
    c128State,
    ctx.generation === "gen-a"
      ? "c128_state = swa // window × c128 ring"
      : `c128_state = ${slots} request slots × c128 ring`,
  );
}

function swaSizing(ctx: Ctx, line: LoggedSizingLine) {
  const cap = num(line, "request_cap+headroom");
  if (cap) {
    ctx.swaCapTokens = cap.value;
    const P = ctx.config.pageSize;
    const aligned = Math.ceil(cap.value / P) * P;
    intFigure(
      ctx,
      line,
      "swa_tokens",
      "swa-sizing.swa_tokens",
      aligned,
      "swa_tokens = request_cap+headroom, page-aligned",
    );
    push(
      ctx,
      line,
      "swa-sizing.request_cap+headroom",
      cap.text,
      cap.text,
      true,
      "taken from the log: the request cap depends on scheduler settings this check does not model",
    );
  } else if (ctx.current) {
    intFigure(
      ctx,
      line,
      "swa_tokens",
      "swa-sizing.swa_tokens",
      ctx.current.swaTokens,
      "swa_tokens = int(full × ratio), page-aligned",
    );
  }
}

function schedulerLine(ctx: Ctx, line: LoggedSizingLine) {
  if (!ctx.current) return unmodelledLine(ctx, line, "no memory calculation line precedes it");
  intFigure(
    ctx,
    line,
    "max_total_num_tokens",
    "max_total_num_tokens",
    ctx.current.fullTokens,
    "max_total_num_tokens = full",
  );
  const mrr = resolveMaxRunningRequests(ctx.config, ctx.current.fullTokens);
  intFigure(ctx, line, "max_running_requests", "max_running_requests", mrr, "per-worker running requests");
}

/** A line we cannot compute: every number it holds, `computed: null`. */
const PREFIX: Readonly<Record<string, string>> = {
  "pool-sizes": "pools.",
  "pool-init": "pool-init.",
  "swa-sizing": "swa-sizing.",
};

function unmodelledLine(ctx: Ctx, line: LoggedSizingLine, reason: string) {
  for (const [key, v] of Object.entries(line.fields)) {
    if (typeof v !== "object") continue;
    push(ctx, line, `${PREFIX[line.kind] ?? ""}${key}`, v.text, null, false, reason);
  }
}

/** Checks an unmodelled generation's lines still allow: pool sizes against the logged full tokens. */
function consistencyOnly(ctx: Ctx, line: LoggedSizingLine, reason: string) {
  const full = num(line, line.kind === "pool-sizes" ? "full" : "full_token");
  if (line.kind !== "pool-sizes" || !full) return unmodelledLine(ctx, line, reason);
  const H = ctx.config.hisparseRatio ?? 1;
  const pools = compressedPoolSizes(ctx.config, full.value);
  push(ctx, line, "pools.full", full.text, null, false, reason);
  intFigure(ctx, line, "c4", "pools.c4", pools.c4Size, `c4 = full // ${4 * H} (any generation)`);
  intFigure(ctx, line, "c128", "pools.c128", pools.c128Size, "c128 = full // 128 (any generation)");
  for (const key of ["swa", "c4_state", "c128_state"]) {
    const n = num(line, key);
    if (n) push(ctx, line, `pools.${key}`, n.text, null, false, reason);
  }
}

function byRank(log: ParsedSglangLog): Map<string | null, LoggedSizingLine[]> {
  const groups = new Map<string | null, LoggedSizingLine[]>();
  for (const line of [...log.sizingLines].sort((a, b) => a.line - b.line)) {
    const key = line.rank?.label ?? null;
    groups.set(key, [...(groups.get(key) ?? []), line]);
  }
  return groups;
}

/** Every figure of the log against this generation's arithmetic from the logged budget, per rank. */
export function reconcileSglangLog(log: ParsedSglangLog, report: CheckReport): LogComparison {
  const detected = detectGeneration(log, report);
  const figures: FigureComparison[] = [];
  const modelled = detected.generation !== "unknown" ? detected.generation : null;
  const config = sizingConfigOf(report, modelled ?? "gen-b");
  for (const [rank, lines] of byRank(log)) {
    const ctx: Ctx = {
      generation: modelled ?? "gen-b",
      config,
      rank,
      out: figures,
      lo: null,
      hi: null,
      current: null,
      budget: null,
      fullDiffers: false,
      targetInitSeen: false,
    };
    // Cap mode logs its SWA sizing before the memory calculation that needs it.
    const cap = lines.find((l) => l.kind === "swa-sizing" && num(l, "request_cap+headroom"));
    if (cap) ctx.swaCapTokens = num(cap, "request_cap+headroom")!.value;
    for (const line of lines) {
      if (!modelled) {
        consistencyOnly(ctx, line, `not computed: ${detected.unmodelledReason}`);
        continue;
      }
      if (line.kind === "memory-calculation") memoryCalculation(ctx, line, report);
      else if (line.kind === "pool-sizes") poolSizes(ctx, line, report);
      else if (line.kind === "pool-init") poolInit(ctx, line);
      else if (line.kind === "swa-sizing") swaSizing(ctx, line);
      else if (line.kind === "max-total-tokens") schedulerLine(ctx, line);
    }
  }
  return { generation: detected.generation, evidence: detected.evidence, figures };
}
