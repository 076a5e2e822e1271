// Test helpers for this package and the packages above it; not for production code.
import type { PrefillPlanOptions } from "./prefill.js";

/**
 * Worked example 8: a CUDA-graph bucket tail on the device path (c4 R8, extends [1, 2] in a 4-row bucket). The
 * planner's worked examples and the CLI's `plan` tests read the same case.
 */
export const CUDA_GRAPH_TAIL_OPTIONS: Readonly<PrefillPlanOptions> = Object.freeze({
  compressRatio: 4,
  ringSize: 8,
  swaPageSize: 256,
  seqLens: [1, 3],
  extendLens: [1, 2],
  numQTokens: 4,
  path: "device",
});

/** Upstream's ragged-extend regression batches (c128 R128, prefix 0, device path): extends per request. */
export const RAGGED_EXTEND_PATTERNS: readonly (readonly number[])[] = Object.freeze([
  [...Array<number>(72).fill(4), ...Array<number>(24).fill(3)],
  [...Array<number>(104).fill(3), ...Array<number>(24).fill(2)],
  Array<number>(96).fill(4),
  [...Array<number>(30).fill(4), 3],
  [...Array<number>(1023).fill(4), 3],
  [...Array<number>(31).fill(4), 0],
]);

/** Options of one ragged batch of `RAGGED_EXTEND_PATTERNS` (every request starts at position 0). */
export function raggedExtendOptions(extendLens: readonly number[]): PrefillPlanOptions {
  return {
    compressRatio: 128,
    ringSize: 128,
    swaPageSize: 256,
    seqLens: [...extendLens],
    extendLens: [...extendLens],
    numQTokens: extendLens.reduce((a, b) => a + b, 0),
    path: "device",
  };
}

/**
 * The seed of a seeded test: `DSV4KV_TEST_SEED` when set (a decimal integer), else `fallback` (also where there is
 * no `process`, as in a browser: this package must not need Node).
 */
export function testSeed(fallback: number): number {
  const raw = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.DSV4KV_TEST_SEED;
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?\d+$/.test(raw)) throw new Error(`DSV4KV_TEST_SEED must be a decimal integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** `batch` deterministic ragged extend lengths (each >= 1) summing to `total`, from a linear congruential `seed`. */
export function raggedExtendLens(batch: number, total: number, seed: number): number[] {
  let s = seed >>> 0;
  const weights = Array.from({ length: batch }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s % 1000) + 1;
  });
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const ext = weights.map((x) => Math.max(1, Math.floor((x * total) / weightSum)));
  let diff = total - ext.reduce((a, b) => a + b, 0);
  for (let i = 0; diff !== 0; i = (i + 1) % batch) {
    if (diff > 0) {
      ext[i]! += 1;
      diff--;
    } else if (ext[i]! > 1) {
      ext[i]! -= 1;
      diff++;
    }
  }
  return ext;
}
