// Values a careless or hostile caller passes where a number, an array or an object is expected: the fuzz tests
// build every input by putting these into a valid one (test/fuzz/*.test.ts).
import fc from "fast-check";

/** One value of any shape that has broken a check before: wrong types, non-finite, past int32, array-likes. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -1,
    0,
    0.5,
    2 ** 31,
    2 ** 32,
    2 ** 53,
    1e30,
    -1e30,
    "",
    "8",
    "0x10",
    "None",
    true,
    { length: 1e9 },
    { length: -1 },
    { identity: null },
    [],
    [Number.NaN],
    ["1"],
    {},
  ),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.integer({ min: -4, max: 600 }),
  fc.double(),
  fc.string({ maxLength: 12 }),
  fc.array(fc.integer({ min: -3, max: 3000 }), { maxLength: 6 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 3 }),
);

/**
 * `base` with up to three of its keys (or a new key) replaced by hostile values; keys in `tame` keep a valid value
 * small (a step count of 2^31 is valid but runs for hours: the fuzz looks for crashes, not for long runs).
 */
export function mutated<T extends Record<string, unknown>>(
  base: T,
  tame: Readonly<Record<string, number>> = {},
): fc.Arbitrary<Record<string, unknown>> {
  const keys = [...Object.keys(base), "bogusKey"];
  return fc.array(fc.tuple(fc.constantFrom(...keys), hostileValue), { minLength: 0, maxLength: 3 }).map((edits) => {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of edits) {
      const cap = tame[k];
      out[k] = cap !== undefined && typeof v === "number" && Number.isInteger(v) && v > cap ? cap : v;
    }
    return out;
  });
}

/** How long each fuzz property may run (ms): DSV4KV_FUZZ_MS scales them; the seed is DSV4KV_FUZZ_SEED or fixed. */
export const FUZZ_MS = Number(process.env.DSV4KV_FUZZ_MS ?? 2000);
export const FUZZ_SEED = Number(process.env.DSV4KV_FUZZ_SEED ?? 20261202);

/** fast-check parameters of one property: seeded, stopped at its time budget (not a failure), many runs at most. */
export function fuzzParams(ms = FUZZ_MS): fc.Parameters<unknown> {
  return { seed: FUZZ_SEED, numRuns: 100_000, interruptAfterTimeLimit: ms, markInterruptAsFailure: false };
}
