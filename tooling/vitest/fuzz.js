// Shared by the fuzz tests (packages/cli/test/fuzz/, packages/memory-pool/test/fuzz.test.ts): hostile values,
// inputs mutated from valid ones, seeded time-bounded fast-check parameters, and the "typed error or a result" check.
import fc from "fast-check";
import { expect } from "vitest";

/** One value of any shape that has broken a check before: wrong types, non-finite, past int32, array-likes. */
export const hostileValue = fc.oneof(
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
export function mutated(base, tame = {}) {
  const keys = [...Object.keys(base), "bogusKey"];
  return fc.array(fc.tuple(fc.constantFrom(...keys), hostileValue), { minLength: 0, maxLength: 3 }).map((edits) => {
    const out = { ...base };
    for (const [k, v] of edits) {
      const cap = tame[k];
      out[k] = cap !== undefined && typeof v === "number" && Number.isInteger(v) && v > cap ? cap : v;
    }
    return out;
  });
}

/** Per property: DSV4KV_FUZZ_MS (default 2000) ms; the seed is DSV4KV_FUZZ_SEED or fixed, so a run is repeatable. */
export const FUZZ_MS = Number(process.env.DSV4KV_FUZZ_MS ?? 2000);
export const FUZZ_SEED = Number(process.env.DSV4KV_FUZZ_SEED ?? 20261202);

/** fast-check parameters of one property: seeded, stopped at its time budget (not a failure), many runs at most. */
export function fuzzParams(ms = FUZZ_MS) {
  return { seed: FUZZ_SEED, numRuns: 100_000, interruptAfterTimeLimit: ms, markInterruptAsFailure: false };
}

/** Runs `fn`; a throw must pass `isTyped` (a dsv4-kv error's isInstance) and carry a string code and a message. */
export function typedOrOk(fn, isTyped) {
  try {
    fn();
  } catch (e) {
    if (!isTyped(e)) throw new Error(`untyped ${String(e)}`, { cause: e });
    expect(typeof e.code).toBe("string");
    expect(e.message.length).toBeGreaterThan(0);
  }
}
