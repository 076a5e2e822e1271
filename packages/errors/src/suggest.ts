/** "Did you mean" for unknown keys and flags: the known name closest in edit distance, if it is close. */
export interface Suggestion {
  readonly name: string;
  readonly distance: number;
}

/** The closest of `known` to `given` (case and `-`/`_` insensitive), or null when none is within a third of it. */
export function closestMatch(given: string, known: Iterable<string>): string | null {
  const target = normalise(given);
  let best: Suggestion | null = null;
  for (const name of known) {
    const distance = editDistance(target, normalise(name));
    if (best === null || distance < best.distance) best = { name, distance };
  }
  if (best === null) return null;
  return best.distance <= Math.max(2, Math.floor(target.length / 3)) ? best.name : null;
}

function normalise(name: string): string {
  return name.replace(/^-+/, "").replace(/[-_]/g, "").toLowerCase();
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
