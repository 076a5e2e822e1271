/**
 * vLLM's start-up check that one request of `max_model_len` fits (docs/reference/vllm-kv-cache.md §7). For
 * DeepSeek-V4 it prices a request as tuples × (the sum of the distinct full-MLA page sizes) × blocks per request, which
 * is more than the packed stride; when that exceeds the available memory vLLM refuses to start and prints the largest
 * `max_model_len` that would pass (a binary search over the same price).
 */
import { blocksPerRequest, type VllmRequestShape } from "./blocks-per-request.js";
import type { VllmGrouping } from "./groups.js";

/**
 * Bytes the check charges per block: the most tuples any group holds × the bytes of one full-MLA layer tuple (one
 * page of each distinct full-group page size: 37,440 + 8,640 + 1,728 for Flash).
 */
export function admissionBytesPerBlock(grouping: VllmGrouping): number {
  const full = grouping.groups.find((g) => g.type === "full");
  const tupleBytes = [...new Set((full?.specs ?? []).map((s) => s.pageBytes))].reduce((a, b) => a + b, 0);
  return Math.max(...grouping.groups.map((g) => g.layerTuples)) * tupleBytes;
}

export function admissionBytesNeeded(grouping: VllmGrouping, shape: VllmRequestShape): number {
  return admissionBytesPerBlock(grouping) * blocksPerRequest(grouping.groups, shape).total;
}

/** The largest max_model_len in [1, shape.maxModelLen] whose request passes; 0 when none does. */
export function estimatedMaxModelLen(grouping: VllmGrouping, shape: VllmRequestShape, availableBytes: number): number {
  const fits = (len: number) => admissionBytesNeeded(grouping, { ...shape, maxModelLen: len }) <= availableBytes;
  let lo = 0;
  let hi = shape.maxModelLen;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
