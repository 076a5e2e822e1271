/**
 * Blocks one request of `max_model_len` tokens takes from the shared pool (docs/reference/vllm-kv-cache.md §4): a full
 * group needs a block per `block_size` tokens of context; a sliding group holds the window, the tokens in flight and
 * any retained draft tokens, plus one block because the window need not start on a block boundary.
 */
import type { VllmKvGroup } from "./groups.js";

export interface VllmRequestShape {
  maxModelLen: number;
  /** Tokens scheduled but not yet settled: max_concurrent_batches × max_num_batched_tokens. */
  inFlightTokens: number;
  /** Trailing tokens sliding groups keep for multi-module MTP (K − 1, else 0). */
  extraRetainedTokens: number;
}

export function groupBlocksPerRequest(group: VllmKvGroup, shape: VllmRequestShape): number {
  if (group.type === "full") return Math.ceil(shape.maxModelLen / group.blockSizeTokens);
  const window = group.slidingWindowTokens as number;
  const held = Math.min(window - 1 + shape.extraRetainedTokens + shape.inFlightTokens, shape.maxModelLen);
  return Math.ceil(held / group.blockSizeTokens) + 1;
}

/** Blocks per request, per group and in all (every group draws from the one pool). */
export function blocksPerRequest(
  groups: readonly VllmKvGroup[],
  shape: VllmRequestShape,
): {
  perGroup: number[];
  total: number;
} {
  const perGroup = groups.map((g) => groupBlocksPerRequest(g, shape));
  return { perGroup, total: perGroup.reduce((a, b) => a + b, 0) };
}
