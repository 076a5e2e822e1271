/**
 * Byte constants of the DSV4 pools (docs/reference/pools-and-sizing.md §3). Every value is derived from the model's
 * head dims so a custom model gets the right numbers; the DeepSeek-V4 values are in the comments and asserted by the
 * tests.
 */
import { requireStateDtypeBytes } from "./banks.js";
import { MemoryPoolError, requireBoolean, requireInt, requireObject } from "./errors.js";

/** The head dims that fix every per-token and per-row byte count. */
export interface KvHeadDims {
  /** qk_nope_head_dim = head_dim - qk_rope_head_dim (448). */
  qkNopeHeadDim: number;
  /** qk_rope_head_dim (64). */
  qkRopeHeadDim: number;
  /** index_head_dim (128). */
  indexHeadDim: number;
}

/**
 * Packed FlashMLA KV bytes per token: nope in fp8 (1 B each), rope in bf16 (2 B each), one fp8 scale byte per 64
 * nope values, one pad byte. 448 + 128 + 7 + 1 = 584 for DSV4 (the pool asserts 584).
 */
export function kvBytesPerToken(dims: KvHeadDims): number {
  requireHeadDims(dims);
  if (dims.qkNopeHeadDim % 64 !== 0) {
    throw new MemoryPoolError(
      "KV_LAYOUT",
      "qkNopeHeadDim",
      dims.qkNopeHeadDim,
      "must be a multiple of 64 (one fp8 scale byte per 64 nope values)",
      { multipleOf: 64 },
    );
  }
  return dims.qkNopeHeadDim + 2 * dims.qkRopeHeadDim + dims.qkNopeHeadDim / 64 + 1;
}

/** The configurator's KV estimate `D_nope + 2·D_rope + 8` (584 for DSV4; Gen B prices KV with this). */
export function configuratorKvBytesPerToken(dims: KvHeadDims): number {
  requireHeadDims(dims);
  return dims.qkNopeHeadDim + 2 * dims.qkRopeHeadDim + 8;
}

/** A KV page is padded to a multiple of one token's payload (448 fp8 nope + 128 B bf16 rope = 576 B). */
export function kvPageAlignBytes(dims: KvHeadDims): number {
  requireHeadDims(dims);
  return dims.qkNopeHeadDim + 2 * dims.qkRopeHeadDim;
}

/** Indexer key bytes per token: fp8 key + one fp32 scale per 128 values (132), or FP4 `I/2 + I/32` (68, HIP only). */
export function indexerBytesPerToken(indexHeadDim: number, fp4 = false): number {
  requireInt("indexHeadDim", indexHeadDim, 1);
  requireBoolean("fp4", fp4);
  // fp8: one fp32 scale per 128 values; FP4: two values a byte and one scale byte per 32.
  const multipleOf = fp4 ? 32 : 128;
  if (indexHeadDim % multipleOf !== 0) {
    throw new MemoryPoolError(
      "KV_LAYOUT",
      "indexHeadDim",
      indexHeadDim,
      `must be a multiple of ${multipleOf} for the ${fp4 ? "FP4" : "FP8"} indexer (whole scale groups)`,
      { multipleOf },
    );
  }
  return fp4 ? indexHeadDim / 2 + indexHeadDim / 32 : indexHeadDim + (indexHeadDim / 128) * 4;
}

/** Attention head dim of the compress states, A = D_nope + D_rope (512). */
export function attentionHeadDim(dims: KvHeadDims): number {
  requireHeadDims(dims);
  return dims.qkNopeHeadDim + dims.qkRopeHeadDim;
}

/**
 * Elements of one offline compress-state row: kv and score halves, each `(1 + overlap)·headDim` wide.
 * c4 overlaps two windows: c4 attention 4·A = 2048, c4 indexer 4·I = 512; c128 2·A = 1024.
 */
export function offlineStateRowElements(headDim: number, overlap: boolean): number {
  requireInt("headDim", headDim, 1);
  requireBoolean("overlap", overlap);
  return 2 * (1 + (overlap ? 1 : 0)) * headDim;
}

/** Bytes of one offline state row: 8192 (c4 attention), 2048 (c4 indexer), 4096 (c128) in fp32. */
export function offlineStateRowBytes(headDim: number, overlap: boolean, stateDtypeBytes: number): number {
  requireStateDtypeBytes(stateDtypeBytes);
  return offlineStateRowElements(headDim, overlap) * stateDtypeBytes;
}

/** `ceilDiv(a, b)` for non-negative integers. */
export function ceilDiv(numerator: number, denominator: number): number {
  requireInt("numerator", numerator, 0);
  requireInt("denominator", denominator, 1);
  return Math.floor((numerator + denominator - 1) / denominator);
}

export const GIB = 2 ** 30;

/** Every head dim is a positive integer (a model file's garbage would otherwise size fractional bytes). */
export function requireHeadDims(dims: KvHeadDims): void {
  requireObject("dims", dims);
  requireInt("qkNopeHeadDim", dims.qkNopeHeadDim, 1);
  requireInt("qkRopeHeadDim", dims.qkRopeHeadDim, 1);
  requireInt("indexHeadDim", dims.indexHeadDim, 1);
}
