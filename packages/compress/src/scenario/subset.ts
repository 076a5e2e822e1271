import type { SeededRandom } from "@dsv4-kv/planner/internal";

/**
 * A random non-empty subset of `items` (each kept with probability 3/4, one drawn when none is), in random order: a
 * batch's order is the scheduler's, not the slots'. The draws are the scenarios' (their seeds reproduce runs).
 */
export function randomSubset<T>(rng: SeededRandom, items: readonly T[]): T[] {
  const out = items.filter(() => rng.next() < 0.75);
  if (out.length === 0) out.push(items[rng.int(0, items.length - 1)]!);
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
