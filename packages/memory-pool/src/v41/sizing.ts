/**
 * A DeepSeek-V4.1 rank sized end to end (docs/reference/deepseek-v4.1.md §6): what the configurator reserves for
 * each pool, what the pools really allocate at the sizes it chose, and the gap between the two, as warnings with
 * their size. Also the two `Initialize DeepSeekV4TokenToKVPool` lines the rank logs (target, then DSpark draft).
 */
import { requireInt, optional, requireOneOf } from "../errors.js";
import { compressStateRingSize } from "../rings.js";
import {
  type V41ConfiguratorSizing,
  type V41LoggedPoolSizes,
  type V41SizingConfig,
  sizeV41Configurator,
} from "./configurator.js";
import { V41_INDEX_PAGE_SIZES, type V41PoolId, type V41PoolShape, v41Pools } from "./pools.js";

export interface V41PoolReport extends V41PoolShape {
  /** What the configurator's coefficient (or fixed cost) reserves for this pool at the final F and S. */
  estimatedBytes: number;
  /** totalBytes − estimatedBytes: positive when the pool takes more than was reserved. */
  gapBytes: number;
}

/** `Initialize DeepSeekV4TokenToKVPool with max_num_reqs=… swa_size=… c4_size=… …` (values before the pool's max()). */
export interface V41PoolInitLine {
  worker: "target" | "draft";
  maxNumReqs: number;
  swaSize: number;
  c4Size: number;
  c4LogicalSize: number;
  c128Size: number;
  c4StatePoolSize: number;
  c128StatePoolSize: number;
}

export interface V41GapWarning {
  kind: "layout-blind-low-ratio" | "draft-layers" | "swa-padding";
  bytes: number;
  message: string;
}

export interface V41SizingResult {
  configurator: V41ConfiguratorSizing;
  /** max_num_reqs of the pools (the requested mrr, at most half the tokens; else the configurator's estimate). */
  maxRunningRequests: number;
  pools: V41PoolReport[];
  allocatedBytes: number;
  /** F · bytes_per_full_token + fixed costs at the final F: what the configurator reserved. */
  reservedBytes: number;
  /** availableBytes − allocatedBytes (negative: the rank allocates more than the budget it was given). */
  unusedBytes: number;
  poolInitLines: V41PoolInitLine[];
  warnings: V41GapWarning[];
}

export interface V41SizingOptions {
  /** `DSV41_INDEX_PAGE_SIZE`: 64 (default) or 128. */
  indexPageSize?: 64 | 128;
}

/** Sizes one V4.1 rank from `availableBytes` and compares the configurator's reservation with the allocation. */
export function sizeV41(
  config: V41SizingConfig,
  availableBytes: number,
  options: V41SizingOptions = {},
): V41SizingResult {
  optional("indexPageSize", options.indexPageSize, (f, v) => requireOneOf(f, v, V41_INDEX_PAGE_SIZES));
  const c = sizeV41Configurator(config, availableBytes);
  const { full, swa } = c.pools;
  const mrr = resolvedRequests(config, full);
  const alloc = v41Pools({
    model: config.model,
    fullSize: full,
    swaSize: swa,
    pageSize: config.pageSize,
    numReqSlots: mrr + 1,
    pairRingSize: c.pairRingSize,
    withDraft: config.isSpeculative,
    ...(options.indexPageSize === undefined ? {} : { indexPageSize: options.indexPageSize }),
  });
  const estimates = poolEstimates(config, c, full, swa);
  const pools = alloc.pools.map((p) => {
    const estimatedBytes = estimates[p.id] ?? 0;
    return { ...p, estimatedBytes, gapBytes: p.totalBytes - estimatedBytes };
  });
  const reservedBytes = Object.values(estimates).reduce((a, b) => a + b, 0);
  return {
    configurator: c,
    maxRunningRequests: mrr,
    pools,
    allocatedBytes: alloc.totalBytes,
    reservedBytes,
    unusedBytes: availableBytes - alloc.totalBytes,
    poolInitLines: v41PoolInitLines(config, c.pools, mrr),
    warnings: gapWarnings(config, pools),
  };
}

/**
 * The scheduler's request count at the final F: requested (at most half the tokens), else
 * `min(clamp(int(F / context · 512), 2048, 4096), F // 2)`, as for V4 (docs/reference/pools-and-sizing.md §7.2).
 */
function resolvedRequests(config: V41SizingConfig, fullTokens: number): number {
  requireInt("fullTokens", fullTokens, 0);
  const half = Math.floor(fullTokens / 2);
  if (config.maxRunningRequests !== null) return Math.min(config.maxRunningRequests, half);
  const estimate = Math.trunc((fullTokens / config.contextLen) * 512);
  return Math.min(Math.min(Math.max(estimate, 2048), 4096), half);
}

/**
 * The configurator's reservation split by pool: SWA and each low ratio's KV / index share of the coefficient, the
 * pair state as its fixed cost, and the draft as the (L + 1) / L inflation of everything the coefficient prices.
 */
function poolEstimates(
  config: V41SizingConfig,
  c: V41ConfiguratorSizing,
  full: number,
  swa: number,
): Partial<Record<V41PoolId, number>> {
  const L = config.model.numHiddenLayers;
  const swaTokens = config.swaCapTokens === null ? full * config.swaFullTokensRatio : swa;
  const base: Partial<Record<V41PoolId, number>> = {
    "swa-kv": swaTokens * c.swaKvBytesPerToken * L,
    "c2-kv": (full * c.kvBytesPerToken * c.sources[2].length) / 2,
    "c2-indexer-k": (full * c.indexBytesPerToken * c.sources[2].length) / 2,
    "c1-kv": full * c.kvBytesPerToken * c.sources[1].length,
    "c1-indexer-k": full * c.indexBytesPerToken * c.sources[1].length,
  };
  const priced = Object.values(base).reduce((a, b) => a + b, 0);
  return {
    ...base,
    "c2-pair-state": c.c2StateFixedBytes,
    ...(config.isSpeculative ? { "draft-swa-kv": priced * (c.draftFactor - 1) } : {}),
  };
}

/**
 * The pool init lines at the logged pool sizes: the target's (c4 / c128 figures as the configurator passes them,
 * the c128 state finalized as slots · R128 with V4's ring although V4.1 has no c128 layer), then, with DSpark, the
 * draft's (same SWA, nothing compressed).
 */
export function v41PoolInitLines(
  config: V41SizingConfig,
  pools: V41LoggedPoolSizes,
  maxNumReqs: number,
): V41PoolInitLine[] {
  requireInt("maxNumReqs", maxNumReqs, 0);
  const ring128 = compressStateRingSize(128, { isSpeculative: config.isSpeculative });
  const target: V41PoolInitLine = {
    worker: "target",
    maxNumReqs,
    swaSize: pools.swa,
    c4Size: pools.c4,
    c4LogicalSize: pools.c128 * 32,
    c128Size: pools.c128,
    c4StatePoolSize: pools.c4State,
    c128StatePoolSize: (maxNumReqs + 1) * ring128,
  };
  if (!config.isSpeculative) return [target];
  const zeros = { c4Size: 0, c4LogicalSize: 0, c128Size: 0, c4StatePoolSize: 0, c128StatePoolSize: 0 };
  return [target, { worker: "draft", maxNumReqs, swaSize: pools.swa, ...zeros }];
}

function gapWarnings(config: V41SizingConfig, pools: readonly V41PoolReport[]): V41GapWarning[] {
  const gap = (ids: readonly V41PoolId[]) =>
    pools.filter((p) => ids.includes(p.id)).reduce((a, p) => a + p.gapBytes, 0);
  const out: V41GapWarning[] = [];
  const low = gap(["c2-kv", "c2-indexer-k", "c1-kv", "c1-indexer-k"]);
  if (low !== 0)
    out.push({
      kind: "layout-blind-low-ratio",
      bytes: low,
      message:
        `ratio-1/2 pools: the configurator prices ${config.model.qkNopeHeadDim + 2 * config.model.qkRopeHeadDim + 8} ` +
        "B latents and 68 B index keys per entry, unpadded; the pools allocate page-aligned pages, one extra page " +
        `each and (F + P) / r index entries: ${fmt(low)} more than reserved`,
    });
  const draft = pools.find((p) => p.id === "draft-swa-kv");
  if (draft)
    out.push({
      kind: "draft-layers",
      bytes: draft.gapBytes,
      message:
        `DSpark draft: ${draft.layers} SWA layers allocated (${fmt(draft.totalBytes)}); the configurator reserved ` +
        `(L + 1) / L of its coefficient for one draft layer (${fmt(draft.estimatedBytes)}): gap ${fmt(draft.gapBytes)}`,
    });
  const swa = gap(["swa-kv"]);
  if (swa !== 0)
    out.push({
      kind: "swa-padding",
      bytes: swa,
      message: `SWA KV: the extra page and SWA rounding take ${fmt(swa)} more than reserved`,
    });
  return out;
}

function fmt(bytes: number): string {
  const sign = bytes < 0 ? "−" : "";
  const abs = Math.abs(bytes);
  return `${sign}${Math.round(abs).toLocaleString("en-US")} B (${(abs / 2 ** 30).toFixed(3)} GiB)`;
}
