/**
 * What one DeepSeek-V4.1 rank allocates (docs/reference/deepseek-v4.1.md §4): `DeepSeekV4TokenToKVPool` with ratios
 * 1 and 2, the revision the public V4.1 start-up logs came from (V4 entry layout, 584 B latents in 576-B-aligned
 * pages). Every pool here is an allocation, not an estimate.
 */
import { attentionHeadDim, ceilDiv, indexerBytesPerToken } from "../bytes.js";
import { MemoryPoolError, optional, requireBoolean, requireInt, requireKnownKeys, requireOneOf } from "../errors.js";
import { compressStateRingSize } from "../rings.js";
import { indexerPool, type PoolDtype, type PoolShape, singleKvPool } from "../pools.js";
import { type V41LowRatio, type V41ModelShape, type V41Sources, v41Sources } from "./model.js";

/** What a V4.1 pool is (decisions are taken on this, never on the display name). */
export type V41PoolId =
  | "swa-kv"
  | "c2-kv"
  | "c1-kv"
  | "c2-indexer-k"
  | "c1-indexer-k"
  | "c2-pair-state"
  | "draft-swa-kv";

export const V41_POOL_NAMES: Readonly<Record<V41PoolId, string>> = {
  "swa-kv": "SWA KV",
  "c2-kv": "ratio-2 KV",
  "c1-kv": "ratio-1 KV",
  "c2-indexer-k": "ratio-2 index K (fp4)",
  "c1-indexer-k": "ratio-1 index K (fp4)",
  "c2-pair-state": "ratio-2 pair state",
  "draft-swa-kv": "DSpark draft SWA KV",
};

export interface V41PoolShape extends Omit<PoolShape, "id" | "name"> {
  id: V41PoolId;
  name: string;
}

/** Index-K page of the low ratios, in compressed slots (`DSV41_INDEX_PAGE_SIZE`; 128 with DeepGEMM's paged logits). */
export const V41_INDEX_PAGE_SIZES = [64, 128] as const;
/** fp4 index keys: 64 B of e2m1 + 4 ue8m0 scales per 128-wide key (the low-ratio index pools are always fp4). */
export const V41_INDEX_FP4 = true;

/** Ratio-2 pair-state ring R₂: 2 without speculation, else the smallest power of two >= 2 + D. */
export function v41PairRingSize(isSpeculative: boolean, draftTokens: number): number {
  return compressStateRingSize(2, { isSpeculative, draftTokens });
}

export interface PairStatePoolOptions {
  /** Request slots (max_running_requests + 1, more in PD decode). */
  numReqSlots: number;
  ringSize: number;
  /** A = qk_nope + qk_rope (512). */
  headDim: number;
  /** One pool per ratio-2 source layer. */
  layers: number;
}

/**
 * The ratio-2 pending-pair state (`CompressStatePool`, ratio 2, fp32, no overlap): `slots·R₂ + R₂ + 1` rows rounded
 * up to a multiple of 2 (one dummy ring, one sentinel row), each `2·A` fp32 (kv and score halves): 4,096 B at A = 512.
 */
export function pairStatePool(o: PairStatePoolOptions): V41PoolShape {
  requireKnownKeys("options", o, ["numReqSlots", "ringSize", "headDim", "layers"]);
  requireInt("numReqSlots", o.numReqSlots, 1);
  requireInt("ringSize", o.ringSize, 2);
  requireInt("headDim", o.headDim, 1);
  requireInt("layers", o.layers, 0);
  const rows = ceilDiv(o.numReqSlots * o.ringSize + o.ringSize + 1, 2) * 2;
  const lastDim = 2 * o.headDim;
  const bytesPerLayer = rows * lastDim * 4;
  return {
    id: "c2-pair-state",
    name: V41_POOL_NAMES["c2-pair-state"],
    dtype: "float32" satisfies PoolDtype,
    layers: o.layers,
    shapePerLayer: [rows, lastDim],
    bytesPerLayer,
    totalBytes: bytesPerLayer * o.layers,
    unitBytes: o.ringSize * lastDim * 4 * o.layers,
  };
}

export interface V41PoolOptions {
  model: V41ModelShape;
  /** Full tokens F (`full_size`, the configurator's `full`). */
  fullSize: number;
  /** SWA tokens S. */
  swaSize: number;
  /** P (256). */
  pageSize: number;
  numReqSlots: number;
  /** Ratio-2 ring R₂ (`v41PairRingSize`). */
  pairRingSize: number;
  /** `DSV41_INDEX_PAGE_SIZE` (64, or 128 with DeepGEMM's paged sparse MQA logits). */
  indexPageSize?: 64 | 128;
  /** The DSpark draft worker's pool (its own SWA of `model.draftLayers` layers at S tokens), when speculative. */
  withDraft: boolean;
}

export interface V41Pools {
  pools: V41PoolShape[];
  totalBytes: number;
  sources: V41Sources;
}

const POOL_KEYS = [
  "model",
  "fullSize",
  "swaSize",
  "pageSize",
  "numReqSlots",
  "pairRingSize",
  "indexPageSize",
  "withDraft",
];

/**
 * Every pool of one V4.1 rank: SWA KV of every target layer; per low ratio r, the KV of its sources (`F // r`
 * entries, pages of P/r) and their fp4 index keys (`(F + P) // r` entries, pages of the index page size); the pair
 * state of each ratio-2 source; and, with DSpark, the draft worker's SWA. No c4 / c128 pool is allocated although the
 * configurator logs their sizes.
 */
export function v41Pools(o: V41PoolOptions): V41Pools {
  requireKnownKeys("options", o, POOL_KEYS);
  const sources = v41Sources(o.model);
  requireInt("fullSize", o.fullSize, 0);
  requireInt("swaSize", o.swaSize, 0);
  requireInt("pageSize", o.pageSize, 2);
  requireInt("numReqSlots", o.numReqSlots, 1);
  requireInt("pairRingSize", o.pairRingSize, 2);
  optional("indexPageSize", o.indexPageSize, (f, v) => requireOneOf(f, v, V41_INDEX_PAGE_SIZES));
  requireBoolean("withDraft", o.withDraft);
  const P = o.pageSize;
  if (P % 2 !== 0 || (P / 2) % (o.indexPageSize ?? 64) !== 0)
    throw new MemoryPoolError(
      "PAGE_SIZE",
      "pageSize",
      P,
      `must hold whole index pages at ratio 2: P/2 must be a multiple of ${o.indexPageSize ?? 64}`,
    );
  const dims = o.model;
  const pools: V41PoolShape[] = [
    tagged("swa-kv", singleKvPool({ size: o.swaSize, pageTokens: P, layers: o.model.numHiddenLayers, dims })),
  ];
  for (const r of [2, 1] as const) pools.push(...lowRatioPools(o, r, sources[r].length));
  if (sources[2].length > 0)
    pools.push(
      pairStatePool({
        numReqSlots: o.numReqSlots,
        ringSize: o.pairRingSize,
        headDim: attentionHeadDim(dims),
        layers: sources[2].length,
      }),
    );
  if (o.withDraft && o.model.draftLayers > 0)
    pools.push(
      tagged("draft-swa-kv", singleKvPool({ size: o.swaSize, pageTokens: P, layers: o.model.draftLayers, dims })),
    );
  return { pools, totalBytes: pools.reduce((s, p) => s + p.totalBytes, 0), sources };
}

function lowRatioPools(o: V41PoolOptions, r: V41LowRatio, layers: number): V41PoolShape[] {
  if (layers === 0) return [];
  const P = o.pageSize;
  const kv = singleKvPool({ size: Math.floor(o.fullSize / r), pageTokens: P / r, layers, dims: o.model });
  const index = indexerPool({
    size: Math.floor((o.fullSize + P) / r),
    pageTokens: o.indexPageSize ?? 64,
    layers,
    indexerBytesPerToken: indexerBytesPerToken(o.model.indexHeadDim, V41_INDEX_FP4),
  });
  return [tagged(r === 2 ? "c2-kv" : "c1-kv", kv), tagged(r === 2 ? "c2-indexer-k" : "c1-indexer-k", index)];
}

function tagged(id: V41PoolId, shape: PoolShape): V41PoolShape {
  return { ...shape, id, name: V41_POOL_NAMES[id] };
}
