/**
 * Pool shapes and bytes as `DeepSeekV4TokenToKVPool` allocates them (docs/reference/pools-and-sizing.md §5). Everything
 * here is an allocation, not an estimate: the sizing module compares these against the configurator's coefficient.
 */
import {
  attentionHeadDim,
  ceilDiv,
  indexerBytesPerToken,
  kvBytesPerToken,
  kvPageAlignBytes,
  offlineStateRowElements,
  type KvHeadDims,
} from "./bytes.js";
import { onlineC128BankLayout, requireStateDtypeBytes, ONLINE_C128_RING_SIZE } from "./banks.js";
import {
  MemoryPoolError,
  optional,
  requireBoolean,
  requireInt,
  requireArray,
  requireKnownKeys,
  requireOneOf,
} from "./errors.js";

export type PoolDtype = "uint8" | "float32" | "bfloat16";

/** What a pool is; decisions (pricing, advice) are taken on this, never on the display name. */
export type PoolId =
  | "kv"
  | "indexer"
  | "c4-state"
  | "c128-state"
  | "c128-online-state"
  | "swa-kv"
  | "c4-kv"
  | "c4-indexer-k"
  | "c4-attention-state"
  | "c4-indexer-state"
  | "c128-kv"
  | "c128-attention-state"
  | "draft-swa-kv";

/** Display names (reports, logs); the first five are the stand-alone pools' defaults. */
export const POOL_NAMES: Readonly<Record<PoolId, string>> = {
  kv: "kv",
  indexer: "indexer",
  "c4-state": "c4 state",
  "c128-state": "c128 state",
  "c128-online-state": "C128 online state",
  "swa-kv": "SWA KV",
  "c4-kv": "C4 KV",
  "c4-indexer-k": "C4 indexer K",
  "c4-attention-state": "C4 attention state",
  "c4-indexer-state": "C4 indexer state",
  "c128-kv": "C128 KV",
  "c128-attention-state": "C128 attention state",
  "draft-swa-kv": "draft SWA KV",
};

const POOL_IDS = Object.keys(POOL_NAMES) as PoolId[];

/** One allocated pool: `layers` tensors of `shapePerLayer`. */
export interface PoolShape {
  id: PoolId;
  name: string;
  dtype: PoolDtype;
  layers: number;
  shapePerLayer: number[];
  bytesPerLayer: number;
  totalBytes: number;
  /** Bytes one more allocation unit (page or padded row group) of this pool costs across its layers. */
  unitBytes: number;
}

/** A paged pool: `(size + pageTokens + 1) // pageTokens` pages (one extra page because slot 0 is a null slot). */
export interface PagedPoolOptions {
  id?: PoolId;
  /** Tokens (or compressed entries) the pool addresses. */
  size: number;
  /** Tokens per page of this pool (P for SWA, P/4 for c4, P/128 for c128). */
  pageTokens: number;
  layers: number;
}

export interface SingleKvPoolOptions extends PagedPoolOptions {
  dims: KvHeadDims;
}

const PAGED_KEYS = ["id", "size", "pageTokens", "layers"];

/** Validates the paged options and returns the page count. */
function pageCount(o: PagedPoolOptions, extraKeys: readonly string[]): number {
  requireKnownKeys("options", o, [...PAGED_KEYS, ...extraKeys]);
  optional("id", o.id, (f, v) => requireOneOf(f, v, POOL_IDS));
  requireInt("size", o.size, 0);
  requireInt("pageTokens", o.pageTokens, 1);
  requireInt("layers", o.layers, 0);
  return Math.floor((o.size + o.pageTokens + 1) / o.pageTokens);
}

/**
 * `DeepSeekV4SingleKVPool` (docs/reference/pools-and-sizing.md §5.1): pages of `ceilDiv(pageTokens·584, 576)·576`
 * bytes, `(size + pageTokens + 1) // pageTokens` pages.
 */
export function singleKvPool(o: SingleKvPoolOptions): PoolShape {
  const numPages = pageCount(o, ["dims"]);
  const align = kvPageAlignBytes(o.dims);
  const bytesPerPage = ceilDiv(o.pageTokens * kvBytesPerToken(o.dims), align) * align;
  return shape(o.id ?? "kv", "uint8", o.layers, [numPages, bytesPerPage], 1, bytesPerPage);
}

/** Bytes per page of a single KV pool (149,760 at P = 256; 37,440 at 64; 1,728 at 2). */
export function kvBytesPerPage(pageTokens: number, dims: KvHeadDims): number {
  return singleKvPool({ size: 0, pageTokens, layers: 1, dims }).shapePerLayer[1]!;
}

export interface IndexerPoolOptions extends PagedPoolOptions {
  indexerBytesPerToken: number;
}

/**
 * `DeepSeekV4IndexerPool` (docs/reference/pools-and-sizing.md §5.2): pages of `pageTokens · indexerBytesPerToken`
 * bytes, same page count rule.
 */
export function indexerPool(o: IndexerPoolOptions): PoolShape {
  const numPages = pageCount(o, ["indexerBytesPerToken"]);
  requireInt("indexerBytesPerToken", o.indexerBytesPerToken, 1);
  const pageBytes = o.pageTokens * o.indexerBytesPerToken;
  return shape(o.id ?? "indexer", "uint8", o.layers, [numPages, pageBytes], 1, pageBytes);
}

export interface CompressStatePoolOptions {
  id?: PoolId;
  /** Rows the pool addresses (c4: SWA pages · ring; c128: request slots · ring, or slots online). */
  size: number;
  ringSize: number;
  ratio: 4 | 128;
  /** A for attention state, I for indexer state. */
  headDim: number;
  online?: boolean;
  stateDtypeBytes: number;
  /** Online MTP banks (max_speculative_num_draft_tokens), 0 without MTP. */
  onlineMtpMaxDraftTokens?: number;
  layers: number;
}

/**
 * `CompressStatePool` (docs/reference/pools-and-sizing.md §5.3). Offline: `size + ringSize + 1` rows (one dummy ring
 * for page 0, one sentinel row), rounded up to a multiple of the ratio because the fused compressor reshapes rows by
 * ratio. Online (c128 only): ring 1 and `(size + 2) · (1 + banks)` rows of `3·headDim`.
 */
export function compressStatePool(o: CompressStatePoolOptions): PoolShape {
  requireKnownKeys("options", o, COMPRESS_STATE_KEYS);
  optional("id", o.id, (f, v) => requireOneOf(f, v, POOL_IDS));
  requireInt("size", o.size, 0);
  requireInt("ringSize", o.ringSize, 1);
  requireInt("layers", o.layers, 0);
  requireOneOf("ratio", o.ratio, [4, 128]);
  optional("online", o.online, requireBoolean);
  requireStateDtypeBytes(o.stateDtypeBytes);
  const dtype: PoolDtype = o.stateDtypeBytes === 4 ? "float32" : "bfloat16";
  if (o.online) {
    if (o.ratio !== 128)
      throw new MemoryPoolError("INVALID_RATIO", "ratio", o.ratio, "online compress state exists for ratio 128 only", {
        allowed: [128],
      });
    if (o.ringSize !== ONLINE_C128_RING_SIZE) {
      throw new MemoryPoolError("ONLINE_RING", "ringSize", o.ringSize, "online compress requires ring_size=1");
    }
    const layout = onlineC128BankLayout({
      statePoolSize: o.size,
      maxDraftTokens: o.onlineMtpMaxDraftTokens ?? 0,
      attentionHeadDim: o.headDim,
      stateDtypeBytes: o.stateDtypeBytes,
    });
    // One more request slot adds one row to every bank.
    return shape(
      o.id ?? "c128-online-state",
      dtype,
      o.layers,
      [layout.totalRows, layout.rowElements],
      o.stateDtypeBytes,
      layout.rowBytes * (1 + layout.draftBankCount),
    );
  }
  if ((o.onlineMtpMaxDraftTokens ?? 0) !== 0) {
    throw new MemoryPoolError(
      "NOT_APPLICABLE",
      "onlineMtpMaxDraftTokens",
      o.onlineMtpMaxDraftTokens,
      "applies to the online compress state only (online: true); an offline ring has no draft banks",
    );
  }
  const lastDim = offlineStateRowElements(o.headDim, o.ratio === 4);
  const rows = ceilDiv(o.size + o.ringSize + 1, o.ratio) * o.ratio;
  return shape(
    o.id ?? (o.ratio === 4 ? "c4-state" : "c128-state"),
    dtype,
    o.layers,
    [rows, lastDim],
    o.stateDtypeBytes,
    o.ratio * lastDim * o.stateDtypeBytes,
  );
}

const COMPRESS_STATE_KEYS = [
  "id",
  "size",
  "ringSize",
  "ratio",
  "headDim",
  "online",
  "stateDtypeBytes",
  "onlineMtpMaxDraftTokens",
  "layers",
];

function shape(
  id: PoolId,
  dtype: PoolDtype,
  layers: number,
  shapePerLayer: number[],
  elementBytes: number,
  unitBytesPerLayer: number,
): PoolShape {
  const bytesPerLayer = shapePerLayer.reduce((a, b) => a * b, 1) * elementBytes;
  return {
    id,
    name: POOL_NAMES[id],
    dtype,
    layers,
    shapePerLayer,
    bytesPerLayer,
    totalBytes: bytesPerLayer * layers,
    unitBytes: unitBytesPerLayer * layers,
  };
}

/**
 * Inputs of the composite per-worker pool (docs/reference/pools-and-sizing.md §5.4), as the configurator passes them.
 */
export interface CompositePoolOptions {
  dims: KvHeadDims;
  /** Compress ratios of this worker's layers (the PP-local slice; `[0]` for the draft worker). */
  stageRatios: readonly number[];
  swaSize: number;
  c4Size: number;
  c128Size: number;
  c4StatePoolSize: number;
  c128StatePoolSize: number;
  pageSize: number;
  swaPageSize?: number;
  numReqSlots: number;
  ringSizeC4: number;
  ringSizeC128: number;
  onlineC128: boolean;
  onlineMtpMaxDraftTokens: number;
  stateDtypeBytes: number;
  indexerFp4?: boolean;
  platform?: "cuda" | "hip" | "npu";
}

export interface CompositePool {
  pools: PoolShape[];
  totalBytes: number;
  /** c4 logical size = c128Size · 32 (the indexer's token count, never shrunk by HiSparse). */
  c4LogicalSize: number;
  /** c128 state pool size after `max(given, slots·R128)` (or `slots` online). */
  c128StatePoolSize: number;
  layerCounts: { total: number; ratio0: number; ratio4: number; ratio128: number };
}

/** Counts layers per ratio; throws "Unsupported compression ratio: X" for anything but 0, 4, 128. */
export function countLayers(ratios: readonly number[]): {
  total: number;
  ratio0: number;
  ratio4: number;
  ratio128: number;
} {
  requireArray("compressRatios", ratios);
  const counts = { total: ratios.length, ratio0: 0, ratio4: 0, ratio128: 0 };
  ratios.forEach((ratio, i) => {
    if (ratio === 0) counts.ratio0++;
    else if (ratio === 4) counts.ratio4++;
    else if (ratio === 128) counts.ratio128++;
    else
      throw new MemoryPoolError(
        "INVALID_RATIO",
        `compressRatios[${i}]`,
        ratio,
        `Unsupported compression ratio: ${ratio} (the CUDA pool knows 0, 4 and 128)`,
        { allowed: [0, 4, 128] },
      );
  });
  return counts;
}

/**
 * `DeepSeekV4TokenToKVPool` on the separate-KV CUDA path (docs/reference/pools-and-sizing.md §5.4): SWA KV for every
 * layer, c4 KV + indexer + two c4 states per c4 layer, c128 KV + c128 state per c128 layer.
 */
export function compositePool(o: CompositePoolOptions): CompositePool {
  requireCompositeOptions(o);
  const swaPageSize = o.swaPageSize ?? o.pageSize;
  if (o.pageSize % swaPageSize !== 0) {
    throw new MemoryPoolError(
      "SWA_PAGE_SIZE",
      "pageSize",
      o.pageSize,
      `must be a multiple of swaPageSize ${swaPageSize}`,
      { swaPageSize },
    );
  }
  if ((o.platform ?? "cuda") !== "npu" && swaPageSize !== 256) {
    throw new MemoryPoolError(
      "PAGE_SIZE",
      "pageSize",
      swaPageSize,
      "In paged swa mode, page_size must be 256 (set --page-size 256)",
      { required: 256 },
      "V-P3",
    );
  }
  const counts = countLayers(o.stageRatios);
  const A = attentionHeadDim(o.dims);
  const c4LogicalSize = o.c128Size * 32;
  const c128StatePoolSize = o.onlineC128
    ? Math.max(o.c128StatePoolSize, o.numReqSlots)
    : Math.max(o.c128StatePoolSize, o.numReqSlots * o.ringSizeC128);
  const pools: PoolShape[] = [
    singleKvPool({ id: "swa-kv", size: o.swaSize, pageTokens: swaPageSize, layers: counts.total, dims: o.dims }),
  ];
  if (counts.ratio4 > 0) {
    const c4State = { size: o.c4StatePoolSize, ringSize: o.ringSizeC4, ratio: 4 as const, layers: counts.ratio4 };
    pools.push(
      singleKvPool({ id: "c4-kv", size: o.c4Size, pageTokens: o.pageSize / 4, layers: counts.ratio4, dims: o.dims }),
      indexerPool({
        id: "c4-indexer-k",
        size: c4LogicalSize,
        pageTokens: o.pageSize / 4,
        layers: counts.ratio4,
        indexerBytesPerToken: indexerBytesPerToken(o.dims.indexHeadDim, o.indexerFp4),
      }),
      compressStatePool({ id: "c4-attention-state", ...c4State, headDim: A, stateDtypeBytes: o.stateDtypeBytes }),
      compressStatePool({
        id: "c4-indexer-state",
        ...c4State,
        headDim: o.dims.indexHeadDim,
        stateDtypeBytes: o.stateDtypeBytes,
      }),
    );
  }
  if (counts.ratio128 > 0) {
    pools.push(
      singleKvPool({
        id: "c128-kv",
        size: o.c128Size,
        pageTokens: o.pageSize / 128,
        layers: counts.ratio128,
        dims: o.dims,
      }),
      compressStatePool({
        id: o.onlineC128 ? "c128-online-state" : "c128-attention-state",
        size: c128StatePoolSize,
        ringSize: o.ringSizeC128,
        ratio: 128,
        headDim: A,
        online: o.onlineC128,
        onlineMtpMaxDraftTokens: o.onlineC128 ? o.onlineMtpMaxDraftTokens : 0,
        stateDtypeBytes: o.stateDtypeBytes,
        layers: counts.ratio128,
      }),
    );
  }
  return {
    pools,
    totalBytes: pools.reduce((s, p) => s + p.totalBytes, 0),
    c4LogicalSize,
    c128StatePoolSize,
    layerCounts: counts,
  };
}

const COMPOSITE_INTS = [
  "swaSize",
  "c4Size",
  "c128Size",
  "c4StatePoolSize",
  "c128StatePoolSize",
  "numReqSlots",
  "onlineMtpMaxDraftTokens",
] as const;

const COMPOSITE_KEYS = [
  ...COMPOSITE_INTS,
  "dims",
  "stageRatios",
  "pageSize",
  "swaPageSize",
  "ringSizeC4",
  "ringSizeC128",
  "onlineC128",
  "stateDtypeBytes",
  "indexerFp4",
  "platform",
];

function requireCompositeOptions(o: CompositePoolOptions): void {
  requireKnownKeys("options", o, COMPOSITE_KEYS);
  for (const key of COMPOSITE_INTS) requireInt(key, o[key], 0);
  requireInt("pageSize", o.pageSize, 1);
  optional("swaPageSize", o.swaPageSize, (f, v) => requireInt(f, v, 1));
  requireInt("ringSizeC4", o.ringSizeC4, 1);
  requireInt("ringSizeC128", o.ringSizeC128, 1);
  requireBoolean("onlineC128", o.onlineC128);
  optional("indexerFp4", o.indexerFp4, requireBoolean);
  optional("platform", o.platform, (f, v) => requireOneOf(f, v, PLATFORMS));
}

export const PLATFORMS = ["cuda", "hip", "npu"] as const;

/**
 * The draft (MTP) worker's pool (docs/reference/pools-and-sizing.md §5.5): one SWA layer of the same S tokens, nothing
 * else.
 */
export function draftWorkerPool(o: { dims: KvHeadDims; swaSize: number; pageSize: number }): PoolShape {
  return singleKvPool({ id: "draft-swa-kv", size: o.swaSize, pageTokens: o.pageSize, layers: 1, dims: o.dims });
}
