/**
 * Reconciles one section of an SGLang log (one server's start-up) with our arithmetic, per rank, with the
 * configurator generation that wrote it (docs/reference/configurator-generations.md). Every figure is computed
 * from the logged figures it depends on (full_token from the logged budget, fixed bytes and price; the pools from
 * the logged full_token; the state pools from the logged SWA tokens and request slots), so one difference never
 * cascades into others. Values taken from the log are `role: "input"`; cut values are `truncated`; each difference
 * carries its cause (figures.ts, alternatives.ts).
 */
import { GIB, numReqSlots, computeSizes } from "@dsv4-kv/memory-pool/internal";
import { type SizingConfig, resolveMaxRunningRequests } from "@dsv4-kv/memory-pool";
import {
  type ConfiguratorGenerationId,
  finalizedC128StatePoolSize,
  isSwaScopedC128,
  npuStatePoolSize,
  sizeForGeneration,
} from "@dsv4-kv/memory-pool/internal";
import type { CheckReport } from "../check.js";
import { MODEL_PRESETS, type ModelPreset } from "../presets.js";
import { resolveServerConfig } from "../resolve.js";
import { type Alternative, type Env, modelAlternative, stageOf } from "./alternatives.js";
import { detectGeneration } from "./detect.js";
import {
  type FigureSink,
  asDecimal,
  asGb,
  asInt,
  evaluate,
  inputFigure,
  loggedNumber as num,
  notComputed,
  ref,
} from "./figures.js";
import { detectPlatform } from "./platform.js";
import type { FigureCause, LogComparison, LoggedNumber, LoggedSizingLine, ParsedSglangLog } from "./types.js";

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

/** `[lo, hi]` bytes a GB figure printed to `decimals` places stands for (`x / 2^30` rounded). */
export function loggedGbRange(n: LoggedNumber): { lo: number; hi: number } {
  const half = 0.5 * 10 ** -n.decimals;
  return { lo: Math.max(0, Math.ceil((n.value - half) * GIB)), hi: Math.floor((n.value + half) * GIB) };
}

/** A logged decimal as the range it stands for at its precision. */
const decimalRange = (n: LoggedNumber) => ({
  lo: n.value - 0.5 * 10 ** -n.decimals,
  hi: n.value + 0.5 * 10 ** -n.decimals,
});
const exact = (v: number) => ({ lo: v, hi: v });

/** A logged figure other figures are computed from: its value and its reference (`name@line`). */
interface Anchor {
  value: number;
  ref: string;
}

interface Ctx extends FigureSink {
  report: CheckReport;
  budgetFromLog: boolean;
  avail: { lo: number; hi: number; ref: string } | null;
  bpft: { lo: number; hi: number; ref: string } | null;
  fixed: { lo: number; hi: number; ref: string } | null;
  swaFixed: { lo: number; hi: number; ref: string } | null;
  full: Anchor | null;
  /** The logged full_token is cut: the pools' full is then an input. */
  fullCut?: boolean;
  swa: Anchor | null;
  swaCap: Anchor | null;
  targetInitSeen: boolean;
}

const W = (env: Env) => env.config.model.slidingWindow;
/** The earliest configurator gave every worker the whole --max-running-requests (no attention-DP split). */
const requestConfig = (env: Env) => (env.generation === "gen-a" ? { ...env.config, attnDpSize: 1 } : env.config);
const sizesAt = (env: Env, full: number) => computeSizes(env.config, stageOf(env), full, W(env));
const divisor = (env: Env) => (env.c4StateDivisor === "page" ? env.config.pageSize : W(env));
const opts = (ctx: Ctx, env: Env) => ({ ...env.options, swaCapTokens: env.options.swaCapTokens ?? ctx.swaCap?.value });

export interface ReconcileOptions {
  /** The check's budget is the one the log printed (no budget flag): available_bytes is an input, not compared. */
  budgetFromLog?: boolean;
}

function memoryCalculation(ctx: Ctx, line: LoggedSizingLine) {
  const avail = num(line, "available_bytes");
  if (avail && !avail.truncated) {
    const r = loggedGbRange(avail);
    ctx.avail = { ...r, ref: ref(line, "available_bytes") };
  }
  availableFigure(ctx, line);
  const bpft = evaluate(ctx, {
    line,
    key: "bytes_per_full_token",
    name: "bytes_per_full_token",
    derivedFrom: [],
    formula: "this generation's price of one full token (every pool's bytes per token, draft factor included)",
    compute: (env) => exact(sizeForGeneration(env.generation, env.config, 0, opts(ctx, env)).bytesPerFullToken),
    render: asDecimal,
    solveRatio: true,
  });
  if (bpft && !bpft.truncated) ctx.bpft = { ...decimalRange(bpft), ref: ref(line, "bytes_per_full_token") };
  fixedFigures(ctx, line);
  fullTokenFigure(ctx, line);
}

function availableFigure(ctx: Ctx, line: LoggedSizingLine) {
  const ours = ctx.report.budget.availableBytes;
  const logged = num(line, "available_bytes");
  if (logged && !logged.truncated && logged.value <= 0) return nonPositiveBudget(ctx, line, logged);
  if (ctx.budgetFromLog || ours == null) {
    inputFigure(
      ctx,
      line,
      "available_bytes",
      "available_bytes",
      "taken from the log: every figure below is computed from this budget",
    );
    return;
  }
  // Gen A logs the budget after scaling it by L / (L + 1) for the draft worker.
  const layers = ctx.report.derived.layers.total;
  const scaled = (env: Env) =>
    env.generation === "gen-a" && env.config.isSpeculative ? Math.trunc((ours * layers) / (layers + 1)) : ours;
  evaluate(ctx, {
    line,
    key: "available_bytes",
    name: "available_bytes",
    derivedFrom: [],
    formula: "the budget this check was given (a budget flag), in GB",
    compute: (env) => exact(scaled(env)),
    render: asGb,
    noAlternatives:
      "the check's budget is not the server's: the other figures are computed from the logged budget, not from it",
  });
}

/** A budget of zero or less: the server sized nothing (SGLang goes on and fails later); V-M1 refuses it up front. */
function nonPositiveBudget(ctx: Ctx, line: LoggedSizingLine, n: LoggedNumber) {
  ctx.avail = null;
  ctx.out.push({
    name: "available_bytes",
    rank: ctx.rank,
    line: line.line,
    logged: n.text,
    computed: "> 0",
    match: false,
    role: "compared",
    derivedFrom: [],
    why: "the KV budget the server had: it must be positive for any pool to be sized",
    cause: {
      explained: true,
      alternatives: ["non-positive-budget"],
      text:
        `the server's KV budget was ${n.text} GB: its weights and reserved memory left nothing for the KV cache ` +
        "(what V-M1 refuses before start: raise --mem-fraction-static or lower the weights per GPU); the figures " +
        "sized from it are not computed",
      value: n.text,
      residual: null,
    },
  });
}

function fixedFigures(ctx: Ctx, line: LoggedSizingLine) {
  const requested = ctx.report.args.maxRunningRequests != null;
  const fixed = evaluate(ctx, {
    line,
    key: "c128_state_fixed",
    name: "c128_state_fixed",
    derivedFrom: requested || !ctx.avail ? [] : [ctx.avail.ref],
    formula: "request-scoped c128 state: request slots × ring × row bytes × c128 layers, in GB",
    compute: (env) => {
      if (!ctx.avail) return null;
      const o = opts(ctx, env);
      const lo = sizeForGeneration(env.generation, env.config, ctx.avail.lo, o).c128StateFixedBytes;
      const hi = sizeForGeneration(env.generation, env.config, ctx.avail.hi, o).c128StateFixedBytes;
      return { lo: Math.min(lo, hi), hi: Math.max(lo, hi) };
    },
    render: asGb,
  });
  if (fixed && !fixed.truncated) ctx.fixed = { ...loggedGbRange(fixed), ref: ref(line, "c128_state_fixed") };
  const swaFixed = evaluate(ctx, {
    line,
    key: "swa_fixed",
    name: "swa_fixed",
    derivedFrom: ctx.swaCap ? [ctx.swaCap.ref] : [],
    formula: "cap mode's SWA reservation: the cap's SWA tokens × bytes per SWA token, in GB",
    compute: (env) =>
      ctx.swaCap ? exact(sizeForGeneration(env.generation, env.config, 0, opts(ctx, env)).swaFixedBytes) : null,
    render: asGb,
  });
  if (swaFixed && !swaFixed.truncated) ctx.swaFixed = { ...loggedGbRange(swaFixed), ref: ref(line, "swa_fixed") };
}

function fullTokenFigure(ctx: Ctx, line: LoggedSizingLine) {
  const from = [ctx.avail, ctx.fixed, ctx.swaFixed, ctx.bpft].filter((a) => a !== null).map((a) => a!.ref);
  const compute = (env: Env) => {
    if (!ctx.avail) return null;
    const o = opts(ctx, env);
    const ours = (bytes: number) => sizeForGeneration(env.generation, env.config, bytes, o);
    const lo = ours(ctx.avail.lo);
    const hi = ours(ctx.avail.hi);
    const fixed = ctx.fixed ?? {
      lo: Math.min(lo.c128StateFixedBytes, hi.c128StateFixedBytes),
      hi: Math.max(lo.c128StateFixedBytes, hi.c128StateFixedBytes),
    };
    const swaFixed = ctx.swaFixed ?? { lo: lo.swaFixedBytes, hi: lo.swaFixedBytes };
    const bpft = ctx.bpft ?? { lo: lo.bytesPerFullToken, hi: lo.bytesPerFullToken };
    const P = env.config.pageSize;
    const F = (a: number, f: number, s: number, b: number) =>
      Math.floor(Math.trunc(Math.max(a - f - s, 0) / b) / P) * P;
    return { lo: F(ctx.avail.lo, fixed.hi, swaFixed.hi, bpft.hi), hi: F(ctx.avail.hi, fixed.lo, swaFixed.lo, bpft.lo) };
  };
  const n = evaluate(ctx, {
    line,
    key: "full_token",
    name: "full_token",
    derivedFrom: from,
    formula:
      "full_token = int((available − fixed) / bytes_per_full_token) // page_size × page_size, " +
      "from the logged figures",
    compute,
    render: asInt,
    step: ctx.base.config.pageSize,
  });
  if (n && !n.truncated) ctx.full = { value: n.value, ref: ref(line, "full_token") };
  else if (num(line, "full_token")) {
    ctx.fullCut = true;
    const v = ctx.avail ? compute(ctx.base) : null;
    if (v && v.lo === v.hi) ctx.full = { value: v.lo, ref: "full_token (ours: the logged value is cut or absent)" };
  }
}

function poolSizes(ctx: Ctx, line: LoggedSizingLine) {
  const full = num(line, "full");
  if (!full || full.truncated)
    return evaluateRest(ctx, line, "pools.", "the line's full is cut: nothing to compute it from");
  const fullRef = ref(line, "pools.full");
  if (ctx.full && full.value < ctx.full.value) resizedFull(ctx, line);
  else if (ctx.full)
    evaluate(ctx, {
      line,
      key: "full",
      name: "pools.full",
      derivedFrom: [ctx.full.ref],
      formula: "full = full_token",
      compute: () => exact(ctx.full!.value),
      render: asInt,
    });
  else
    inputFigure(
      ctx,
      line,
      "full",
      "pools.full",
      ctx.fullCut
        ? "taken from the log: the full_token it equals is cut in the log"
        : "taken from the log: no memory calculation line sizes it",
    );
  ctx.full = { value: full.value, ref: fullRef };
  const F = full.value;
  const swa = evaluate(ctx, {
    line,
    key: "swa",
    name: "pools.swa",
    derivedFrom: ctx.swaCap ? [ctx.swaCap.ref] : [fullRef],
    formula: ctx.swaCap
      ? "swa = the cap's SWA tokens"
      : "swa = int(full × swa_full_tokens_ratio) // page_size × page_size",
    compute: (env) =>
      exact(ctx.swaCap && env.generation === "gen-b-cap" ? ctx.swaCap.value : sizesAt(env, F).swaTokens),
    render: asInt,
    solveRatio: true,
  });
  compressedFigures(ctx, line, "pools.", { c4: "c4", c128: "c128" }, F, fullRef);
  const swaValue = swa && !swa.truncated ? swa.value : null;
  if (swaValue !== null) ctx.swa = { value: swaValue, ref: ref(line, "pools.swa") };
  const swaRef = ref(line, "pools.swa");
  evaluate(ctx, {
    line,
    key: "c4_state",
    name: "pools.c4_state",
    derivedFrom: [swaRef],
    formula: "c4_state = swa // window × c4 ring",
    compute: (env) => (swaValue === null ? null : exact(Math.floor(swaValue / divisor(env)) * stageOf(env).ringSizeC4)),
    render: asInt,
  });
  evaluate(ctx, {
    line,
    key: "c128_state",
    name: "pools.c128_state",
    derivedFrom: [],
    formula: isSwaScopedC128(ctx.base.generation)
      ? "c128_state = swa // window × c128 ring (priced per SWA token)"
      : "c128_state = 0 here (request-scoped: finalized from the request slots at pool init)",
    compute: (env) =>
      isSwaScopedC128(env.generation) && swaValue !== null
        ? exact(Math.floor(swaValue / W(env)) * stageOf(env).ringSizeC128)
        : exact(0),
    render: asInt,
  });
}

function resizedFull(ctx: Ctx, line: LoggedSizingLine) {
  const T = ctx.report.args.maxTotalTokens;
  if (T == null) {
    inputFigure(
      ctx,
      line,
      "full",
      "pools.full",
      `taken from the log: a re-sizing below full_token (${ctx.full!.value}) from a token cap this check was ` +
        "not given (--max-total-tokens)",
    );
    return;
  }
  evaluate(ctx, {
    line,
    key: "full",
    name: "pools.full",
    derivedFrom: [],
    formula: `full = --max-total-tokens ${T} // page_size × page_size (a re-sizing)`,
    compute: (env) => exact(Math.floor(T / env.config.pageSize) * env.config.pageSize),
    render: asInt,
  });
}

function compressedFigures(
  ctx: Ctx,
  line: LoggedSizingLine,
  prefix: string,
  keys: { c4: string; c128: string; logical?: string },
  F: number,
  fullRef: string,
) {
  const H = (env: Env) => env.config.hisparseRatio ?? 1;
  evaluate(ctx, {
    line,
    key: keys.c4,
    name: `${prefix}${keys.c4}`,
    derivedFrom: [fullRef],
    formula: "c4 = full // (4 × HiSparse ratio)",
    compute: (env) => exact(Math.floor(F / (4 * H(env)))),
    render: asInt,
  });
  if (keys.logical)
    evaluate(ctx, {
      line,
      key: keys.logical,
      name: `${prefix}${keys.logical}`,
      derivedFrom: [fullRef],
      formula: "c4_logical_size = full // 4 (the c4 index space HiSparse maps)",
      compute: (env) => exact(sizesAt(env, F).c4LogicalSize),
      render: asInt,
    });
  evaluate(ctx, {
    line,
    key: keys.c128,
    name: `${prefix}${keys.c128}`,
    derivedFrom: [fullRef],
    formula: "c128 = full // 128",
    compute: (env) => exact(sizesAt(env, F).c128Size),
    render: asInt,
  });
}

function poolInit(ctx: Ctx, line: LoggedSizingLine) {
  const c4 = num(line, "c4_size");
  const c128 = num(line, "c128_size");
  const full = ctx.full;
  if (!full)
    return evaluateRest(ctx, line, "pool-init.", "no full_token or pool sizes line in this rank to compute it from");
  if (ctx.targetInitSeen && c4?.value === 0 && c128?.value === 0) {
    // The draft worker's pool: one SWA layer of the same SWA tokens, no compressed pools.
    const swa = ctx.swa;
    evaluate(ctx, {
      line,
      key: "swa_size",
      name: "draft-pool-init.swa_size",
      derivedFrom: swa ? [swa.ref] : [full.ref],
      formula: "the draft worker shares the target's SWA tokens",
      compute: (env) => exact(swa ? swa.value : sizesAt(env, full.value).swaTokens),
      render: asInt,
    });
    return;
  }
  ctx.targetInitSeen = true;
  const requested = ctx.report.args.maxRunningRequests != null;
  const reqs = evaluate(ctx, {
    line,
    key: "max_num_reqs",
    name: "pool-init.max_num_reqs",
    derivedFrom: requested ? [] : [full.ref],
    formula: requested
      ? ctx.base.generation === "gen-a"
        ? "max_num_reqs = min(--max-running-requests, full // 2) (the earliest configurator does not divide by DP)"
        : "max_num_reqs = min(--max-running-requests per attention-DP worker, full // 2)"
      : "max_num_reqs = min(clamp(full / context × 512, 2048, 4096), full // 2): the estimate",
    compute: (env) => exact(resolveMaxRunningRequests(requestConfig(env), full.value)),
    render: asInt,
  });
  const swa = evaluate(ctx, {
    line,
    key: "swa_size",
    name: "pool-init.swa_size",
    derivedFrom: [ctx.swa ? ctx.swa.ref : full.ref],
    formula: "swa_size = swa",
    compute: (env) => exact(ctx.swa ? ctx.swa.value : sizesAt(env, full.value).swaTokens),
    render: asInt,
  });
  compressedFigures(
    ctx,
    line,
    "pool-init.",
    { c4: "c4_size", c128: "c128_size", logical: "c4_logical_size" },
    full.value,
    full.ref,
  );
  statePools(ctx, line, reqs, swa);
}

function statePools(ctx: Ctx, line: LoggedSizingLine, reqs: LoggedNumber | null, swa: LoggedNumber | null) {
  const mnr = reqs && !reqs.truncated ? reqs.value : null;
  const swaTokens = swa && !swa.truncated ? swa.value : (ctx.swa?.value ?? null);
  const reqRef = ref(line, "pool-init.max_num_reqs");
  const swaRef = swa && !swa.truncated ? ref(line, "pool-init.swa_size") : (ctx.swa?.ref ?? "");
  for (const ratio of [4, 128] as const) {
    const key = `c${ratio}_state_pool_size`;
    const npu = ctx.base.npuStatePools;
    const ringScoped = ratio === 4 || isSwaScopedC128(ctx.base.generation);
    evaluate(ctx, {
      line,
      key,
      name: `pool-init.${key}`,
      derivedFrom: npu || !ringScoped ? [reqRef] : [swaRef],
      formula: npu
        ? `NPU paged state: max(2, ceil(1.8 × ${ratio} / page_size) + 1) × max_num_reqs × page_size`
        : ringScoped
          ? `c${ratio}_state_pool_size = swa_size // window × c${ratio} ring`
          : "c128_state_pool_size = request slots (max_num_reqs + 1 + PD extra) × c128 ring",
      compute: (env) => statePoolSize(env, ratio, mnr, swaTokens),
      render: asInt,
    });
  }
}

function statePoolSize(env: Env, ratio: 4 | 128, mnr: number | null, swa: number | null) {
  if (env.npuStatePools) return mnr === null ? null : exact(npuStatePoolSize(ratio, env.config.pageSize, mnr));
  const stage = stageOf(env);
  if (ratio === 4) return swa === null ? null : exact(Math.floor(swa / divisor(env)) * stage.ringSizeC4);
  if (isSwaScopedC128(env.generation))
    return swa === null ? null : exact(Math.floor(swa / W(env)) * stage.ringSizeC128);
  if (mnr === null) return null;
  return exact(finalizedC128StatePoolSize(env.config, numReqSlots(env.config, mnr), env.options));
}

function swaSizing(ctx: Ctx, line: LoggedSizingLine) {
  const cap = num(line, "request_cap+headroom");
  if (cap && !cap.truncated) {
    ctx.swaCap = { value: cap.value, ref: ref(line, "swa-sizing.request_cap+headroom") };
    inputFigure(
      ctx,
      line,
      "request_cap+headroom",
      "swa-sizing.request_cap+headroom",
      "taken from the log: the request cap depends on scheduler settings this check does not model",
    );
    const swa = evaluate(ctx, {
      line,
      key: "swa_tokens",
      name: "swa-sizing.swa_tokens",
      derivedFrom: [ctx.swaCap.ref],
      formula: "swa_tokens = request_cap+headroom, page-aligned",
      compute: (env) => exact(Math.ceil(cap.value / env.config.pageSize) * env.config.pageSize),
      render: asInt,
    });
    if (swa && !swa.truncated) ctx.swaCap = { value: swa.value, ref: ref(line, "swa-sizing.swa_tokens") };
    return;
  }
  inputFigure(
    ctx,
    line,
    "swa_full_tokens_ratio",
    "swa-sizing.swa_full_tokens_ratio",
    "taken from the log: the SWA ratio the server used, an input to every SWA figure",
  );
  const full = ctx.full;
  if (!full)
    return notComputed(
      ctx,
      line,
      "swa_tokens",
      "swa-sizing.swa_tokens",
      "no full_token or pool sizes line in this rank to compute it from",
    );
  evaluate(ctx, {
    line,
    key: "swa_tokens",
    name: "swa-sizing.swa_tokens",
    derivedFrom: [full.ref],
    formula: "swa_tokens = int(full × ratio), page-aligned",
    compute: (env) => exact(sizesAt(env, full.value).swaTokens),
    render: asInt,
    solveRatio: true,
  });
}

function schedulerLine(ctx: Ctx, line: LoggedSizingLine) {
  const full = ctx.full;
  if (!full) return evaluateRest(ctx, line, "", "no full_token or pool sizes line in this rank before it");
  evaluate(ctx, {
    line,
    key: "max_total_num_tokens",
    name: "max_total_num_tokens",
    derivedFrom: [full.ref],
    formula: "max_total_num_tokens = full",
    compute: () => exact(full.value),
    render: asInt,
  });
  const requested = ctx.report.args.maxRunningRequests != null;
  evaluate(ctx, {
    line,
    key: "max_running_requests",
    name: "max_running_requests",
    derivedFrom: requested ? [] : [full.ref],
    formula: "the running requests per worker (requested, or the estimate from full)",
    compute: (env) => exact(resolveMaxRunningRequests(env.config, full.value)),
    render: asInt,
  });
}

const PREFIX: Readonly<Record<string, string>> = {
  "pool-sizes": "pools.",
  "pool-init": "pool-init.",
  "swa-sizing": "swa-sizing.",
};

/** A line with nothing to compute it from: every number it holds, not computed, with the reason. */
function evaluateRest(ctx: Ctx, line: LoggedSizingLine, prefix: string, reason: string) {
  for (const [key, v] of Object.entries(line.fields))
    if (typeof v === "object") notComputed(ctx, line, key, `${prefix}${key}`, reason);
}

/** Checks an unmodelled generation's lines still allow: c4 and c128 against the logged full. */
function consistencyOnly(ctx: Ctx, line: LoggedSizingLine, reason: string) {
  const full = num(line, "full");
  if (line.kind !== "pool-sizes" || !full || full.truncated)
    return evaluateRest(ctx, line, PREFIX[line.kind] ?? "", reason);
  notComputed(ctx, line, "full", "pools.full", reason);
  compressedFigures(ctx, line, "pools.", { c4: "c4", c128: "c128" }, full.value, ref(line, "pools.full"));
  for (const key of ["swa", "c4_state", "c128_state"]) notComputed(ctx, line, key, `pools.${key}`, reason);
}

export function byRank(log: ParsedSglangLog): Map<string | null, LoggedSizingLine[]> {
  const groups = new Map<string | null, LoggedSizingLine[]>();
  for (const line of [...log.sizingLines].sort((a, b) => a.line - b.line)) {
    const key = line.rank?.label ?? null;
    groups.set(key, [...(groups.get(key) ?? []), line]);
  }
  return groups;
}

function reconcileRank(ctx: Ctx, lines: readonly LoggedSizingLine[], unmodelled: string | null) {
  // Cap mode logs its SWA sizing before the memory calculation that needs it.
  const cap = lines.find((l) => l.kind === "swa-sizing" && num(l, "request_cap+headroom"));
  const capValue = cap ? num(cap, "request_cap+headroom") : null;
  if (cap && capValue && !capValue.truncated)
    ctx.swaCap = { value: capValue.value, ref: ref(cap, "swa-sizing.request_cap+headroom") };
  // A SWA sizing line that prints the ratio it used: the server's ratio, an input to every SWA figure.
  const ratioLine = lines.find((l) => l.kind === "swa-sizing" && num(l, "swa_full_tokens_ratio"));
  const ratio = ratioLine ? num(ratioLine, "swa_full_tokens_ratio") : null;
  if (ratio && !ratio.truncated)
    ctx.base = { ...ctx.base, config: { ...ctx.base.config, swaFullTokensRatio: ratio.value } };
  const pending: LoggedSizingLine[] = [];
  for (const line of lines) {
    if (unmodelled !== null) consistencyOnly(ctx, line, `not computed: ${unmodelled}`);
    else if (line.kind === "memory-calculation") memoryCalculation(ctx, line);
    else if (line.kind === "pool-sizes") poolSizes(ctx, line);
    else if (line.kind === "pool-init") poolInit(ctx, line);
    else if (line.kind === "swa-sizing" && !ctx.swaCap && !ctx.full) pending.push(line);
    else if (line.kind === "swa-sizing") swaSizing(ctx, line);
    else if (line.kind === "max-total-tokens") schedulerLine(ctx, line);
    // A ratio-mode SWA sizing line comes before the full tokens it is computed from.
    if (ctx.full && pending.length > 0) for (const p of pending.splice(0)) swaSizing(ctx, p);
  }
  for (const p of pending) swaSizing(ctx, p);
}

/** The section names its model (server_args or the launch command): another model is no cause. */
function modelNamed(log: ParsedSglangLog): boolean {
  if (log.serverArgs && typeof log.serverArgs.model_path === "string") return true;
  return (log.launchCommand ?? []).some((w) => /^--model(?:-path)?(?:=|$)/.test(w));
}

/** The other presets' sizing facts, as alternatives for a log that does not name its model. */
function otherModels(report: CheckReport): Alternative[] {
  const out: Alternative[] = [];
  for (const [name, preset] of Object.entries(MODEL_PRESETS)) {
    if (name === report.model.name) continue;
    try {
      out.push(
        modelAlternative(
          name,
          resolveServerConfig(report.args, { ...preset, contextLen: report.derived.contextLen }).sizing.model,
        ),
      );
    } catch {
      // A preset these arguments cannot size (its own rules) is no alternative.
    }
  }
  return out;
}

function nothingToReconcile(log: ParsedSglangLog): string {
  if (log.serverArgs !== null || log.launchCommand !== null)
    return "the section has no DSV4 sizing line: its arguments were checked as a launch, nothing to reconcile";
  const lines = log.startupLines.slice(0, 3).map((l) => `line ${l.line}: "${l.text}"`);
  return (
    "the section has no DSV4 sizing line, no server_args and no launch command, only start-up messages " +
    `(${lines.join("; ")}): checked with the defaults and the flags, nothing to reconcile`
  );
}

/** Every figure of one section against the arithmetic of its generation, per rank, anchored on the logged figures. */
export function reconcileSglangLog(
  log: ParsedSglangLog,
  report: CheckReport,
  options: ReconcileOptions = {},
): LogComparison {
  const detected = detectGeneration(log, report);
  const platform = detectPlatform(log);
  const modelled = detected.generation !== "unknown" ? detected.generation : null;
  const generation = modelled ?? "gen-b";
  const base: Env = {
    generation,
    config: sizingConfigOf(report, generation),
    options: {},
    c4StateDivisor: "window",
    npuStatePools: generation === "npu",
  };
  const figures: LogComparison["figures"][number][] = [];
  const causes = new Map<string, FigureCause>();
  const extra = modelNamed(log) ? [] : otherModels(report);
  const truncated: LogComparison["truncated"][number][] = [];
  for (const [rank, lines] of byRank(log)) {
    const ctx: Ctx = {
      base,
      extra,
      causes,
      rank,
      out: figures,
      truncated,
      report,
      budgetFromLog: options.budgetFromLog ?? false,
      avail: null,
      bpft: null,
      fixed: null,
      swaFixed: null,
      full: null,
      swa: null,
      swaCap: null,
      targetInitSeen: false,
    };
    reconcileRank(ctx, lines, modelled ? null : detected.unmodelledReason);
  }
  for (const line of log.sizingLines)
    if (line.missing.length > 0)
      truncated.push({
        line: line.line,
        name: `${line.kind} line`,
        logged: line.missing.join(", "),
        reason: `the line is cut: ${line.missing.join(", ")} missing`,
      });
  return {
    section: log.section,
    firstLine: log.firstLine,
    lastLine: log.lastLine,
    startedBy: log.startedBy,
    generation: detected.generation,
    evidence: detected.evidence,
    platform: platform.platform,
    platformEvidence: platform.evidence,
    figures,
    skipped: log.skipped,
    truncated,
    ...(log.sizingLines.length === 0 ? { nothingToReconcile: nothingToReconcile(log) } : {}),
  };
}
