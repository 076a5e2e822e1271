// Library entry points refuse garbage with a PlannerError naming field, value and rule.
import { describe, expect, test } from "vitest";
import {
  CompressPlanTable,
  DecodePlanTable,
  PlannerError,
  WritePlanTable,
  type WritePlanRecord,
  earliestFutureRead,
  firstWritePos,
  maxServedDraftTokens,
  packWriteRaggedId,
  padForFormula,
  type PadFormula,
  planDecode,
  planDecodeLegacy,
  planPrefill,
  planPrefillLegacy,
  proveResidency,
  residencyProofStatus,
  unpackWriteRaggedId,
  validateRing,
  windowSize,
  writePad,
} from "../src/index.js";
import { shippedResidencyProof } from "../src/prove/table.js";
import { ResidencyScenarioRun, reqToTokenInt32 } from "../src/internal.js";
import { thrown } from "./helpers.js";

function expectRefusal(fn: () => unknown, code: string, field: string | RegExp): void {
  const e = thrown(fn);
  expect(PlannerError.isInstance(e)).toBe(true);
  expect((e as PlannerError).code).toBe(code);
  expect((e as PlannerError).field).toMatch(field);
}

const c4 = { compressRatio: 4, ringSize: 16, swaPageSize: 256 } as const;

describe("pad functions validate every argument", () => {
  test.each([
    ["writePad(4, NaN)", () => writePad(4, Number.NaN), "INVALID_ARGUMENT", "ringSize"],
    ["writePad(3, 16)", () => writePad(3, 16), "INVALID_RATIO", "compressRatio"],
    ["writePad(4, 16.5)", () => writePad(4, 16.5), "INVALID_ARGUMENT", "ringSize"],
    ["writePad(4, 0)", () => writePad(4, 0), "INVALID_ARGUMENT", "ringSize"],
    ["writePad(4, 2^31)", () => writePad(4, 2 ** 31), "INVALID_ARGUMENT", "ringSize"],
    ["writePad(Infinity, 16)", () => writePad(Number.POSITIVE_INFINITY, 16), "INVALID_RATIO", "compressRatio"],
    ["windowSize(8)", () => windowSize(8), "INVALID_RATIO", "compressRatio"],
    ["maxServedDraftTokens(4, -1)", () => maxServedDraftTokens(4, -1), "INVALID_ARGUMENT", "ringSize"],
    ["padForFormula(bad formula)", () => padForFormula("x" as PadFormula, 4, 16), "INVALID_ARGUMENT", "formula"],
    ["padForFormula(ratio 2)", () => padForFormula("pre-fix-device", 2, 16), "INVALID_RATIO", "compressRatio"],
    ["padForFormula(ring 1.5)", () => padForFormula("pre-fix-host", 4, 1.5), "INVALID_ARGUMENT", "ringSize"],
    ["earliestFutureRead(4, -1)", () => earliestFutureRead(4, -1), "INVALID_ARGUMENT", "seqLen"],
    ["earliestFutureRead(2, 8)", () => earliestFutureRead(2, 8), "INVALID_RATIO", "compressRatio"],
    ["firstWritePos(4, 8.5, 0)", () => firstWritePos(4, 8.5, 0), "INVALID_ARGUMENT", "seqLen"],
    ["firstWritePos(4, 8, NaN)", () => firstWritePos(4, 8, Number.NaN), "INVALID_ARGUMENT", "pad"],
  ])("%s", (_name, fn, code, field) => expectRefusal(fn, code, field));

  test("the ratios each function serves still work (ratio 2 for the memory pool)", () => {
    expect([windowSize(2), windowSize(4), windowSize(128)]).toEqual([2, 8, 128]);
    expect([writePad(2, 8), writePad(4, 16), writePad(128, 1)]).toEqual([8, 10, 0]);
    expect(padForFormula("pre-fix-device", 4, 16)).toBe(4);
    expect(firstWritePos(4, 518, 10)).toBe(508);
  });
});

describe("ragged-id packing refuses values outside 16 bits", () => {
  test.each([
    ["raggedId 70000", () => packWriteRaggedId(70000, 1), "raggedId"],
    ["batchId -1", () => packWriteRaggedId(0, -1), "batchId"],
    ["raggedId 1.5", () => packWriteRaggedId(1.5, 0), "raggedId"],
    ["batchId 65536", () => packWriteRaggedId(0, 65536), "batchId"],
    ["packed 2^32", () => unpackWriteRaggedId(2 ** 32), "packed"],
    ["packed NaN", () => unpackWriteRaggedId(Number.NaN), "packed"],
  ])("%s", (_name, fn, field) => expectRefusal(fn, "INVALID_ARGUMENT", field));

  test("in-range values round-trip", () => {
    expect(unpackWriteRaggedId(packWriteRaggedId(65535, 65535))).toEqual({ raggedId: 65535, batchId: 65535 });
  });
});

describe("reqToToken.data is never trusted", () => {
  const READ_ELEMENT = /^reqToToken\.data\[5\d\d\]$/;
  const table = (fill: number, Type: Float64ArrayConstructor | ArrayConstructor = Float64Array) => {
    const data = Type === Array ? Array<number>(600).fill(fill) : new Float64Array(600).fill(fill);
    return { data, stride: 600 };
  };
  test.each([
    ["all Infinity (plain array)", table(Number.POSITIVE_INFINITY, Array), "INVALID_ARGUMENT"],
    ["all NaN (Float64Array)", table(Number.NaN), "INVALID_ARGUMENT"],
    ["fractions", table(2.5), "INVALID_ARGUMENT"],
    ["2^32 + p (would wrap to p)", table(2 ** 32 + 7), "INT32_OVERFLOW"],
  ])("%s: prefill and decode refuse the element they read", (_name, reqToToken, code) => {
    expectRefusal(() => planPrefill({ ...c4, seqLens: [518], extendLens: [6], reqToToken }), code, READ_ELEMENT);
    expectRefusal(() => planDecode({ ...c4, seqLens: [516], reqToToken }), code, READ_ELEMENT);
  });

  test("elements the plan does not read are not checked; whole-table conversion for the device checks all", () => {
    const data = Float64Array.from({ length: 1200 }, (_, i) => i);
    data[1100] = Number.NaN;
    expect(() => planDecode({ ...c4, seqLens: [516], reqToToken: { data, stride: 600 } })).not.toThrow();
    expectRefusal(() => reqToTokenInt32(data), "INVALID_ARGUMENT", "reqToToken.data[1100]");
    expect(reqToTokenInt32([1, 2, 3])).toEqual(Int32Array.from([1, 2, 3]));
  });
});

describe("options and tables refuse garbage", () => {
  test.each([
    [
      "useReqRing as a string",
      () => validateRing({ ...c4, useReqRing: "false" as never }),
      "INVALID_TYPE",
      "useReqRing",
    ],
    ["options not an object", () => validateRing(null as never), "INVALID_TYPE", "options"],
    [
      "useCudaGraph as a string",
      () => planPrefill({ ...c4, seqLens: [518], extendLens: [6], useCudaGraph: "false" as never }),
      "INVALID_TYPE",
      "useCudaGraph",
    ],
    [
      "deviceBatchLimit NaN",
      () => planPrefill({ ...c4, seqLens: [518], extendLens: [6], path: "device", deviceBatchLimit: Number.NaN }),
      "INVALID_ARGUMENT",
      "deviceBatchLimit",
    ],
    ["legacy prefill options null", () => planPrefillLegacy(null as never), "INVALID_TYPE", "options"],
    ["legacy decode options a string", () => planDecodeLegacy("x" as never), "INVALID_TYPE", "options"],
    ["decode options an array", () => planDecode([] as never), "INVALID_TYPE", "options"],
    ["allocate(NaN)", () => CompressPlanTable.allocate(Number.NaN), "INVALID_ARGUMENT", /^rows$/],
    ["allocate(-1)", () => WritePlanTable.allocate(-1), "INVALID_ARGUMENT", /^rows$/],
    ["allocate(1.5)", () => DecodePlanTable.allocate(1.5), "INVALID_ARGUMENT", /^rows$/],
    ["table over a non-Uint8Array", () => new CompressPlanTable([1, 2] as never), "INVALID_TYPE", "CompressPlan bytes"],
    [
      "a raggedId past 16 bits",
      () => CompressPlanTable.fromRecords([{ seqLen: 4, raggedId: 70000, bufferLen: 0, readPage0: 0, readPage1: 0 }]),
      "INVALID_ARGUMENT",
      "CompressPlan[0].raggedId",
    ],
    [
      "a writeLoc past int32",
      () => WritePlanTable.fromRecords([{ raggedId: 0, writeLoc: 2 ** 31 }]),
      "INVALID_ARGUMENT",
      "WritePlan[0].writeLoc",
    ],
    [
      "a NaN seqLen",
      () => DecodePlanTable.fromRecords([{ seqLen: Number.NaN, writeLoc: 0, readPage0: 0, readPage1: 0 }]),
      "INVALID_ARGUMENT",
      "DecodePlan[0].seqLen",
    ],
    [
      "a null record",
      () => WritePlanTable.fromRecords([null] as unknown as WritePlanRecord[]),
      "INVALID_TYPE",
      "WritePlan[0]",
    ],
  ])("%s", (_name, fn, code, field) => expectRefusal(fn, code, field));

  test("invalid sentinels still round-trip through set", () => {
    const t = CompressPlanTable.allocate(1);
    t.setInvalid(0);
    expect(t.isInvalid(0)).toBe(true);
  });
});

describe("planning options refuse keys the function does not read", () => {
  const prefill = { ...c4, seqLens: [518], extendLens: [6] };
  test.each([
    [
      "a misspelt prefill key",
      () => planPrefill({ ...prefill, use_req_ring: true } as never),
      "use_req_ring",
      "useReqRing",
    ],
    ["a decode key on decode", () => planDecode({ ...c4, seqLens: [9], extendLens: [1] } as never), "extendLens", null],
    [
      "a ring key on legacy prefill",
      () => planPrefillLegacy({ compressRatio: 4, seqLens: [8], extendLens: [8], ringSize: 7 } as never),
      "ringSize",
      null,
    ],
    [
      "a path on legacy decode",
      () => planDecodeLegacy({ compressRatio: 4, seqLens: [8], path: "host" } as never),
      "path",
      null,
    ],
  ])("%s", (_name, fn, field, suggestion) => {
    const e = thrown(fn) as PlannerError;
    expect(PlannerError.isInstance(e)).toBe(true);
    expect([e.code, e.field]).toEqual(["UNKNOWN_KEY", field]);
    expect(e.params.suggestion ?? null).toBe(suggestion);
  });
});

describe("residency proofs and scenarios refuse coerced inputs", () => {
  const scenario = { ...c4, draftTokens: 2, steps: 0 };
  test.each([
    ["a string draft count for the proof status", () => residencyProofStatus(c4, "5" as never), "draftTokens"],
    ["a fractional draft count for the proof status", () => residencyProofStatus(c4, 1.5), "draftTokens"],
    ["a draft count beyond 16 bits for the shipped table", () => shippedResidencyProof(c4, 65536), "draftTokens"],
  ])("%s", (_name, fn, field) => expectRefusal(fn, "INVALID_ARGUMENT", field));

  test.each([
    [
      "a string mixBatches",
      () => new ResidencyScenarioRun({ ...scenario, mixBatches: "false" as never }),
      "mixBatches",
    ],
    ["a string adaptive", () => new ResidencyScenarioRun({ ...scenario, adaptive: "no" as never }), "adaptive"],
    [
      "a string adaptive for the prover",
      () => proveResidency({ ...c4, draftTokens: 2, adaptive: "no" as never }),
      "adaptive",
    ],
  ])("%s", (_name, fn, field) => expectRefusal(fn, "INVALID_TYPE", field));

  test("a misspelt scenario key, with the closest known key", () => {
    const e = thrown(() => new ResidencyScenarioRun({ ...scenario, mixBatch: false } as never)) as PlannerError;
    expect(PlannerError.isInstance(e)).toBe(true);
    expect([e.code, e.field, e.params.suggestion]).toEqual(["UNKNOWN_KEY", "mixBatch", "mixBatches"]);
  });
});
