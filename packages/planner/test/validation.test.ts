// docs/reference/planner.md §5.2 validation, plus what upstream's device path leaves unchecked
// (docs/reference/planner.md §12.2): every rule refuses with a typed error naming the field, the value and the rule.
import { describe, expect, test } from "vitest";
import {
  CompressPlanTable,
  PlannerError,
  WritePlanTable,
  planDecode,
  planDecodeLegacy,
  planPrefill,
  planPrefillLegacy,
  type PrefillPlanOptions,
} from "../src/index.js";
import { normalizePrefillOptions } from "../src/internal.js";

const base: PrefillPlanOptions = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };

function refusal(fn: () => unknown): PlannerError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PlannerError);
    return err as PlannerError;
  }
  throw new Error("expected a PlannerError");
}

const prefillRefusals = [
  ["ratio not 4 or 128", { compressRatio: 2, ringSize: 2, swaPageSize: 256 }, "INVALID_RATIO", "compressRatio", 2],
  [
    "req ring with c128",
    { compressRatio: 128, ringSize: 256, swaPageSize: 256, useReqRing: true },
    "REQ_RING_NEEDS_C4",
    "useReqRing",
    true,
  ],
  ["ring not a multiple of the ratio", { ringSize: 18, swaPageSize: 36 * 8 }, "INVALID_RING", "ringSize", 18],
  ["SPS not a multiple of the ring", { swaPageSize: 264 }, "INVALID_RING", "swaPageSize", 264],
  ["ring size zero", { ringSize: 0 }, "INVALID_ARGUMENT", "ringSize", 0],
  ["B > numQ", { seqLens: [5, 5], extendLens: [1, 1], numQTokens: 1, path: "device" }, "NUM_Q_TOKENS", "numQTokens", 1],
  ["numQ > 65535", { seqLens: [70000], extendLens: [65536] }, "NUM_Q_TOKENS", "numQTokens", 65536],
  ["E <= 0 on the host path", { seqLens: [5, 5], extendLens: [2, 0] }, "EXTEND_LEN", "extendLens[1]", 0],
  ["E > S", { seqLens: [5], extendLens: [6] }, "EXTEND_LEN", "extendLens[0]", 6],
  [
    "E < 0 on the device path",
    { seqLens: [5, 5], extendLens: [3, -1], numQTokens: 4, path: "device" },
    "EXTEND_LEN",
    "extendLens[1]",
    -1,
  ],
  [
    "E > S on the device path",
    { seqLens: [5], extendLens: [6], numQTokens: 6, path: "device" },
    "EXTEND_LEN",
    "extendLens[0]",
    6,
  ],
  ["sum(E) != numQ on the host path", { seqLens: [5], extendLens: [3], numQTokens: 4 }, "EXTEND_SUM", "numQTokens", 4],
  [
    "sum(E) > numQ on the device path",
    { seqLens: [5, 5], extendLens: [3, 3], numQTokens: 4, path: "device" },
    "EXTEND_SUM",
    "numQTokens",
    4,
  ],
  [
    "device batch above the single-block limit",
    { seqLens: Array(1025).fill(1), extendLens: Array(1025).fill(1), path: "device" },
    "BATCH_SIZE",
    "seqLens.length",
    1025,
  ],
  ["empty batch", { seqLens: [], extendLens: [] }, "BATCH_SIZE", "seqLens.length", 0],
  ["non-integer seq len", { seqLens: [5.5], extendLens: [1] }, "INVALID_ARGUMENT", "seqLens[0]", 5.5],
  ["seq len beyond int32", { seqLens: [2 ** 31], extendLens: [1] }, "INT32_OVERFLOW", "seqLens[0]", 2 ** 31],
  ["length mismatch", { seqLens: [5, 6], extendLens: [1] }, "INVALID_ARGUMENT", "extendLens.length", 1],
  ["bad path", { path: "gpu" }, "INVALID_ARGUMENT", "path", "gpu"],
] as const;

describe("prefill validation", () => {
  test.each(prefillRefusals)("%s", (_name, override, code, field, value) => {
    const err = refusal(() => planPrefill({ ...base, ...(override as Partial<PrefillPlanOptions>) }));
    expect(err.code).toBe(code);
    expect(err.field).toBe(field);
    expect(err.value).toEqual(value);
    expect(err.rule.length).toBeGreaterThan(5);
    expect(err.message).toContain(field);
  });

  // The GPU planner validates through normalizePrefillOptions (O(batch), no tables): it must refuse exactly as
  // planPrefill does, and hand back the inputs planPrefill plans.
  test.each(prefillRefusals)(
    "normalizePrefillOptions refuses as planPrefill does: %s",
    (_name, override, code, field, value) => {
      const err = refusal(() => normalizePrefillOptions({ ...base, ...(override as Partial<PrefillPlanOptions>) }));
      expect([err.code, err.field, err.value]).toEqual([code, field, value]);
    },
  );
  test("normalizePrefillOptions returns the normalised inputs (pad, numQ, default pool indices, legacy rules)", () => {
    const n = normalizePrefillOptions({
      ...base,
      seqLens: [518, 20],
      extendLens: [6, 2],
      path: "device",
      numQTokens: 12,
    });
    expect([n.batch, n.numQ, n.pad, n.path, Array.from(n.rids), Array.from(n.seqLens)]).toEqual([
      2,
      12,
      10,
      "device",
      [0, 1],
      [518, 20],
    ]);
    expect(
      normalizePrefillOptions({ ...base, compressRatio: 128, ringSize: 128, swaPageSize: 128 }, { legacy: true }).pad,
    ).toBe(0);
    expect(refusal(() => normalizePrefillOptions({ ...base, extendLens: [0] }, { legacy: true })).code).toBe(
      "EXTEND_LEN",
    );
  });

  test("host and device accept the upstream limits exactly: numQ 65535, 1024 requests on the device path", () => {
    expect(
      planPrefill({ ...base, seqLens: [65535], extendLens: [65535], reqToToken: { identity: { tokensPerReq: 65536 } } })
        .planW.rowCount,
    ).toBeGreaterThan(0);
    const d = planPrefill({ ...base, seqLens: Array(1024).fill(1), extendLens: Array(1024).fill(1), path: "device" });
    expect(d.planW.validCount()).toBe(1024);
  });

  test("int64 inputs as BigInt64Array are accepted", () => {
    const plan = planPrefill({
      ...base,
      seqLens: new BigInt64Array([518n]),
      extendLens: new BigInt64Array([6n]),
      reqPoolIndices: new BigInt64Array([0n]),
    });
    expect(plan.numWrite).toBe(6);
  });

  test("out-of-range token maps are refused, not read as undefined", () => {
    expect(refusal(() => planPrefill({ ...base, reqToToken: { identity: { tokensPerReq: 100 } } })).code).toBe(
      "INDEX_OUT_OF_RANGE",
    );
    expect(
      refusal(() =>
        planPrefill({ ...base, reqPoolIndices: [3], reqToToken: { data: new Int32Array(2 * 1024), stride: 1024 } }),
      ).field,
    ).toBe("reqPoolIndices");
    const e = refusal(() =>
      planPrefill({
        ...base,
        reqToToken: { data: new Int32Array(1024).fill(5000), stride: 1024 },
        fullToState: new Int32Array(100),
      }),
    );
    expect(e.code).toBe("INDEX_OUT_OF_RANGE");
    expect(e.field).toMatch(/^fullToState/);
    expect(refusal(() => planPrefill({ ...base, reqToToken: { data: new Int32Array(10), stride: 3 } })).field).toBe(
      "reqToToken.data.length",
    );
    expect(refusal(() => planPrefill({ ...base, writePadOverride: -1 })).field).toBe("writePadOverride");
  });

  test("request-ring slots that would overflow int32 are refused", () => {
    const e = refusal(() =>
      planPrefill({
        compressRatio: 128,
        ringSize: 256,
        swaPageSize: 256,
        seqLens: [6],
        extendLens: [6],
        reqPoolIndices: [2 ** 24],
      }),
    );
    expect(e.code).toBe("INT32_OVERFLOW");
  });

  test("legacy planners validate ratio, extends and numQ", () => {
    expect(refusal(() => planPrefillLegacy({ compressRatio: 8, seqLens: [4], extendLens: [4] })).code).toBe(
      "INVALID_RATIO",
    );
    expect(refusal(() => planPrefillLegacy({ compressRatio: 4, seqLens: [4, 4], extendLens: [4, 0] })).code).toBe(
      "EXTEND_LEN",
    );
    expect(
      refusal(() => planPrefillLegacy({ compressRatio: 4, seqLens: [4], extendLens: [4], numQTokens: 5 })).code,
    ).toBe("EXTEND_SUM");
    expect(refusal(() => planDecodeLegacy({ compressRatio: 3, seqLens: [4] })).code).toBe("INVALID_RATIO");
  });
});

describe("decode validation (upstream checks only req-ring vs ratio; we check the ring too)", () => {
  test("refuses S < 1, bad rings and the req ring with c128", () => {
    expect(refusal(() => planDecode({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [0] })).field).toBe(
      "seqLens[0]",
    );
    expect(refusal(() => planDecode({ compressRatio: 4, ringSize: 12, swaPageSize: 256, seqLens: [5] })).code).toBe(
      "INVALID_RING",
    );
    expect(
      refusal(() => planDecode({ compressRatio: 128, ringSize: 256, swaPageSize: 256, useReqRing: true, seqLens: [5] }))
        .code,
    ).toBe("REQ_RING_NEEDS_C4");
    expect(refusal(() => planDecode({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [] })).code).toBe(
      "BATCH_SIZE",
    );
  });
});

describe("record tables", () => {
  test("refuse byte lengths that are not whole rows and row indices out of range", () => {
    expect(refusal(() => new CompressPlanTable(new Uint8Array(20))).code).toBe("RECORD_LAYOUT");
    expect(refusal(() => new WritePlanTable(new Uint8Array(12))).code).toBe("RECORD_LAYOUT");
    expect(refusal(() => CompressPlanTable.allocate(2).row(2)).code).toBe("INDEX_OUT_OF_RANGE");
  });

  test("round-trip records, sentinels and unaligned views", () => {
    const c = CompressPlanTable.fromRecords([
      { seqLen: 516, raggedId: 65534, bufferLen: 127, readPage0: -1, readPage1: 2 ** 31 - 1 },
    ]);
    expect(c.row(0)).toEqual({ seqLen: 516, raggedId: 65534, bufferLen: 127, readPage0: -1, readPage1: 2 ** 31 - 1 });
    c.setInvalid(0);
    expect(c.toHex()).toBe("ffffffff00000000ffffffffffffffff");
    expect(c.isInvalid(0)).toBe(true);
    const w = WritePlanTable.allocate(1);
    w.setInvalid(0);
    expect(w.toHex()).toBe("ffffffffffffffff");
    const buf = new Uint8Array(17);
    buf.set([0x04, 0x02, 0, 0, 3, 0, 4, 0, 7, 0, 0, 0, 8, 0, 0, 0], 1);
    expect(new CompressPlanTable(buf.subarray(1)).row(0)).toEqual({
      seqLen: 516,
      raggedId: 3,
      bufferLen: 4,
      readPage0: 7,
      readPage1: 8,
    });
  });
});
