/**
 * How vLLM's hybrid KV cache manager groups DeepSeek-V4's layer specs (docs/reference/vllm-kv-cache.md §3): every
 * full MLA spec in one group; sliding specs bucketed by (block size, window); a common layer-tuple count picked with
 * the least padding; each sliding bucket split into strided subgroups of at most that many tuples; one packed block
 * whose stride is the largest group's sum of pages.
 */
import type { VllmCacheKind, VllmLayerSpec } from "./layer-specs.js";

export interface VllmKvGroup {
  /** "full": the one group of every full MLA spec; "sliding": a (split) bucket of sliding specs. */
  type: "full" | "sliding";
  blockSizeTokens: number;
  slidingWindowTokens: number | null;
  /** Layer specs in this group, in registration order of their tuples. */
  specs: VllmLayerSpec[];
  /** Layer tuples in the group (layers of the bucket's most common page size). */
  layerTuples: number;
  /** Sum of the pages of the group's specs: the bytes one block of this group occupies. */
  bytesPerBlock: number;
  /** Cache kinds in the group, for reports. */
  kinds: VllmCacheKind[];
}

export interface VllmGrouping {
  groups: VllmKvGroup[];
  /** The tuple count every group is padded to (vLLM's approximate gcd). */
  layerTuples: number;
  /** Bytes of one block of the shared pool: the largest group's bytesPerBlock. */
  blockStrideBytes: number;
}

/** The d in [lowerBound, max(values)] with the least Σ upward padding of values to multiples of d; ties: larger d. */
export function approximateGcd(values: readonly number[], lowerBound: number): number {
  const low = Math.max(1, lowerBound);
  const high = Math.max(...values);
  if (low > high) return low;
  let best = low;
  let bestPad = Number.POSITIVE_INFINITY;
  for (let d = low; d <= high; d++) {
    const pad = values.reduce((sum, x) => sum + ((d - (x % d)) % d), 0);
    if (pad < bestPad || (pad === bestPad && d > best)) {
      best = d;
      bestPad = pad;
    }
  }
  return best;
}

/** Specs grouped by page size, in first-seen order (vLLM's tuples zip one layer of each page size). */
function byPageSize(specs: readonly VllmLayerSpec[]): VllmLayerSpec[][] {
  const map = new Map<number, VllmLayerSpec[]>();
  for (const s of specs) map.set(s.pageBytes, [...(map.get(s.pageBytes) ?? []), s]);
  return [...map.values()];
}

/** Layers of the most common page size in a bucket. */
function tupleCount(specs: readonly VllmLayerSpec[]): number {
  return Math.max(...byPageSize(specs).map((l) => l.length));
}

function group(type: "full" | "sliding", specs: VllmLayerSpec[], layerTuples: number): VllmKvGroup {
  const first = specs[0] as VllmLayerSpec;
  return {
    type,
    blockSizeTokens: first.blockSizeTokens,
    slidingWindowTokens: first.slidingWindowTokens,
    specs,
    layerTuples,
    bytesPerBlock: specs.reduce((sum, s) => sum + s.pageBytes, 0),
    kinds: [...new Set(specs.map((s) => s.kind))],
  };
}

/** Splits a sliding bucket into cdiv(tuples, n) groups; group i takes tuples i, i + k, i + 2k, … */
function splitBucket(specs: VllmLayerSpec[], n: number): VllmKvGroup[] {
  const sizes = byPageSize(specs);
  const tuples = Math.min(...sizes.map((l) => l.length));
  const k = Math.ceil(tuples / n);
  const out: VllmKvGroup[] = [];
  for (let i = 0; i < k; i++) {
    const members: VllmLayerSpec[] = [];
    for (let t = i; t < tuples; t += k) for (const list of sizes) members.push(list[t] as VllmLayerSpec);
    out.push(group("sliding", members, Math.ceil((tuples - i) / k)));
  }
  return out;
}

/** vLLM's DeepSeek-V4 grouping of `specs` (the packed layout: one block-ID space for every group). */
export function vllmKvGroups(specs: readonly VllmLayerSpec[]): VllmGrouping {
  const full = specs.filter((s) => s.type === "full");
  const buckets = new Map<string, VllmLayerSpec[]>();
  for (const s of specs) {
    if (s.type !== "sliding") continue;
    const key = `${s.blockSizeTokens}/${s.slidingWindowTokens}`;
    buckets.set(key, [...(buckets.get(key) ?? []), s]);
  }
  const mlaTuples = tupleCount(full);
  const values = [mlaTuples, ...[...buckets.values()].map(tupleCount)];
  const n = approximateGcd(values, mlaTuples);
  const groups = [group("full", full, mlaTuples), ...[...buckets.values()].flatMap((b) => splitBucket(b, n))];
  return { groups, layerTuples: n, blockStrideBytes: Math.max(...groups.map((g) => g.bytesPerBlock)) };
}
