import { thrownError } from "@dsv4-kv/errors/testing";
import { describe, expect, it } from "vitest";
import {
  MemoryPoolCapacityErrors,
  MemoryPoolError,
  compressStatePool,
  compressStateRingSize,
  indexerBytesPerToken,
  indexerPool,
  kvBudgetFromGpu,
  kvBytesPerToken,
  ringDraftViolations,
  sizeKvCache,
  swaLocToC4StateRow,
  swaRingSize,
} from "../src/index.js";
import { stageFacts } from "../src/internal.js";
import { FLASH, SCENARIO_B_BYTES, flashSpec } from "./fixtures.js";

/** The MemoryPoolError `run` throws (the test fails on anything else). */
const thrown = (run: () => unknown): MemoryPoolError => thrownError(run, MemoryPoolError);

const loose = <T>(value: unknown) => value as T;

describe("the error model", () => {
  it("MemoryPoolError is a FieldError: code, field, value, rule, params; message from formatMessage", () => {
    const e = thrown(() => swaLocToC4StateRow(1.5, 256, 16));
    expect(e).toMatchObject({ name: "MemoryPoolError", code: "INVALID_ARGUMENT", field: "swaLoc", value: 1.5 });
    expect(e.message).toBe(`swaLoc = 1.5: ${e.rule}`);
    expect(e.toJSON()).toMatchObject({ code: "INVALID_ARGUMENT", field: "swaLoc" });
  });
  it("capacity errors together: a Dsv4KvError with code CAPACITY and params.errors", () => {
    let error: unknown;
    try {
      sizeKvCache(flashSpec({ mode: "sglang-gen-b" }), 1e9);
    } catch (e) {
      error = e;
    }
    expect(MemoryPoolCapacityErrors.isInstance(error)).toBe(true);
    expect(MemoryPoolError.isInstance(error)).toBe(false);
    const capacity = error as MemoryPoolCapacityErrors;
    expect(capacity.code).toBe("CAPACITY");
    expect((capacity.params.errors as MemoryPoolError[]).map((e) => e.code)).toEqual([
      "SWA_FLOOR",
      "NOT_ENOUGH_MEMORY",
    ]);
  });
});

describe("numbers: no strings, NaN, Infinity, fractions or negatives", () => {
  it("a string is refused as INVALID_TYPE, never converted", () => {
    expect(thrown(() => swaRingSize(loose<number>("128"), false))).toMatchObject({
      code: "INVALID_TYPE",
      field: "window",
    });
  });
  it("NaN, Infinity and fractions are INVALID_ARGUMENT", () => {
    expect(thrown(() => swaLocToC4StateRow(Number.NaN, 256, 16)).field).toBe("swaLoc");
    expect(thrown(() => swaLocToC4StateRow(3, 256, Number.POSITIVE_INFINITY)).field).toBe("ringSize");
    expect(thrown(() => swaLocToC4StateRow(3, 256.5, 16)).field).toBe("swaPageSize");
  });
  it("a budget that is negative or not an integer is refused", () => {
    expect(thrown(() => sizeKvCache(flashSpec(), -1)).field).toBe("availableBytes");
    expect(thrown(() => sizeKvCache(flashSpec(), 1.5e9 + 0.5)).field).toBe("availableBytes");
  });
  it("an indexer page of NaN bytes is refused (it used to size NaN bytes)", () => {
    const e = thrown(() => indexerPool({ size: 64, pageTokens: 64, layers: 1, indexerBytesPerToken: Number.NaN }));
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT", field: "indexerBytesPerToken" });
  });
  it("head dims that give fractional bytes are KV_LAYOUT errors", () => {
    expect(thrown(() => indexerBytesPerToken(100))).toMatchObject({ code: "KV_LAYOUT", field: "indexHeadDim" });
    expect(thrown(() => kvBytesPerToken({ ...FLASH, qkNopeHeadDim: 100 }))).toMatchObject({
      code: "KV_LAYOUT",
      field: "qkNopeHeadDim",
    });
  });
});

describe("booleans, enums and option keys", () => {
  it('isSpeculative "false" is refused (a string is truthy: it used to give the speculative ring)', () => {
    const e = thrown(() => compressStateRingSize(4, loose({ isSpeculative: "false" })));
    expect(e).toMatchObject({ code: "INVALID_TYPE", field: "isSpeculative", value: "false" });
  });
  it("an unknown option key is refused with a suggestion", () => {
    const e = thrown(() => compressStateRingSize(128, loose({ isSpeculative: true, onlineC128MTP: true })));
    expect(e).toMatchObject({ code: "UNKNOWN_KEY", field: "options.onlineC128MTP" });
    expect(e.params.suggestion).toBe("onlineC128Mtp");
    expect(e.message).toMatch(/did you mean "onlineC128Mtp"/);
  });
  it("an unknown sizing key is refused (a misspelt maxRunningRequests used to be ignored)", () => {
    const e = thrown(() => sizeKvCache(loose({ ...flashSpec(), maxRunningRequest: 8 }), SCENARIO_B_BYTES));
    expect(e).toMatchObject({ code: "UNKNOWN_KEY", field: "config.maxRunningRequest" });
    expect(e.params.suggestion).toBe("maxRunningRequests");
  });
  it("an enum outside its set is refused", () => {
    expect(thrown(() => sizeKvCache(loose(flashSpec({ mode: loose("fast") })), SCENARIO_B_BYTES)).field).toBe("mode");
    expect(thrown(() => sizeKvCache(flashSpec({ stateDtypeBytes: loose(3) }), SCENARIO_B_BYTES)).field).toBe(
      "stateDtypeBytes",
    );
  });
  it("a key that does not apply to the case is NOT_APPLICABLE", () => {
    const options = { size: 10, ringSize: 128, ratio: 128 as const, headDim: 512, stateDtypeBytes: 4, layers: 1 };
    const e = thrown(() => compressStatePool({ ...options, onlineMtpMaxDraftTokens: 4 }));
    expect(e).toMatchObject({ code: "NOT_APPLICABLE", field: "onlineMtpMaxDraftTokens" });
  });
  it("ringDraftViolations refuses a string for onlineC128", () => {
    const stage = stageFacts(flashSpec())[0]!;
    expect(thrown(() => ringDraftViolations(stage, 4, loose("false"))).field).toBe("onlineC128");
  });
});

describe("sizing inputs that made no sense", () => {
  it("an infinite HiSparse ratio is refused (it used to size an empty c4 pool)", () => {
    const e = thrown(() => sizeKvCache(flashSpec({ hisparseRatio: Number.POSITIVE_INFINITY }), SCENARIO_B_BYTES));
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT", field: "hisparseRatio" });
  });
  it("fewer compress ratios than layers is refused (the missing layers used to be dropped)", () => {
    const model = { ...FLASH, compressRatios: [0, 4, 128] };
    expect(thrown(() => sizeKvCache(flashSpec({ model }), SCENARIO_B_BYTES))).toMatchObject({
      code: "KV_LAYOUT",
      field: "compressRatios",
    });
  });
  it("more free memory after load than before (negative weights) is refused", () => {
    const e = thrown(() => kvBudgetFromGpu({ preFreeGiB: 139, postFreeGiB: 239, memFractionStatic: 0.85 }));
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT", field: "postFreeGiB", value: 239, params: { max: 139 } });
  });
  it("memFractionStatic outside (0, 1] or NaN is refused", () => {
    for (const memFractionStatic of [0, 1.5, Number.NaN]) {
      const e = thrown(() => kvBudgetFromGpu({ preFreeGiB: 139, postFreeGiB: 118, memFractionStatic }));
      expect(e.field).toBe("memFractionStatic");
    }
  });
});

describe("pools carry a typed id; sizing prices by id", () => {
  it("every composite pool has an id and its display name", () => {
    const r = sizeKvCache(flashSpec({ mode: "sglang-gen-b" }), SCENARIO_B_BYTES);
    expect(r.stages[0]!.pools.map((p) => p.id)).toEqual([
      "swa-kv",
      "c4-kv",
      "c4-indexer-k",
      "c4-attention-state",
      "c4-indexer-state",
      "c128-kv",
      "c128-attention-state",
      "draft-swa-kv",
    ]);
    const swa = r.stages[0]!.pools[0]!;
    expect(swa.name).toBe("SWA KV");
    expect(swa.estimatedBytes).toBe(r.sizes.maxTotalNumTokens * r.bytesPerFullToken.swaKv);
  });
});
