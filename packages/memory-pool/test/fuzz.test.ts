// memory-pool's public functions under hostile inputs either return or throw a dsv4-kv
// error with a code. Seeded and bounded in time (@dsv4-kv/vitest-preset/fuzz: DSV4KV_FUZZ_SEED, DSV4KV_FUZZ_MS).
// The CLI's fuzz tests (packages/cli/test/fuzz/) cover the other packages.
import { Dsv4KvError } from "@dsv4-kv/errors";
import { fuzzParams, hostileValue as hostile, mutated, typedOrOk as typedOrOkBy } from "@dsv4-kv/vitest-preset/fuzz";
import fc from "fast-check";
import { describe, test } from "vitest";
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

const typedOrOk = (fn: () => unknown) => typedOrOkBy(fn, (e): e is Dsv4KvError => Dsv4KvError.isInstance(e));

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
      fuzzParams(),
    );
  });
  test("sizeKvCache, compressStateRingSize, kvBudgetFromGpu", () => {
    const spec = flashSpec() as unknown as Record<string, unknown>;
    const rings = { isSpeculative: true, maxDraftTokens: 4, pageSize: 256, onlineC128: false };
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
      fuzzParams(),
    );
  });
});
