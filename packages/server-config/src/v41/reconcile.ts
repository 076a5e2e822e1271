/**
 * Reconciles one section of a DeepSeek-V4.1 server's start-up log with memory-pool's V4.1 model of the dev-dsv41
 * configurator (docs/reference/deepseek-v4.1.md §5, §8), per rank, figure by figure. As for V4 (sglang-log/
 * reconcile.ts, whose parser, figure evaluation and result shape this reuses), every figure is computed from the
 * logged figures it depends on: full_token from the logged budget and SWA cap, the pools from the logged full, the
 * pool init lines from the logged pool sizes and request count. A figure the log gives no way to compute (a request
 * cap it does not print, a --max-total-tokens it does not show) is an input or a range with that cause named.
 */
import {
  type V41SizingConfig,
  sizeV41Configurator,
  v41Coefficients,
  v41LoggedPoolSizes,
  v41PairRingSize,
  v41PairStateFixedBytes,
  v41PoolInitLines,
} from "@dsv4-kv/memory-pool";
import {
  type FigureSink,
  type FigureSpec,
  asDecimal,
  asGb,
  asInt,
  evaluate,
  inputFigure,
  notComputed,
  loggedNumber as num,
  ref,
} from "../sglang-log/figures.js";
import { detectPlatform } from "../sglang-log/platform.js";
import { byRank, loggedGbRange } from "../sglang-log/reconcile.js";
import type { LogComparison, LoggedNumber, LoggedSizingLine, ParsedSglangLog } from "../sglang-log/types.js";

/** The arithmetic a V4.1 figure is computed in: the dev-dsv41 configurator at the check's sizing config. */
export interface V41Env {
  generation: "dev-dsv41";
  config: V41SizingConfig;
}

export interface V41ReconcileOptions {
  /** The budget the check was given by a flag (bytes); null: the log's own budget is the input. */
  budgetBytes: number | null;
  /**
   * The request count came from the arguments (flags, server_args); false: the config's is the one the log shows
   * (pool init or scheduler line), an input, so the scheduler's max_running_requests is not compared with itself.
   */
  requestsGiven: boolean;
}

const UNEXPLAINED =
  "no alternative arithmetic is modelled for the dev-dsv41 configurator: check the model and the arguments the " +
  "server ran with";

interface Anchor {
  value: number;
  ref: string;
}

interface V41Ctx extends FigureSink<V41Env> {
  budgetBytes: number | null;
  /** Where the request count comes from: the arguments (null), or a logged figure (`max_num_reqs@9`). */
  requestsRef: string | null;
  avail: { lo: number; hi: number; ref: string } | null;
  /** The logged request cap (cap mode), or the caps that print the logged swa_fixed when no cap line exists. */
  cap: Anchor | null;
  solvedCaps: number[] | null;
  /** Cap mode: a cap line or a swa_fixed field says so. */
  capMode: boolean;
  full: Anchor | null;
  pools: { full: Anchor; swa: Anchor } | null;
  poolLines: number;
  initLines: number;
}

const exact = (v: number) => ({ lo: v, hi: v });
const P = (ctx: V41Ctx) => ctx.base.config.pageSize;

/** One compared figure: V4.1's figures have no alternative arithmetic, so a difference names that. */
function compare(ctx: V41Ctx, spec: Omit<FigureSpec<V41Env>, "noAlternatives"> & { cause?: string }) {
  return evaluate(ctx, { ...spec, noAlternatives: spec.cause ?? UNEXPLAINED });
}

/** The configurator's price in the log's SWA mode (cap mode prices no SWA per full token). */
function capConfig(ctx: V41Ctx, cap: number | null = ctx.cap?.value ?? null): V41SizingConfig {
  const { config } = ctx.base;
  return ctx.capMode ? { ...config, swaCapTokens: cap ?? config.pageSize } : { ...config, swaCapTokens: null };
}

/** The page-aligned SWA caps whose fixed bytes print as the logged `swa_fixed` (a GB figure is a range). */
export function v41CapsPrintingSwaFixed(config: V41SizingConfig, swaFixed: LoggedNumber): number[] {
  const bpst = v41Coefficients({ ...config, swaCapTokens: config.swaCapTokens ?? config.pageSize }).bytesPerSwaToken;
  const { lo, hi } = loggedGbRange(swaFixed);
  const p = config.pageSize;
  const caps: number[] = [];
  for (let s = Math.ceil(lo / bpst / p) * p; s * bpst <= hi; s += p)
    if (asGb(s * bpst, swaFixed.decimals) === swaFixed.text) caps.push(s);
  return caps;
}

/** full_token over every budget in `available` and every cap (null: ratio mode) the log's figures allow. */
export function v41FullTokenRange(
  config: V41SizingConfig,
  available: { lo: number; hi: number },
  caps: readonly (number | null)[],
): { lo: number; hi: number } {
  const fulls = caps.flatMap((cap) =>
    [available.lo, available.hi].map((a) => sizeV41Configurator({ ...config, swaCapTokens: cap }, a).fullToken),
  );
  return { lo: Math.min(...fulls), hi: Math.max(...fulls) };
}

function swaSizing(ctx: V41Ctx, line: LoggedSizingLine) {
  const cap = num(line, "request_cap+headroom");
  if (cap && !cap.truncated) {
    ctx.cap = { value: cap.value, ref: ref(line, "swa-sizing.request_cap+headroom") };
    inputFigure(ctx, line, "request_cap+headroom", "swa-sizing.request_cap+headroom", CAP_INPUT);
    compare(ctx, {
      line,
      key: "swa_tokens",
      name: "swa-sizing.swa_tokens",
      derivedFrom: [ctx.cap.ref],
      formula: "swa_tokens = request_cap+headroom, page-aligned",
      compute: () => exact(Math.ceil(cap.value / P(ctx)) * P(ctx)),
      render: asInt,
    });
    const mrr = ctx.base.config.maxRunningRequests;
    if (mrr === null) return notComputed(ctx, line, "prefix_tails", "swa-sizing.prefix_tails", "no request count");
    return void compare(ctx, {
      line,
      key: "prefix_tails",
      name: "swa-sizing.prefix_tails",
      derivedFrom: ctx.requestsRef ? [ctx.requestsRef] : [],
      formula: "prefix_tails = 4 × max running requests (the radix cache keeps four tails per request)",
      compute: () => exact(4 * mrr),
      render: asInt,
    });
  }
  inputFigure(ctx, line, "swa_full_tokens_ratio", "swa-sizing.swa_full_tokens_ratio", RATIO_INPUT);
  const full = ctx.pools?.full ?? ctx.full;
  if (!full) return notComputed(ctx, line, "swa_tokens", "swa-sizing.swa_tokens", "no full tokens logged in this rank");
  compare(ctx, {
    line,
    key: "swa_tokens",
    name: "swa-sizing.swa_tokens",
    derivedFrom: [full.ref],
    formula: "swa_tokens = int(full × ratio), page-aligned",
    compute: () => exact(v41LoggedPoolSizes(capConfig(ctx, null), full.value).swa),
    render: asInt,
  });
}

const CAP_INPUT = "taken from the log: SGLang's request cap (compute_swa_request_cap) is not modelled";
const RATIO_INPUT = "taken from the log: the SWA ratio the server used, an input to every SWA figure";

function memoryCalculation(ctx: V41Ctx, line: LoggedSizingLine) {
  if (num(line, "swa_fixed")) ctx.capMode = true;
  budgetFigure(ctx, line);
  compare(ctx, {
    line,
    key: "bytes_per_full_token",
    name: "bytes_per_full_token",
    derivedFrom: [],
    formula: "(share × 584 × L + Σ owners(r) × (584 + 68) / r) × f, f = (L + 1) / L with DSpark; share 0 in cap mode",
    compute: () => exact(v41Coefficients(capConfig(ctx)).bytesPerFullToken),
    render: asDecimal,
  });
  compare(ctx, {
    line,
    key: "c128_state_fixed",
    name: "c128_state_fixed",
    derivedFrom: [],
    formula: "no ratio-128 layer: no c128 state",
    compute: () => exact(0),
    render: asGb,
  });
  c2StateFigure(ctx, line);
  swaFixedFigure(ctx, line);
  fullTokenFigure(ctx, line);
}

function budgetFigure(ctx: V41Ctx, line: LoggedSizingLine) {
  const avail = num(line, "available_bytes");
  if (avail && !avail.truncated) ctx.avail = { ...loggedGbRange(avail), ref: ref(line, "available_bytes") };
  const given = ctx.budgetBytes;
  if (given === null)
    return inputFigure(ctx, line, "available_bytes", "available_bytes", "taken from the log: the KV budget");
  compare(ctx, {
    line,
    key: "available_bytes",
    name: "available_bytes",
    derivedFrom: [],
    formula: "the KV budget the check was given",
    compute: () => exact(given),
    render: asGb,
    cause: "the budget comes from the check's flags, not from SGLang's arithmetic: give the server's budget",
  });
}

function c2StateFigure(ctx: V41Ctx, line: LoggedSizingLine) {
  const { config } = ctx.base;
  const mrr = config.maxRunningRequests;
  if (mrr === null) return notComputed(ctx, line, "c2_state_fixed", "c2_state_fixed", "no request count");
  compare(ctx, {
    line,
    key: "c2_state_fixed",
    name: "c2_state_fixed",
    derivedFrom: ctx.requestsRef ? [ctx.requestsRef] : [],
    formula: "ceil2(slots × R₂ + R₂ + 1) × 1024 × 4 B × ratio-2 sources",
    compute: () =>
      exact(v41PairStateFixedBytes(config.model, mrr + 1, v41PairRingSize(config.isSpeculative, config.draftTokens))),
    render: asGb,
  });
}

function swaFixedFigure(ctx: V41Ctx, line: LoggedSizingLine) {
  const logged = num(line, "swa_fixed");
  if (!logged || logged.truncated) return;
  const bpst = v41Coefficients(capConfig(ctx)).bytesPerSwaToken;
  const cap = ctx.cap;
  if (cap)
    return void compare(ctx, {
      line,
      key: "swa_fixed",
      name: "swa_fixed",
      derivedFrom: [cap.ref],
      formula: "swa_fixed = cap × 584 × L × f (SWA priced unpadded)",
      compute: () => exact(cap.value * bpst),
      render: asGb,
    });
  const caps = v41CapsPrintingSwaFixed(ctx.base.config, logged);
  ctx.solvedCaps = caps;
  if (caps.length > 0)
    return inputFigure(
      ctx,
      line,
      "swa_fixed",
      "swa_fixed",
      `the request cap is not logged (no SWA sizing line): the page-aligned caps ${caps.join(", ")} print it`,
    );
  const nearest = Math.round(loggedGbRange(logged).lo / bpst / P(ctx)) * P(ctx);
  compare(ctx, {
    line,
    key: "swa_fixed",
    name: "swa_fixed",
    derivedFrom: [],
    formula: "swa_fixed = cap × 584 × L × f for a page-aligned cap",
    compute: () => exact(nearest * bpst),
    render: asGb,
    cause: "no page-aligned SWA cap prints this value at 584 B per SWA token and layer",
  });
}

function fullTokenFigure(ctx: V41Ctx, line: LoggedSizingLine) {
  const avail = ctx.avail;
  const caps: (number | null)[] = ctx.cap ? [ctx.cap.value] : (ctx.solvedCaps ?? (ctx.capMode ? [] : [null]));
  if (!avail || caps.length === 0)
    return notComputed(ctx, line, "full_token", "full_token", "no budget or SWA cap in this rank to compute it from");
  const full = compare(ctx, {
    line,
    key: "full_token",
    name: "full_token",
    derivedFrom: [avail.ref, ...(ctx.cap ? [ctx.cap.ref] : []), ...(ctx.requestsRef ? [ctx.requestsRef] : [])],
    formula: "int((available − c2_fixed − swa_fixed) / bytes_per_full_token), page-aligned",
    compute: () => v41FullTokenRange(ctx.base.config, avail, caps),
    render: asInt,
    step: P(ctx),
  });
  if (full) ctx.full = { value: full.value, ref: ref(line, "full_token") };
}

function poolSizes(ctx: V41Ctx, line: LoggedSizingLine) {
  ctx.poolLines++;
  const logged = num(line, "full");
  if (!logged || logged.truncated) return;
  fullFigure(ctx, line);
  const full: Anchor = { value: logged.value, ref: ref(line, "pools.full") };
  const swaLogged = num(line, "swa");
  const cap = ctx.cap;
  const sizes = v41LoggedPoolSizes(capConfig(ctx, cap?.value ?? null), full.value);
  if (ctx.capMode && !cap) inputFigure(ctx, line, "swa", "pools.swa", "cap mode with the request cap not logged");
  else
    compare(ctx, {
      line,
      key: "swa",
      name: "pools.swa",
      derivedFrom: cap ? [cap.ref] : [full.ref],
      formula: cap ? "swa = the SWA cap" : "swa = int(full × ratio), page-aligned",
      compute: () => exact(sizes.swa),
      render: asInt,
    });
  const swa: Anchor = swaLogged
    ? { value: swaLogged.value, ref: ref(line, "pools.swa") }
    : { ...full, value: sizes.swa };
  const atSwa = v41LoggedPoolSizes({ ...ctx.base.config, swaCapTokens: swa.value }, full.value);
  const derived: [string, number, string[], string][] = [
    ["c4", atSwa.c4, [full.ref], "c4 = full // 4 (logged; no ratio-4 pool is allocated)"],
    ["c128", atSwa.c128, [full.ref], "c128 = full // 128 (logged; no ratio-128 pool is allocated)"],
    ["c4_state", atSwa.c4State, [swa.ref], "c4_state = swa // W × R4 (V4's c4 state, still logged)"],
    ["c128_state", 0, [], "c128_state = 0"],
  ];
  for (const [key, value, from, formula] of derived)
    compare(ctx, {
      line,
      key,
      name: `pools.${key}`,
      derivedFrom: from,
      formula,
      compute: () => exact(value),
      render: asInt,
    });
  ctx.pools = { full, swa };
}

function fullFigure(ctx: V41Ctx, line: LoggedSizingLine) {
  const { maxTotalTokens } = ctx.base.config;
  const resized = ctx.poolLines > 1;
  if (!resized && ctx.full) {
    const anchor = ctx.full;
    return void compare(ctx, {
      line,
      key: "full",
      name: "pools.full",
      derivedFrom: [anchor.ref],
      formula: "full = full_token",
      compute: () => exact(anchor.value),
      render: asInt,
    });
  }
  if (resized && maxTotalTokens != null)
    return void compare(ctx, {
      line,
      key: "full",
      name: "pools.full",
      derivedFrom: [],
      formula: "re-sized for --max-total-tokens T: full = T // P × P",
      compute: () => exact(Math.floor(maxTotalTokens / P(ctx)) * P(ctx)),
      render: asInt,
    });
  const why = resized
    ? "taken from the log: re-sized by a --max-total-tokens the section does not show"
    : "taken from the log: no memory line before it";
  inputFigure(ctx, line, "full", "pools.full", why);
}

const INIT_KEYS: readonly [string, keyof ReturnType<typeof v41PoolInitLines>[number]][] = [
  ["swa_size", "swaSize"],
  ["c4_size", "c4Size"],
  ["c4_logical_size", "c4LogicalSize"],
  ["c128_size", "c128Size"],
  ["c4_state_pool_size", "c4StatePoolSize"],
  ["c128_state_pool_size", "c128StatePoolSize"],
];

function poolInit(ctx: V41Ctx, line: LoggedSizingLine) {
  const nth = ctx.initLines++;
  const reqs = num(line, "max_num_reqs");
  inputFigure(ctx, line, "max_num_reqs", "pool-init.max_num_reqs", "taken from the log: the request slots");
  const c4 = num(line, "c4_size");
  const anchor = ctx.pools ?? (nth === 0 && c4 && !c4.truncated ? fromInitLine(line, c4) : null);
  if (!reqs || reqs.truncated || !anchor) {
    for (const [key] of INIT_KEYS)
      notComputed(ctx, line, key, `pool-init.${key}`, "no pool sizes logged before it in this rank");
    return;
  }
  const sizes = v41LoggedPoolSizes({ ...ctx.base.config, swaCapTokens: anchor.swa.value }, anchor.full.value);
  const expected = v41PoolInitLines(ctx.base.config, sizes, reqs.value)[nth];
  const worker = expected?.worker ?? `pool ${nth + 1}`;
  for (const [key, prop] of INIT_KEYS) {
    if (ctx.pools === null && nth === 0 && (key === "c4_size" || key === "swa_size")) {
      inputFigure(ctx, line, key, `pool-init.${key}`, "taken from the log: no pool sizes line in this rank");
      continue;
    }
    compare(ctx, {
      line,
      key,
      name: `pool-init(${worker}).${key}`,
      derivedFrom: [anchor.full.ref, anchor.swa.ref, ref(line, "max_num_reqs")],
      formula: worker === "draft" ? "the DSpark draft pool: the target's SWA, nothing compressed" : INIT_FORMULA,
      compute: () => (expected ? exact(expected[prop] as number) : null),
      render: asInt,
    });
  }
}

const INIT_FORMULA =
  "the target pool as logged: the pool sizes, c4_logical = c128 × 32, c128_state_pool = (max_num_reqs + 1) × R128";

/** A target init line with no pool-sizes line before it: full = 4 × c4_size, its own SWA size. */
function fromInitLine(line: LoggedSizingLine, c4: LoggedNumber) {
  const swa = num(line, "swa_size");
  return {
    full: { value: 4 * c4.value, ref: ref(line, "pool-init.c4_size") },
    swa: { value: swa?.value ?? 0, ref: ref(line, "pool-init.swa_size") },
  };
}

function schedulerLine(ctx: V41Ctx, line: LoggedSizingLine) {
  const { config } = ctx.base;
  const full = ctx.pools?.full ?? null;
  const budgetFull = ctx.full;
  if (full)
    compare(ctx, {
      line,
      key: "max_total_num_tokens",
      name: "max_total_num_tokens",
      derivedFrom: [full.ref],
      formula: "max_total_num_tokens = the last pool sizes' full",
      compute: () => exact(full.value),
      render: asInt,
    });
  else if (budgetFull)
    compare(ctx, {
      line,
      key: "max_total_num_tokens",
      name: "max_total_num_tokens",
      derivedFrom: [budgetFull.ref],
      formula: "page-aligned and at most full_token: re-sized by a --max-total-tokens the section does not show",
      compute: () => ({ lo: P(ctx), hi: budgetFull.value }),
      render: asInt,
      step: P(ctx),
    });
  else notComputed(ctx, line, "max_total_num_tokens", "max_total_num_tokens", "no full tokens logged before it");
  const mrr = config.maxRunningRequests;
  if (mrr === null || ctx.requestsRef !== null)
    inputFigure(ctx, line, "max_running_requests", "max_running_requests", "taken from the log: the server's count");
  else
    compare(ctx, {
      line,
      key: "max_running_requests",
      name: "max_running_requests",
      derivedFrom: [],
      formula: "--max-running-requests",
      compute: () => exact(mrr),
      render: asInt,
    });
  compare(ctx, {
    line,
    key: "context_len",
    name: "context_len",
    derivedFrom: [],
    formula: "--context-length, else the model's max positions",
    compute: () => exact(config.contextLen),
    render: asInt,
  });
}

function newCtx(config: V41SizingConfig, rank: string | null, out: LogComparison, options: V41ReconcileOptions) {
  const ctx: V41Ctx = {
    base: { generation: "dev-dsv41", config },
    extra: [],
    causes: new Map(),
    rank,
    out: out.figures as LogComparison["figures"][number][],
    truncated: out.truncated as LogComparison["truncated"][number][],
    budgetBytes: options.budgetBytes,
    requestsRef: null,
    avail: null,
    cap: null,
    solvedCaps: null,
    capMode: false,
    full: null,
    pools: null,
    poolLines: 0,
    initLines: 0,
  };
  return ctx;
}

/** A server argument a log shows only through its figures: the value and the line it was read from. */
export interface V41LoggedArgument {
  value: number;
  /** The figure it was read from (`pool-init.max_num_reqs`) and its 1-based line. */
  name: string;
  line: number;
}

/** The running requests (pool init or scheduler line) and the SWA request cap (cap-mode sizing line) a log shows. */
export function v41LoggedArguments(lines: readonly LoggedSizingLine[]): {
  maxRunningRequests: V41LoggedArgument | null;
  swaCapTokens: V41LoggedArgument | null;
} {
  const first = (kind: string, key: string, name: string) => {
    for (const line of lines) {
      const n = line.kind === kind ? num(line, key) : null;
      if (n && !n.truncated) return { value: n.value, name, line: line.line };
    }
    return null;
  };
  return {
    maxRunningRequests:
      first("pool-init", "max_num_reqs", "pool-init.max_num_reqs") ??
      first("max-total-tokens", "max_running_requests", "max_running_requests"),
    swaCapTokens: first("swa-sizing", "request_cap+headroom", "swa-sizing.request_cap+headroom"),
  };
}

function reconcileRank(ctx: V41Ctx, lines: readonly LoggedSizingLine[]) {
  // The request count the rank logs prices the pair state when the arguments do not give it.
  const requests = v41LoggedArguments(lines).maxRunningRequests;
  if (ctx.base.config.maxRunningRequests === null && requests) {
    ctx.base = { ...ctx.base, config: { ...ctx.base.config, maxRunningRequests: requests.value } };
    ctx.requestsRef = `${requests.name}@${requests.line}`;
  }
  // Cap mode logs its SWA sizing before the memory line; a ratio-mode sizing line needs the full tokens after it.
  ctx.capMode = lines.some((l) => num(l, "request_cap+headroom") || num(l, "swa_fixed"));
  const ratio = lines.map((l) => num(l, "swa_full_tokens_ratio")).find((n) => n && !n.truncated);
  if (ratio) ctx.base = { ...ctx.base, config: { ...ctx.base.config, swaFullTokensRatio: ratio.value } };
  const pending: LoggedSizingLine[] = [];
  for (const line of lines) {
    if (line.kind === "swa-sizing" && !num(line, "request_cap+headroom") && !ctx.full && !ctx.pools) pending.push(line);
    else if (line.kind === "swa-sizing") swaSizing(ctx, line);
    else if (line.kind === "memory-calculation") memoryCalculation(ctx, line);
    else if (line.kind === "pool-sizes") poolSizes(ctx, line);
    else if (line.kind === "pool-init") poolInit(ctx, line);
    else if (line.kind === "max-total-tokens") schedulerLine(ctx, line);
    if ((ctx.full || ctx.pools) && pending.length > 0) for (const p of pending.splice(0)) swaSizing(ctx, p);
  }
  for (const p of pending) swaSizing(ctx, p);
}

/** Every figure of one section of a V4.1 log against the dev-dsv41 configurator, per rank. */
export function reconcileV41Log(
  log: ParsedSglangLog,
  config: V41SizingConfig,
  options: V41ReconcileOptions,
): LogComparison {
  const platform = detectPlatform(log);
  const out: LogComparison = {
    section: log.section,
    firstLine: log.firstLine,
    lastLine: log.lastLine,
    startedBy: log.startedBy,
    generation: "dev-dsv41",
    evidence: v41Evidence(log),
    platform: platform.platform,
    platformEvidence: platform.evidence,
    figures: [],
    skipped: log.skipped,
    truncated: [],
    ...(log.sizingLines.length === 0
      ? { nothingToReconcile: "the section has no DSV4 sizing line: its arguments were checked, nothing to reconcile" }
      : {}),
  };
  for (const [rank, lines] of byRank(log)) {
    const base = options.requestsGiven ? config : { ...config, maxRunningRequests: null };
    reconcileRank(newCtx(base, rank, out, options), lines);
  }
  for (const line of log.sizingLines)
    if (line.missing.length > 0)
      (out.truncated as LogComparison["truncated"][number][]).push({
        line: line.line,
        name: `${line.kind} line`,
        logged: line.missing.join(", "),
        reason: `the line is cut: ${line.missing.join(", ")} missing`,
      });
  return out;
}

function v41Evidence(log: ParsedSglangLog): string[] {
  const memory = log.sizingLines.find((l) => l.kind === "memory-calculation");
  const evidence = ["the model is DeepSeek-V4.1: SGLang runs it through DSV4PoolConfigurator (dev-dsv41 image)"];
  if (memory)
    evidence.push(
      `line ${memory.line}: the memory line ${num(memory, "c2_state_fixed") ? "prints" : "has no"} c2_state_fixed ` +
        `(${num(memory, "c2_state_fixed") ? "a later V4.1-aware configurator" : "the dev-dsv41 configurator of 2026-09-11"})`,
    );
  return evidence;
}
