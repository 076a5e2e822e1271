/**
 * The KV cache spec vLLM registers for every DeepSeek-V4 layer on the fp8_ds_mla path
 * (docs/reference/vllm-kv-cache.md §2): one sliding SWA cache per layer, and per compressed layer its main KV, its
 * compressor state and (c4) the indexer key and the indexer's compressor state. Byte counts come from @dsv4-kv/memory-pool where they are the same
 * bytes SGLang stores (584 B entries, 576 B page alignment, 132/68 B indexer keys, fp32 state rows).
 */
import {
  attentionHeadDim,
  indexerBytesPerToken,
  kvBytesPerToken,
  kvPageAlignBytes,
  offlineStateRowBytes,
} from "@dsv4-kv/memory-pool";

/** What one cache holds: the vLLM object that registers it. */
export type VllmCacheKind =
  | "swa"
  | "c4-main"
  | "c128-main"
  | "c4-indexer"
  | "c4-attn-state"
  | "c4-indexer-state"
  | "c128-state";

export interface VllmLayerSpec {
  /** Layer index (0-based; draft layers continue after the target's). */
  layer: number;
  kind: VllmCacheKind;
  /** "full": MLAAttentionSpec (whole context); "sliding": SlidingWindowMLASpec. */
  type: "full" | "sliding";
  /** Logical tokens per block. */
  blockSizeTokens: number;
  /** Sliding window in tokens (sliding specs only, else null). */
  slidingWindowTokens: number | null;
  /** Stored entries per block: blockSizeTokens / compressRatio. */
  storedEntriesPerBlock: number;
  /** Bytes of one stored entry. */
  entryBytes: number;
  /** Page bytes before padding: stored entries × entry bytes (one KV head). */
  rawPageBytes: number;
  /** Page bytes rounded up to the alignment (576 on fp8_ds_mla). */
  pageBytes: number;
}

/** The model facts the specs need (a ModelPreset has them all). */
export interface VllmSpecModel {
  numHiddenLayers: number;
  qkNopeHeadDim: number;
  qkRopeHeadDim: number;
  indexHeadDim: number;
  slidingWindow: number;
  compressRatios: readonly number[];
}

export interface VllmSpecOptions {
  /** Block size of the MLA group (`--block-size`, 256 for DSV4). */
  blockSizeTokens: number;
  /** `--attention-config.use_fp4_indexer_cache`: 68 B indexer keys instead of 132. */
  fp4IndexerCache: boolean;
  /** Draft layers the speculative method registers in the target's cache (SWA only, ratio forced to 1). */
  draftLayers: number;
}

/** vLLM hard-codes these block sizes: the SWA cache and the compressor states do not follow `--block-size`. */
export const SWA_BLOCK_TOKENS = 64;
export const STATE_BLOCK_TOKENS: Readonly<Record<4 | 128, number>> = { 4: 4, 128: 8 };
/** fp32 compressor state. */
const STATE_DTYPE_BYTES = 4;

function roundUp(value: number, multiple: number): number {
  return Math.ceil(value / multiple) * multiple;
}

function spec(
  layer: number,
  kind: VllmCacheKind,
  blockSizeTokens: number,
  ratio: number,
  entryBytes: number,
  slidingWindowTokens: number | null,
  alignBytes: number,
): VllmLayerSpec {
  const storedEntriesPerBlock = blockSizeTokens / ratio;
  const rawPageBytes = storedEntriesPerBlock * entryBytes;
  const type = slidingWindowTokens === null ? "full" : "sliding";
  const pageBytes = roundUp(rawPageBytes, alignBytes);
  return {
    layer,
    kind,
    type,
    blockSizeTokens,
    slidingWindowTokens,
    storedEntriesPerBlock,
    entryBytes,
    rawPageBytes,
    pageBytes,
  };
}

/** The specs one layer of compress ratio `ratio` (1, 4 or 128) registers. */
function layerSpecs(model: VllmSpecModel, layer: number, ratio: number, options: VllmSpecOptions): VllmLayerSpec[] {
  const dims = {
    qkNopeHeadDim: model.qkNopeHeadDim,
    qkRopeHeadDim: model.qkRopeHeadDim,
    indexHeadDim: model.indexHeadDim,
  };
  const entry = kvBytesPerToken(dims);
  const align = kvPageAlignBytes(dims);
  const out = [spec(layer, "swa", SWA_BLOCK_TOKENS, 1, entry, model.slidingWindow, align)];
  if (ratio === 1) return out;
  const b = options.blockSizeTokens;
  const attnDim = attentionHeadDim(dims);
  if (ratio === 128) {
    out.push(spec(layer, "c128-main", b, 128, entry, null, align));
    // c128 state: no overlap, window = ratio.
    const row = offlineStateRowBytes(attnDim, false, STATE_DTYPE_BYTES);
    out.push(spec(layer, "c128-state", STATE_BLOCK_TOKENS[128], 1, row, 128, align));
    return out;
  }
  const indexer = indexerBytesPerToken(model.indexHeadDim, options.fp4IndexerCache);
  out.push(spec(layer, "c4-main", b, 4, entry, null, align));
  out.push(spec(layer, "c4-indexer", b, 4, indexer, null, align));
  // c4 states overlap two windows: window = 2 × ratio = 8 tokens.
  const attnRow = offlineStateRowBytes(attnDim, true, STATE_DTYPE_BYTES);
  const idxRow = offlineStateRowBytes(model.indexHeadDim, true, STATE_DTYPE_BYTES);
  out.push(spec(layer, "c4-attn-state", STATE_BLOCK_TOKENS[4], 1, attnRow, 8, align));
  out.push(spec(layer, "c4-indexer-state", STATE_BLOCK_TOKENS[4], 1, idxRow, 8, align));
  return out;
}

/**
 * Every spec of the target's layers (ratio 0 is clamped to 1) followed by the draft's SWA-only layers. The checkpoint's
 * trailing MTP entries of `compress_ratios` are not target layers: only `draftLayers` of them register caches.
 */
export function vllmLayerSpecs(model: VllmSpecModel, options: VllmSpecOptions): VllmLayerSpec[] {
  const out: VllmLayerSpec[] = [];
  for (let layer = 0; layer < model.numHiddenLayers; layer++) {
    out.push(...layerSpecs(model, layer, Math.max(1, model.compressRatios[layer] ?? 0), options));
  }
  for (let d = 0; d < options.draftLayers; d++) {
    out.push(...layerSpecs(model, model.numHiddenLayers + d, 1, options));
  }
  return out;
}
