// Issue 23 point 6, memory-pool's part: its public functions under hostile inputs either return or throw a dsv4-kv
// error with a code. Seeded (DSV4KV_FUZZ_SEED) and bounded in time (DSV4KV_FUZZ_MS per property, default 2000).
// The CLI's fuzz tests (packages/cli/test/fuzz/) cover the other packages.
import { Dsv4KvError } from "@dsv4-kv/errors";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  c128OfflineRequestRows,
  c128OfflineStateRow,
  c128OnlineStateRow,
  compressStateRingSize,
  fullLocToC4CompressedIndex,
  kvBudgetFromGpu,
  sizeKvCache,
  swaLocToC4StateRow,
} from "../src/index.js";
import { flashSpec } from "./fixtures.js";

const params = {
  seed: Number(process.env.DSV4KV_FUZZ_SEED ?? 20261202),
  numRuns: 100_000,
  interruptAfterTimeLimit: Number(process.env.DSV4KV_FUZZ_MS ?? 2000),
  markInterruptAsFailure: false,
};

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -1,
    0,
    0.5,
    2 ** 31,
    2 ** 53,
    1e30,
    "8",
    {},
    [],
  ),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.integer({ min: -4, max: 600 }),
  fc.double(),
  fc.string({ maxLength: 6 }),
);

function typedOrOk(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!Dsv4KvError.isInstance(e)) throw new Error(`untyped ${String(e)}`, { cause: e });
    expect(typeof e.code).toBe("string");
  }
}

function mutated(base: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = [...Object.keys(base), "bogusKey"];
  return fc
    .array(fc.tuple(fc.constantFrom(...keys), hostile), { maxLength: 3 })
    .map((edits) => Object.assign({ ...base }, Object.fromEntries(edits)));
}

describe("fuzz: memory-pool", () => {
  test("slot and row math", () => {
    fc.assert(
      fc.property(hostile, hostile, hostile, (a, b, c) => {
        typedOrOk(() => c128OfflineStateRow(a as never, b as never, c as never));
        typedOrOk(() => swaLocToC4StateRow(a as never, b as never, c as never));
        typedOrOk(() => c128OfflineRequestRows(a as never, b as never));
        typedOrOk(() => c128OnlineStateRow(a as never));
        typedOrOk(() => fullLocToC4CompressedIndex(a as never));
      }),
      params,
    );
  });
  test("sizeKvCache, compressStateRingSize, kvBudgetFromGpu", () => {
    const spec = flashSpec() as unknown as Record<string, unknown>;
    const rings = { isSpeculative: true, maxSpeculativeNumDraftTokens: 4, pageSize: 256, onlineC128: false };
    fc.assert(
      fc.property(
        mutated(spec),
        hostile,
        mutated(rings),
        mutated({ preFreeGiB: 139, postFreeGiB: 60, memFractionStatic: 0.85 }),
        (config, bytes, ringOptions, gpu) => {
          typedOrOk(() => sizeKvCache(config as never, (typeof bytes === "number" ? bytes : 2 ** 34) as never));
          typedOrOk(() => sizeKvCache(config as never, bytes as never));
          typedOrOk(() => compressStateRingSize(4, ringOptions as never));
          typedOrOk(() => compressStateRingSize(bytes as never, ringOptions as never));
          typedOrOk(() => kvBudgetFromGpu(gpu as never));
        },
      ),
      params,
    );
  });
});
