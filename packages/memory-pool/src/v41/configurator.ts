/**
 * SGLang's `DSV4PoolConfigurator` as it sizes a DeepSeek-V4.1 rank (docs/reference/deepseek-v4.1.md §5), in the
 * revision the public V4.1 start-up logs came from (`lmsysorg/sglang:dev-dsv41`): the coefficient prices only the
 * source layers' compressed KV and fp4 index keys (`(584 + 68) / r` per owner), SWA at 584 B per token and layer, none
 * of it page-padded; the draft is reserved by inflating both coefficients by (L + 1) / L, and the ratio-2 pair state
 * is a fixed cost. (A later upstream revision prices SWA page-padded, 585 B at P = 256; the logs rule it out.) The pool-sizes line keeps V4's c4 / c128 arithmetic (F / 4, F / 128, c4 state S // W · R4) although no
 * c4 or c128 pool is allocated.
 *
 * Units: `...Bytes` bytes, `...Tokens` tokens, `...PerToken` bytes per token.
 */
import { attentionHeadDim, ceilDiv, configuratorKvBytesPerToken, indexerBytesPerToken } from "../bytes.js";
import { MemoryPoolError, optional, requireBoolean, requireInt, requireKnownKeys, requireNumber } from "../errors.js";
import { compressStateRingSize } from "../rings.js";
import { type V41ModelShape, type V41Sources, v41Sources } from "./model.js";
import { V41_INDEX_FP4, v41PairRingSize } from "./pools.js";

export interface V41SizingConfig {
  model: V41ModelShape;
  /** P (SGLang forces 256 for DSV4). */
  pageSize: number;
  /** The model's context length (`context_len`), used by the request estimate when no mrr is given. */
  contextLen: number;
  /** `--speculative-algorithm DSPARK`. */
  isSpeculative: boolean;
  /** `speculative_num_draft_tokens` D (DSpark: block size + 1, 6 for block 5); 0 without speculation. */
  draftTokens: number;
  /** `--max-running-requests` per attention-DP worker, null when not given. */
  maxRunningRequests: number | null;
  /**
   * Cap mode: the SWA tokens cap mode reserves (`request_cap+headroom`, page-aligned), null for ratio mode. SGLang
   * picks cap mode when `--swa-full-tokens-ratio` is not given, mrr and chunked prefill are set.
   */
  swaCapTokens: number | null;
  /** Ratio mode's SWA share (`--swa-full-tokens-ratio`, SGLang's DSV4 default 0.1); ignored in cap mode. */
  swaFullTokensRatio: number;
  /** `--max-total-tokens`, null when not given. */
  maxTotalTokens?: number | null;
}

/** The coefficients: what one full token and one SWA token cost the budget. */
export interface V41Coefficients {
  /** 584: the configurator's latent entry (448 + 2·64 + 8), never page-padded for ratios 1 and 2. */
  kvBytesPerToken: number;
  /** 68: fp4 index key of 128 values (the low-ratio index pools are always fp4). */
  indexBytesPerToken: number;
  /** 584: SWA priced per token and layer with the same unpadded entry (the page really holds 585 B per token). */
  swaKvBytesPerToken: number;
  /** `(L + 1) / L` with DSpark (41 / 40 for V4.1-Flash), else 1. */
  draftFactor: number;
  /** Σ over low ratios r of owners(r) · (584 + 68) / r, before the draft factor (1,630 for V4.1-Flash). */
  compressedBytesPerFullToken: number;
  /** `bytes_per_full_token`: SWA share (0 in cap mode) · bytesPerSwaToken + compressed, times the draft factor. */
  bytesPerFullToken: number;
  /** 584 · L times the draft factor (23,360 · 41/40 = 23,944 for V4.1-Flash with DSpark). */
  bytesPerSwaToken: number;
}

export interface V41ConfiguratorSizing extends V41Coefficients {
  mode: "cap" | "ratio";
  sources: V41Sources;
  pairRingSize: number;
  /** The requests the fixed costs are priced for (requested, or the configurator's estimate). */
  pricedMaxRunningRequests: number;
  numReqSlots: number;
  c2StateFixedBytes: number;
  /** Cap mode: S_cap · bytesPerSwaToken; 0 in ratio mode. */
  swaFixedBytes: number;
  /** `full_token` of the memory line: F from the budget, page-aligned. */
  fullToken: number;
  /** The pool-sizes line (after `--max-total-tokens`, re-sized as SGLang does). */
  pools: V41LoggedPoolSizes;
  /** The pool-sizes line of the budget, before `--max-total-tokens` (equal to `pools` without the cap). */
  profiledPools: V41LoggedPoolSizes;
}

/** `DSV4 pool sizes: full=…, swa=…, c4=…, c128=…, c4_state=…, c128_state=…` as the V4.1 servers log it. */
export interface V41LoggedPoolSizes {
  full: number;
  swa: number;
  c4: number;
  c128: number;
  c4State: number;
  c128State: number;
}

const CONFIG_KEYS = [
  "model",
  "pageSize",
  "contextLen",
  "isSpeculative",
  "draftTokens",
  "maxRunningRequests",
  "swaCapTokens",
  "swaFullTokensRatio",
  "maxTotalTokens",
];

function requireV41Config(c: V41SizingConfig): V41Sources {
  requireKnownKeys("config", c, CONFIG_KEYS);
  const sources = v41Sources(c.model);
  requireInt("pageSize", c.pageSize, 128);
  if (c.pageSize % 128 !== 0)
    throw new MemoryPoolError("PAGE_SIZE", "pageSize", c.pageSize, "page_size must be multiple of 128", {
      multipleOf: 128,
    });
  requireInt("contextLen", c.contextLen, 1);
  requireBoolean("isSpeculative", c.isSpeculative);
  requireInt("draftTokens", c.draftTokens, 0, 65535);
  if (c.maxRunningRequests !== null) requireInt("maxRunningRequests", c.maxRunningRequests, 1);
  if (c.swaCapTokens !== null) requireInt("swaCapTokens", c.swaCapTokens, 0);
  requireNumber("swaFullTokensRatio", c.swaFullTokensRatio, 0, true, 1);
  optional("maxTotalTokens", c.maxTotalTokens, (f, v) => requireInt(f, v, 0));
  return sources;
}

/** The coefficients of a V4.1 stage (all target layers; PP slicing is not modelled). */
export function v41Coefficients(config: V41SizingConfig): V41Coefficients {
  const sources = requireV41Config(config);
  const m = config.model;
  const L = m.numHiddenLayers;
  const kv = configuratorKvBytesPerToken(m);
  const idx = indexerBytesPerToken(m.indexHeadDim, V41_INDEX_FP4);
  const compressed = (sources[2].length * (kv + idx)) / 2 + sources[1].length * (kv + idx);
  const draftFactor = config.isSpeculative ? (L + 1) / L : 1;
  const swaShare = config.swaCapTokens === null ? config.swaFullTokensRatio : 0;
  const swaRaw = kv * L;
  return {
    kvBytesPerToken: kv,
    indexBytesPerToken: idx,
    swaKvBytesPerToken: kv,
    draftFactor,
    compressedBytesPerFullToken: compressed,
    // Upstream multiplies the finished coefficient by the factor; the same order keeps the same float.
    bytesPerFullToken: (swaShare * swaRaw + compressed) * draftFactor,
    bytesPerSwaToken: swaRaw * draftFactor,
  };
}

/** Fixed bytes of the pair state: `ceil2(slots·R₂ + R₂ + 1)` rows of 2·A fp32 per ratio-2 source. */
export function v41PairStateFixedBytes(model: V41ModelShape, numReqSlots: number, pairRingSize: number): number {
  const sources = v41Sources(model);
  requireInt("numReqSlots", numReqSlots, 1);
  requireInt("pairRingSize", pairRingSize, 2);
  if (sources[2].length === 0) return 0;
  const rows = ceilDiv(numReqSlots * pairRingSize + pairRingSize + 1, 2) * 2;
  return rows * 2 * attentionHeadDim(model) * 4 * sources[2].length;
}

/** The configurator's request count for the fixed costs: requested, else `min(clamp(F0/ctx·512, 2048, 4096), F0/2)`. */
function pricedRequests(config: V41SizingConfig, availableBytes: number, bytesPerFullToken: number): number {
  if (config.maxRunningRequests !== null) return config.maxRunningRequests;
  const f0 = Math.trunc(availableBytes / bytesPerFullToken);
  const estimate = Math.min(Math.max(Math.trunc((f0 / config.contextLen) * 512), 2048), 4096);
  return Math.min(estimate, Math.floor(f0 / 2));
}

/** The pool-sizes line at F full tokens: SWA from the cap or the ratio, and V4's c4 / c128 figures. */
export function v41LoggedPoolSizes(config: V41SizingConfig, fullTokens: number): V41LoggedPoolSizes {
  requireV41Config(config);
  requireInt("fullTokens", fullTokens, 0);
  const P = config.pageSize;
  const full = Math.floor(fullTokens / P) * P;
  const swa = config.swaCapTokens ?? Math.floor(Math.trunc(full * config.swaFullTokensRatio) / P) * P;
  const ring4 = compressStateRingSize(4, { isSpeculative: config.isSpeculative });
  return {
    full,
    swa,
    c4: Math.floor(full / 4),
    c128: Math.floor(full / 128),
    c4State: Math.floor(swa / config.model.slidingWindow) * ring4,
    c128State: 0,
  };
}

/**
 * What the configurator computes and logs from `availableBytes` (the memory line's `available_bytes`, already net of
 * any multimodal reservation): fixed costs, `full_token`, and the pool-sizes line. Throws SWA_FLOOR (ratio mode, a
 * SWA pool that cannot hold one request) and NOT_ENOUGH_MEMORY (cap mode, no room left for the full pool).
 */
export function sizeV41Configurator(config: V41SizingConfig, availableBytes: number): V41ConfiguratorSizing {
  const coef = v41Coefficients(config);
  const sources = v41Sources(config.model);
  requireInt("availableBytes", availableBytes, 0);
  const pairRingSize = v41PairRingSize(config.isSpeculative, config.draftTokens);
  const priced = pricedRequests(config, availableBytes, coef.bytesPerFullToken);
  const numReqSlots = priced + 1;
  const c2StateFixedBytes = v41PairStateFixedBytes(config.model, numReqSlots, pairRingSize);
  const swaFixedBytes = config.swaCapTokens === null ? 0 : config.swaCapTokens * coef.bytesPerSwaToken;
  const forTokens = Math.max(availableBytes - c2StateFixedBytes - swaFixedBytes, 0);
  const rawFull = Math.trunc(forTokens / coef.bytesPerFullToken);
  if (rawFull <= 0 && config.swaCapTokens !== null)
    throw new MemoryPoolError(
      "NOT_ENOUGH_MEMORY",
      "swaCapTokens",
      config.swaCapTokens,
      `the SWA pool cap (${swaFixedBytes} B) leaves no room for the full KV pool within the available ` +
        `${availableBytes} B: reduce --max-running-requests or increase --mem-fraction-static`,
      { swaFixedBytes, availableBytes },
    );
  const profiledPools = v41LoggedPoolSizes(config, rawFull);
  requireSwaFloor(config, profiledPools.swa);
  const cap = config.maxTotalTokens;
  const pools = cap != null && cap < profiledPools.full ? v41LoggedPoolSizes(config, cap) : profiledPools;
  return {
    ...coef,
    mode: config.swaCapTokens === null ? "ratio" : "cap",
    sources,
    pairRingSize,
    pricedMaxRunningRequests: priced,
    numReqSlots,
    c2StateFixedBytes,
    swaFixedBytes,
    fullToken: profiledPools.full,
    pools,
    profiledPools,
  };
}

/** Ratio mode only: a SWA pool at or below W + P admits no request (`validate_swa_pool_size`). */
function requireSwaFloor(config: V41SizingConfig, swaTokens: number): void {
  if (config.swaCapTokens !== null) return;
  const W = config.model.slidingWindow;
  const P = config.pageSize;
  if (W + P < swaTokens) return;
  throw new MemoryPoolError(
    "SWA_FLOOR",
    "swaTokens",
    swaTokens,
    `the SWA pool cannot hold one request: it must exceed sliding_window_size (${W}) + page_size (${P}); ` +
      `increase --swa-full-tokens-ratio (now ${config.swaFullTokensRatio}) or the KV budget`,
    { swaTokens, slidingWindow: W, pageSize: P, swaFullTokensRatio: config.swaFullTokensRatio },
  );
}
