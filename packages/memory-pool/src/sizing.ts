/**
 * KV-cache capacity sizing (docs/reference/pools-and-sizing.md §8): SGLang Gen B's `DSV4PoolConfigurator` arithmetic
 * (`sglang-gen-b`, to the byte, quirks included) and an `exact` mode that sizes what the pools really allocate.
 *
 * Units: `...Bytes` bytes; `...Tokens`/`size` tokens or entries; `...Rows` state rows.
 */
import {
  attentionHeadDim,
  configuratorKvBytesPerToken,
  indexerBytesPerToken,
  offlineStateRowBytes,
  type KvHeadDims,
} from "./bytes.js";
import { onlineC128RowBytes } from "./banks.js";
import { ceilDiv } from "./bytes.js";
import { requireSizingConfig } from "./config.js";
import { MemoryPoolCapacityErrors, MemoryPoolError, requireBoolean, requireInt } from "./errors.js";
import { compositePool, countLayers, draftWorkerPool, type PoolId, type PoolShape } from "./pools.js";
import { compressStateRingSize, compressStateWritePad } from "./rings.js";

export type SizingMode = "sglang-gen-b" | "exact";

/** The model facts sizing needs (docs/reference/pools-and-sizing.md §2). */
export interface KvModelShape extends KvHeadDims {
  /** Model sliding window W (128). */
  slidingWindow: number;
  /** The HF `compress_ratios` list; only the first `numHiddenLayers` entries are target layers. */
  compressRatios: readonly number[];
  numHiddenLayers: number;
  /** context_len (max_position_embeddings unless --context-length). */
  contextLen: number;
}

export interface SizingConfig {
  model: KvModelShape;
  /** P, the logical page size (256 on CUDA). */
  pageSize: number;
  /** r, swa_full_tokens_ratio. */
  swaFullTokensRatio: number;
  isSpeculative: boolean;
  /** max_speculative_num_draft_tokens (0 without speculation). */
  maxDraftTokens: number;
  /** --max-running-requests as given (before attention-DP division), null when unset. */
  maxRunningRequests: number | null;
  attnDpSize?: number;
  ppSize?: number;
  disaggregationMode?: "null" | "prefill" | "decode";
  disaggregationDecodeExtraSlots?: number;
  /** HiSparse host-to-device ratio H (1 when HiSparse is off). */
  hisparseRatio?: number;
  onlineC128?: boolean;
  onlineC128Mtp?: boolean;
  stateDtypeBytes?: 4 | 2;
  indexerFp4?: boolean;
  /** --max-total-tokens. */
  maxTotalTokens?: number | null;
  mode?: SizingMode;
  /** Ring sizes to use instead of SGLang's (the advisor's what-if). */
  ringSizeOverrides?: { 4?: number; 128?: number };
  platform?: "cuda" | "hip" | "npu";
}

/** Per-stage facts derived from the config. */
export interface StageFacts {
  stage: number;
  startLayer: number;
  endLayer: number;
  ratios: number[];
  layers: number;
  layersC4: number;
  layersC128: number;
  ringSizeC4: number;
  ringSizeC128: number;
}

/** The coefficient of docs/reference/pools-and-sizing.md §8.2 term by term (bytes per full token). */
export interface BytesPerFullToken {
  swaKv: number;
  c4Kv: number;
  c128Kv: number;
  c4Indexer: number;
  c4AttentionState: number;
  c128State: number;
  c4IndexerState: number;
  /** Sum of the terms above. */
  raw: number;
  /** (L + 1) / L with speculation (one average layer reserved for the draft), else 1. */
  draftFactor: number;
  /** raw · draftFactor: what Gen B divides the budget by. */
  total: number;
}

export interface PoolSizes {
  /** F: full tokens (max_total_num_tokens). */
  maxTotalNumTokens: number;
  /** S: SWA tokens. */
  swaTokens: number;
  c4Size: number;
  c128Size: number;
  c4LogicalSize: number;
  c4StatePoolSize: number;
  c128StatePoolSize: number;
}

export interface PoolReport extends PoolShape {
  /** What the sizing priced for this pool (Gen B: coefficient term · F, or the fixed bytes). */
  estimatedBytes: number;
  /** allocated − estimated: bytes the estimate missed (negative: over-reserved). */
  unaccountedBytes: number;
}

export interface StageSizing {
  stage: StageFacts;
  /** F this stage alone could hold (before the min over PP stages). */
  stageCapacityTokens: number;
  pools: PoolReport[];
  allocatedBytes: number;
  estimatedBytes: number;
  unusedBytes: number;
}

export interface SizingResult {
  mode: SizingMode;
  availableBytes: number;
  pageSize: number;
  bytesPerFullToken: BytesPerFullToken;
  /**
   * Request-scoped c128 state bytes priced outside the coefficient (Gen B, docs/reference/pools-and-sizing.md §8.4).
   */
  fixedBytes: number;
  sizes: PoolSizes;
  maxRunningRequests: number;
  numReqSlots: number;
  stages: StageSizing[];
  /** Worst stage's numbers (the one the report shows). */
  allocatedBytes: number;
  estimatedBytes: number;
  unusedBytes: number;
  warnings: string[];
}

const DEFAULTS = {
  attnDpSize: 1,
  ppSize: 1,
  hisparseRatio: 1,
  stateDtypeBytes: 4 as 4 | 2,
};

/** PP layer split (vLLM/SGLang `get_pp_indices` convention [ASSUMED]): remainder layers go to the stages before the last. */
export function ppStageLayerRanges(numLayers: number, ppSize: number): Array<{ startLayer: number; endLayer: number }> {
  requireInt("numLayers", numLayers, 1);
  requireInt("ppSize", ppSize, 1, numLayers);
  const counts = Array.from({ length: ppSize }, () => Math.floor(numLayers / ppSize));
  const remaining = numLayers % ppSize;
  for (let i = 2; i < remaining + 2; i++) counts[ppSize - i]! += 1;
  const ranges: Array<{ startLayer: number; endLayer: number }> = [];
  let start = 0;
  for (const c of counts) {
    ranges.push({ startLayer: start, endLayer: start + c });
    start += c;
  }
  return ranges;
}

export function stageFacts(config: SizingConfig): StageFacts[] {
  requireSizingConfig(config);
  const ppSize = config.ppSize ?? DEFAULTS.ppSize;
  const targetRatios = config.model.compressRatios.slice(0, config.model.numHiddenLayers);
  const ringOptions = {
    isSpeculative: config.isSpeculative,
    onlineC128: !!config.onlineC128,
    onlineC128Mtp: !!config.onlineC128Mtp,
  };
  const ringSizeC4 = config.ringSizeOverrides?.[4] ?? compressStateRingSize(4, ringOptions);
  const ringSizeC128 = config.ringSizeOverrides?.[128] ?? compressStateRingSize(128, ringOptions);
  return ppStageLayerRanges(targetRatios.length, ppSize).map(({ startLayer, endLayer }, stage) => {
    const ratios = targetRatios.slice(startLayer, endLayer);
    const counts = countLayers(ratios);
    return {
      stage,
      startLayer,
      endLayer,
      ratios,
      layers: counts.total,
      layersC4: counts.ratio4,
      layersC128: counts.ratio128,
      ringSizeC4,
      ringSizeC128,
    };
  });
}

/** What the ring-vs-draft refusal (V-S8) is built from: the ring, its write pad and the draft count. */
export interface DraftExceedsRingParams {
  ratio: number;
  ringSize: number;
  writePad: number;
  draftTokens: number;
}

/**
 * V-S8's words, built in this one place from its params: `pool` as this package's error says it, `startup` as the
 * start-up check reports it (in SGLang's argument names, which server-config extends with the adaptive count and
 * the advisor's ring).
 */
export function draftExceedsRingText(p: DraftExceedsRingParams, form: "pool" | "startup"): string {
  const fix = `lower the draft count to ${p.writePad} or enlarge the ring`;
  if (form === "pool") {
    const serves = `serves at most ${p.writePad} draft tokens (its write pad)`;
    return `the c${p.ratio} compress state ring of ${p.ringSize} ${serves}: ${fix}`;
  }
  return (
    `speculative_num_draft_tokens=${p.draftTokens} exceeds what the c${p.ratio} compress state ring can keep ` +
    `resident (ring_size=${p.ringSize} serves at most ${p.writePad} draft tokens); ${fix}`
  );
}

/**
 * The ring-vs-draft check (docs/reference/pools-and-sizing.md §8.3, V-S8): every ratio with layers (c128 skipped when
 * online) must have `maxDraftTokens <= writePad(ratio, ring)`. Returns one error per failing ratio (empty when fine).
 */
export function ringDraftViolations(stage: StageFacts, maxDraftTokens: number, onlineC128: boolean): MemoryPoolError[] {
  requireInt("maxDraftTokens", maxDraftTokens, 0);
  requireBoolean("onlineC128", onlineC128);
  const errors: MemoryPoolError[] = [];
  for (const [ratio, ringSize, layers] of [
    [4, stage.ringSizeC4, stage.layersC4],
    [128, stage.ringSizeC128, stage.layersC128],
  ] as const) {
    if (layers === 0 || (ratio === 128 && onlineC128)) continue;
    const writePad = compressStateWritePad(ratio, ringSize);
    if (maxDraftTokens > writePad) {
      errors.push(
        new MemoryPoolError(
          "DRAFT_EXCEEDS_RING",
          "speculativeNumDraftTokens",
          maxDraftTokens,
          draftExceedsRingText({ ratio, ringSize, writePad, draftTokens: maxDraftTokens }, "pool"),
          { ratio, ringSize, writePad, draftTokens: maxDraftTokens },
          "V-S8",
        ),
      );
    }
  }
  return errors;
}

/**
 * Bytes per full token (docs/reference/pools-and-sizing.md §8.2). `c4StateDivisor` is W (Gen B quirk) or P (what the
 * pool addresses, docs/reference/pools-and-sizing.md §8.5).
 */
export function bytesPerFullToken(config: SizingConfig, stage: StageFacts, c4StateDivisor: number): BytesPerFullToken {
  requireSizingConfig(config);
  requireInt("c4StateDivisor", c4StateDivisor, 1);
  const dims = config.model;
  const r = config.swaFullTokensRatio;
  const H = config.hisparseRatio ?? DEFAULTS.hisparseRatio;
  const sd = config.stateDtypeBytes ?? DEFAULTS.stateDtypeBytes;
  const kv = configuratorKvBytesPerToken(dims);
  const idx = indexerBytesPerToken(dims.indexHeadDim, config.indexerFp4);
  const A = attentionHeadDim(dims);
  const s4 = offlineStateRowBytes(A, true, sd);
  const s4i = offlineStateRowBytes(dims.indexHeadDim, true, sd);
  const c4StateRatio = stage.ringSizeC4 / c4StateDivisor;
  const { layers: L, layersC4: L4, layersC128: L128 } = stage;
  const swaKv = r * kv * L;
  const c4Kv = (kv / (4 * H)) * L4;
  const c128Kv = (kv / 128) * L128;
  const c4Indexer = (idx / 4) * L4;
  const c4AttentionState = r * c4StateRatio * s4 * L4;
  const c128State = 0; // request-scoped: priced as fixed bytes (docs/reference/pools-and-sizing.md §8.4)
  const c4IndexerState = r * c4StateRatio * s4i * L4;
  // Summed in the order upstream adds the terms, so the float matches to the last bit.
  const raw = swaKv + c4Kv + c128Kv + c4Indexer + c4AttentionState + c128State + c4IndexerState;
  const draftFactor = config.isSpeculative && L > 0 ? (L + 1) / L : 1;
  return {
    swaKv,
    c4Kv,
    c128Kv,
    c4Indexer,
    c4AttentionState,
    c128State,
    c4IndexerState,
    raw,
    draftFactor,
    total: raw * draftFactor,
  };
}

/** Request slots = rows of req_to_token: `m + 1` (+ extra slots in PD decode). */
export function numReqSlots(config: SizingConfig, maxRunningRequests: number): number {
  requireSizingConfig(config);
  requireInt("maxRunningRequests", maxRunningRequests, 0);
  const extra = config.disaggregationMode === "decode" ? (config.disaggregationDecodeExtraSlots ?? 0) : 0;
  return maxRunningRequests + extra + 1;
}

/**
 * Request-scoped c128 state bytes for `m` running requests (docs/reference/pools-and-sizing.md §8.4), exactly what
 * CompressStatePool allocates.
 */
export function c128FixedBytes(config: SizingConfig, stage: StageFacts, maxRunningRequests: number): number {
  requireInt("layersC128", stage.layersC128, 0);
  if (stage.layersC128 === 0) return 0;
  const slots = numReqSlots(config, maxRunningRequests);
  const A = attentionHeadDim(config.model);
  const sd = config.stateDtypeBytes ?? DEFAULTS.stateDtypeBytes;
  const R128 = stage.ringSizeC128;
  if (config.onlineC128) {
    const rows = (slots + R128 + 1) * (1 + config.maxDraftTokens);
    return rows * onlineC128RowBytes(A, sd) * stage.layersC128;
  }
  const rows = ceilDiv(slots * R128 + R128 + 1, 128) * 128;
  return rows * offlineStateRowBytes(A, false, sd) * stage.layersC128;
}

/** Requested mrr per attention-DP worker (`max_running_requests // attn_dp_size`), or null. */
export function requestedMaxRunningRequests(config: SizingConfig): number | null {
  requireSizingConfig(config);
  if (config.maxRunningRequests == null) return null;
  return Math.floor(config.maxRunningRequests / (config.attnDpSize ?? DEFAULTS.attnDpSize));
}

/**
 * `resolveMaxNumReqs` (docs/reference/pools-and-sizing.md §7.1): requested (capped at capacity/2) or
 * `clamp(F/context·512, 2048, 4096)` capped.
 */
export function resolveMaxRunningRequests(config: SizingConfig, capacityTokens: number): number {
  requireInt("capacityTokens", capacityTokens, 0);
  const requested = requestedMaxRunningRequests(config);
  const half = Math.floor(capacityTokens / 2);
  if (requested != null) return Math.min(requested, half);
  return Math.min(estimatedMaxRunningRequests(config, capacityTokens), half);
}

function estimatedMaxRunningRequests(config: SizingConfig, capacityTokens: number): number {
  return Math.min(Math.max(Math.trunc((capacityTokens / config.model.contextLen) * 512), 2048), 4096);
}

/** `computeSizes(F, P)` (docs/reference/pools-and-sizing.md §8.5) with the c4-state divisor of the mode. */
export function computeSizes(
  config: SizingConfig,
  stage: StageFacts,
  fullTokens: number,
  c4StateDivisor: number,
): PoolSizes {
  requireSizingConfig(config);
  requireInt("fullTokens", fullTokens, 0);
  requireInt("c4StateDivisor", c4StateDivisor, 1);
  const P = config.pageSize;
  const F = Math.floor(fullTokens / P) * P;
  const S = Math.floor(Math.trunc(F * config.swaFullTokensRatio) / P) * P;
  return poolSizesAt(config, stage, F, S, c4StateDivisor);
}

/** The pools at F full and S SWA tokens (F, S as given); the c128 state is 0 until the request count is known. */
export function poolSizesAt(
  config: SizingConfig,
  stage: StageFacts,
  fullTokens: number,
  swaTokens: number,
  c4StateDivisor: number,
): PoolSizes {
  return {
    maxTotalNumTokens: fullTokens,
    swaTokens,
    ...compressedPoolSizes(config, fullTokens),
    c4StatePoolSize: Math.floor(swaTokens / c4StateDivisor) * stage.ringSizeC4,
    c128StatePoolSize: 0,
  };
}

/** The pools every generation derives from F alone: c4 entries (HiSparse shrinks them), c128 entries, c4 logical. */
export function compressedPoolSizes(
  config: SizingConfig,
  fullTokens: number,
): Pick<PoolSizes, "c4Size" | "c128Size" | "c4LogicalSize"> {
  const H = config.hisparseRatio ?? DEFAULTS.hisparseRatio;
  const c128Size = Math.floor(fullTokens / 128);
  return { c4Size: Math.floor(fullTokens / (4 * H)), c128Size, c4LogicalSize: c128Size * 32 };
}

function c4StateDivisorOf(config: SizingConfig): number {
  // Gen B divides by the window (swaPageSize = window in the configurator: the quirk of
  // docs/reference/pools-and-sizing.md §8.7); the pool addresses one ring per SWA page of P tokens, which is what exact
  // mode sizes.
  return (config.mode ?? "exact") === "sglang-gen-b" ? config.model.slidingWindow : config.pageSize;
}

/** Gen B's fixed c128 bytes: for the requested mrr, else for the estimate at `F0 = int(avail / bpft)`. */
export function genBFixedBytes(
  config: SizingConfig,
  stage: StageFacts,
  availableBytes: number,
  bytesPerFullTokenTotal: number,
): number {
  const requested = requestedMaxRunningRequests(config);
  if (requested != null) return c128FixedBytes(config, stage, requested);
  const f0 = Math.trunc(availableBytes / bytesPerFullTokenTotal);
  return c128FixedBytes(config, stage, Math.min(estimatedMaxRunningRequests(config, f0), Math.floor(f0 / 2)));
}

/** Gen B `calculatePoolSizes` for one stage: F from the budget (before constraints). */
export function genBStageCapacity(
  config: SizingConfig,
  stage: StageFacts,
  availableBytes: number,
  bpft: BytesPerFullToken,
): { fullTokens: number; fixedBytes: number } {
  const fixedBytes = genBFixedBytes(config, stage, availableBytes, bpft.total);
  const tokenBytes = Math.max(availableBytes - fixedBytes, 0);
  const F = Math.trunc(tokenBytes / bpft.total);
  return { fullTokens: Math.floor(F / config.pageSize) * config.pageSize, fixedBytes };
}

/** Everything allocated for one stage at F full tokens (target pools + draft pool when speculative). */
function allocateStage(
  config: SizingConfig,
  stage: StageFacts,
  fullTokens: number,
): { sizes: PoolSizes; mrr: number; slots: number; pools: PoolShape[]; draft: PoolShape | null } {
  const sizes = computeSizes(config, stage, fullTokens, c4StateDivisorOf(config));
  const mrr = resolveMaxRunningRequests(config, sizes.maxTotalNumTokens);
  const slots = numReqSlots(config, mrr);
  const composite = compositePool({
    dims: config.model,
    stageRatios: stage.ratios,
    swaSize: sizes.swaTokens,
    c4Size: sizes.c4Size,
    c128Size: sizes.c128Size,
    c4StatePoolSize: sizes.c4StatePoolSize,
    c128StatePoolSize: config.onlineC128 ? slots : slots * stage.ringSizeC128,
    pageSize: config.pageSize,
    numReqSlots: slots,
    ringSizeC4: stage.ringSizeC4,
    ringSizeC128: stage.ringSizeC128,
    onlineC128: !!config.onlineC128,
    onlineMtpMaxDraftTokens: config.onlineC128 ? config.maxDraftTokens : 0,
    stateDtypeBytes: config.stateDtypeBytes ?? DEFAULTS.stateDtypeBytes,
    indexerFp4: config.indexerFp4,
    platform: config.platform,
  });
  sizes.c128StatePoolSize = composite.c128StatePoolSize;
  const draft = config.isSpeculative
    ? draftWorkerPool({ dims: config.model, swaSize: sizes.swaTokens, pageSize: config.pageSize })
    : null;
  return { sizes, mrr, slots, pools: composite.pools, draft };
}

function totalOf(alloc: { pools: PoolShape[]; draft: PoolShape | null }): number {
  return alloc.pools.reduce((s, p) => s + p.totalBytes, 0) + (alloc.draft?.totalBytes ?? 0);
}

/** Exact mode: the largest F (multiple of P) whose real allocation fits the budget. Allocation is monotone in F. */
function exactStageCapacity(config: SizingConfig, stage: StageFacts, availableBytes: number): number {
  const P = config.pageSize;
  const fits = (pages: number): boolean => totalOf(allocateStage(config, stage, pages * P)) <= availableBytes;
  if (!fits(0)) return 0;
  // Gallop for an upper bound, then bisect; 2^40 pages bounds the search for any real budget.
  let lo = 0;
  let hi = 1;
  while (fits(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > 2 ** 40) return lo * P;
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo * P;
}

/**
 * Sizes the KV cache for `availableBytes` per worker (docs/reference/pools-and-sizing.md §7.1 after the budget,
 * docs/reference/pools-and-sizing.md §8.5). Throws MemoryPoolError for input it cannot size (page size not a multiple
 * of 128, V-P2). Capacity problems (V-P4 SWA floor, V-M2) are thrown too, with every number in the message; callers
 * that collect errors catch them.
 */
export function sizeKvCache(config: SizingConfig, availableBytes: number): SizingResult {
  requireInt("availableBytes", availableBytes, 0);
  requireSizingConfig(config);
  const mode = config.mode ?? "exact";
  const divisor = c4StateDivisorOf(config);
  const stages = stageFacts(config);
  const perStage = stages.map((stage) => {
    const bpft = bytesPerFullToken(config, stage, divisor);
    if (mode === "sglang-gen-b") {
      const { fullTokens, fixedBytes } = genBStageCapacity(config, stage, availableBytes, bpft);
      return { stage, bpft, fullTokens, fixedBytes };
    }
    return { stage, bpft, fullTokens: exactStageCapacity(config, stage, availableBytes), fixedBytes: 0 };
  });
  // Token constraints (docs/reference/pools-and-sizing.md §8.6): --max-total-tokens, then the min over PP stages.
  const warnings: string[] = [];
  let capacity = Math.min(...perStage.map((s) => s.fullTokens));
  if (config.maxTotalTokens != null) {
    if (config.maxTotalTokens > capacity) {
      warnings.push(
        `--max-total-tokens=${config.maxTotalTokens} is larger than the profiled capacity ${capacity}; using ${capacity}`,
      );
    }
    capacity = Math.min(capacity, config.maxTotalTokens);
  }
  const stageReports: StageSizing[] = [];
  let first: ReturnType<typeof allocateStage> | null = null;
  for (const s of perStage) {
    const alloc = allocateStage(config, s.stage, capacity);
    first ??= alloc;
    const F = alloc.sizes.maxTotalNumTokens;
    const pools: PoolReport[] = alloc.pools.map((p) => {
      const estimatedBytes = mode === "sglang-gen-b" ? genBEstimate(p.id, s.bpft, F, s.fixedBytes) : p.totalBytes;
      return { ...p, estimatedBytes, unaccountedBytes: p.totalBytes - estimatedBytes };
    });
    if (alloc.draft) {
      const estimatedBytes = mode === "sglang-gen-b" ? F * (s.bpft.total - s.bpft.raw) : alloc.draft.totalBytes;
      pools.push({ ...alloc.draft, estimatedBytes, unaccountedBytes: alloc.draft.totalBytes - estimatedBytes });
    }
    const allocatedBytes = pools.reduce((a, p) => a + p.totalBytes, 0);
    const estimatedBytes = pools.reduce((a, p) => a + p.estimatedBytes, 0);
    stageReports.push({
      stage: s.stage,
      stageCapacityTokens: s.fullTokens,
      pools,
      allocatedBytes,
      estimatedBytes,
      unusedBytes: availableBytes - allocatedBytes,
    });
  }
  const alloc = first!;
  {
    const requested = requestedMaxRunningRequests(config);
    if (requested != null && alloc.mrr < requested) {
      warnings.push(
        `max_running_requests reduced from ${requested} to ${alloc.mrr} to fit a capacity of ${alloc.sizes.maxTotalNumTokens} tokens (at most half the tokens)`,
      );
    }
  }
  validateCapacity(config, alloc.sizes);
  const worst = stageReports.reduce((a, b) => (b.unusedBytes < a.unusedBytes ? b : a));
  return {
    mode,
    availableBytes,
    pageSize: config.pageSize,
    bytesPerFullToken: perStage[0]!.bpft,
    // Exact mode allocates the c128 state for the resolved request slots; Gen B reports what it priced.
    fixedBytes:
      mode === "sglang-gen-b" ? perStage[0]!.fixedBytes : c128FixedBytes(config, perStage[0]!.stage, alloc.mrr),
    sizes: alloc.sizes,
    maxRunningRequests: alloc.mrr,
    numReqSlots: alloc.slots,
    stages: stageReports,
    allocatedBytes: worst.allocatedBytes,
    estimatedBytes: worst.estimatedBytes,
    unusedBytes: worst.unusedBytes,
    warnings,
  };
}

/** The coefficient term Gen B prices each pool with; pools not listed (the c128 state) are priced as fixed bytes. */
const GEN_B_TERMS: Partial<Record<PoolId, keyof BytesPerFullToken>> = {
  "swa-kv": "swaKv",
  "c4-kv": "c4Kv",
  "c128-kv": "c128Kv",
  "c4-indexer-k": "c4Indexer",
  "c4-attention-state": "c4AttentionState",
  "c4-indexer-state": "c4IndexerState",
};

function genBEstimate(poolId: PoolId, bpft: BytesPerFullToken, F: number, fixedPriced: number): number {
  const term = GEN_B_TERMS[poolId];
  return term === undefined ? fixedPriced : F * bpft[term];
}

/** V-P4 (SWA admission floor) and V-M2 (no tokens), collected into one throw with every number in `params`. */
function validateCapacity(config: SizingConfig, sizes: PoolSizes): void {
  const slidingWindow = config.model.slidingWindow;
  const pageSize = config.pageSize;
  const errors: MemoryPoolError[] = [];
  if (slidingWindow + pageSize >= sizes.swaTokens) {
    const minimumSwaTokens = (Math.floor((slidingWindow + pageSize) / pageSize) + 1) * pageSize;
    const { swaTokens } = sizes;
    const { swaFullTokensRatio } = config;
    errors.push(
      new MemoryPoolError(
        "SWA_FLOOR",
        "swaTokens",
        swaTokens,
        `the SWA pool cannot hold one request: it must exceed sliding_window_size (${slidingWindow}) + page_size ` +
          `(${pageSize}), at least ${minimumSwaTokens} tokens; increase --swa-full-tokens-ratio (now ` +
          `${swaFullTokensRatio}) or the KV budget`,
        { swaTokens, minimumSwaTokens, slidingWindow, pageSize, swaFullTokensRatio },
        "V-P4",
      ),
    );
  }
  if (sizes.maxTotalNumTokens <= 0) {
    errors.push(
      new MemoryPoolError(
        "NOT_ENOUGH_MEMORY",
        "maxTotalNumTokens",
        sizes.maxTotalNumTokens,
        "the KV budget must hold at least one page of every pool: increase --mem-fraction-static or the KV budget",
        { maxTotalNumTokens: sizes.maxTotalNumTokens },
        "V-M2",
      ),
    );
  }
  if (errors.length === 1) throw errors[0]!;
  if (errors.length > 1) throw new MemoryPoolCapacityErrors(errors);
}

/**
 * Gen B `calculatePoolSizesFromMaxTokens(T)` for one stage (docs/reference/pools-and-sizing.md §8.5, §8.6):
 * F = T // P · P, the rest recomputed.
 */
export function poolSizesFromMaxTokens(config: SizingConfig, maxTokens: number, stage = 0): PoolSizes {
  requireInt("maxTokens", maxTokens, 0);
  const stages = stageFacts(config);
  requireInt("stage", stage, 0, stages.length - 1);
  const facts = stages[stage]!;
  return computeSizes(config, facts, maxTokens, c4StateDivisorOf(config));
}
