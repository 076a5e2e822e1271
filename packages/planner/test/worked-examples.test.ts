// Every worked example of docs/reference/planner.md §9, at the byte level where it gives bytes.
import { describe, expect, test } from "vitest";
import {
  COMPRESS_PLAN_BYTES,
  WRITE_PLAN_BYTES,
  PlannerError,
  RingResidencySimulator,
  planDecode,
  planDecodeLegacy,
  planPrefill,
  planPrefillLegacy,
} from "../src/index.js";
import { planPrefillStage0 } from "../src/prefill.js";
import { CUDA_GRAPH_TAIL_OPTIONS } from "../src/testing.js";
import { cTuples, hexOfRow, range, wTuples } from "./helpers.js";

const c4 = { compressRatio: 4, ringSize: 16, swaPageSize: 256 } as const;
const c128 = { compressRatio: 128, ringSize: 256, swaPageSize: 256 } as const;

describe("planner §9 worked examples", () => {
  test("Ex 1: c4 R16 prefix 512 D6, host path", () => {
    const plan = planPrefill({ ...c4, seqLens: [518], extendLens: [6] });
    expect(plan.writePad).toBe(10);
    expect(cTuples(plan.planC)).toEqual([[516, 3, 4, 7, 8]]);
    expect(plan.planC.toHex()).toBe("04020000030004000700000008000000");
    expect(hexOfRow(plan.planC, 0, COMPRESS_PLAN_BYTES)).toBe("04 02 00 00 03 00 04 00 07 00 00 00 08 00 00 00");
    expect(wTuples(plan.planW)).toEqual(range(0, 6).map((r) => [r, 32 + r]));
    expect(hexOfRow(plan.planW, 3, WRITE_PLAN_BYTES)).toBe("03 00 00 00 23 00 00 00");
    const stage0 = planPrefillStage0({ ...c4, seqLens: [518], extendLens: [6] });
    expect(stage0.planW.row(3)).toEqual({ raggedId: 3 | (0 << 16), writeLoc: 516 });
    expect(stage0.planC.row(0)).toEqual({ seqLen: 516, raggedId: 3, bufferLen: 4, readPage0: -1, readPage1: 0 });
  });

  test("Ex 1 on the device path: 6 rows each, valid first, invalid padding", () => {
    const plan = planPrefill({ ...c4, seqLens: [518], extendLens: [6], path: "device" });
    expect(plan.planC.rowCount).toBe(6);
    expect(plan.planW.rowCount).toBe(6);
    expect(plan.devicePath).toBe("uniform");
    expect(cTuples(plan.planC)).toEqual([[516, 3, 4, 7, 8]]);
    for (let i = 1; i < 6; i++)
      expect(hexOfRow(plan.planC, i, 16)).toBe("ff ff ff ff 00 00 00 00 ff ff ff ff ff ff ff ff");
    expect(wTuples(plan.planW).sort((a, b) => a[0]! - b[0]!)).toEqual(range(0, 6).map((r) => [r, 32 + r]));
  });

  test("Ex 1 with the request ring", () => {
    const plan = planPrefill({ ...c4, useReqRing: true, seqLens: [518], extendLens: [6] });
    expect(cTuples(plan.planC)).toEqual([[516, 3, 4, 3, 0]]);
    expect(wTuples(plan.planW)).toEqual(range(0, 6).map((r) => [r, r]));
  });

  test("Ex 2: c4 R16 prefix 513 D6", () => {
    const plan = planPrefill({ ...c4, seqLens: [519], extendLens: [6] });
    expect(cTuples(plan.planC)).toEqual([[516, 2, 5, 7, 8]]);
    expect(wTuples(plan.planW)).toEqual(range(0, 6).map((r) => [r, 33 + r]));
  });

  test("Ex 3: c4 R16 prefix 512 D8 separates the fix from the pre-fix pads", () => {
    const plan = planPrefill({ ...c4, seqLens: [520], extendLens: [8] });
    expect(cTuples(plan.planC)).toEqual([
      [516, 3, 4, 7, 8],
      [520, 7, 0, -1, 0],
    ]);
    expect(wTuples(plan.planW)).toEqual(range(0, 8).map((r) => [r, 32 + r]));
    // old GPU pad 4 and old CPU (no pad): 512-515 missing
    for (const pad of [4, 0]) {
      const old = planPrefill({ ...c4, seqLens: [520], extendLens: [8], writePadOverride: pad });
      expect(wTuples(old.planW).map(([r]) => 512 + r!)).toEqual(range(516, 520));
    }
  });

  test("Ex 4: c4 non-speculative R8, plain prefill of 12, and with SPS 8 (tail clause)", () => {
    const plan = planPrefill({ compressRatio: 4, ringSize: 8, swaPageSize: 256, seqLens: [12], extendLens: [12] });
    expect(plan.writePad).toBe(0);
    expect(cTuples(plan.planC)).toEqual([
      [4, 3, 4, 0, 0],
      [8, 7, 0, -1, 0],
      [12, 11, 0, -1, 0],
    ]);
    expect(wTuples(plan.planW)).toEqual([
      [8, 0],
      [9, 1],
      [10, 2],
      [11, 3],
    ]);
    const tail = planPrefill({ compressRatio: 4, ringSize: 8, swaPageSize: 8, seqLens: [12], extendLens: [12] });
    expect(wTuples(tail.planW)).toEqual(range(4, 12).map((p) => [p, p]));
  });

  test("Ex 5: c128 R256 prefix 636 D6", () => {
    const plan = planPrefill({ ...c128, seqLens: [642], extendLens: [6] });
    expect(plan.writePad).toBe(130);
    expect(cTuples(plan.planC)).toEqual([[640, 3, 124, 1, 0]]);
    expect(wTuples(plan.planW)).toEqual(range(0, 6).map((r) => [r, 124 + r]));
  });

  test("Ex 6: c128 non-speculative R128 prefix 636 E6", () => {
    const plan = planPrefill({ compressRatio: 128, ringSize: 128, swaPageSize: 256, seqLens: [642], extendLens: [6] });
    expect(cTuples(plan.planC)).toEqual([[640, 3, 124, 0, 0]]);
    expect(wTuples(plan.planW)).toEqual([
      [4, 0],
      [5, 1],
    ]);
  });

  test("Ex 7: c128 R256 prefix 512 D6: no event, 0 compress rows on the host path", () => {
    const plan = planPrefill({ ...c128, seqLens: [518], extendLens: [6] });
    expect(plan.planC.rowCount).toBe(0);
    expect(plan.planC.bytes.byteLength).toBe(0);
    expect(wTuples(plan.planW)).toEqual(range(0, 6).map((r) => [r, r]));
  });

  test("Ex 8: CUDA-graph bucket tail on the device path (general path), and the host path refuses", () => {
    const c4r8 = planPrefill(CUDA_GRAPH_TAIL_OPTIONS);
    expect(c4r8.devicePath).toBe("general");
    expect(c4r8.planC.rowCount).toBe(4);
    expect(c4r8.planC.validCount()).toBe(0);
    expect(c4r8.planW.records()).toEqual([
      { raggedId: 0, writeLoc: 0 },
      { raggedId: 1, writeLoc: 65 },
      { raggedId: 2, writeLoc: 66 },
      { raggedId: 0xffffffff, writeLoc: -1 },
    ]);
    const stage0 = planPrefillStage0(CUDA_GRAPH_TAIL_OPTIONS);
    expect(stage0.planW.validRecords().map((w) => [w.raggedId, w.writeLoc])).toEqual([
      [0, 1],
      [65537, 2],
      [65538, 3],
    ]);
    const c128r128 = planPrefill({ ...CUDA_GRAPH_TAIL_OPTIONS, compressRatio: 128, ringSize: 128 });
    expect(wTuples(c128r128.planW)).toEqual([
      [0, 0],
      [1, 129],
      [2, 130],
    ]);
    expect(hexOfRow(c128r128.planW, 3, 8)).toBe("ff ff ff ff ff ff ff ff");
    expect(() => planPrefill({ ...CUDA_GRAPH_TAIL_OPTIONS, path: "host" })).toThrow(
      expect.objectContaining({ code: "EXTEND_SUM", field: "numQTokens", value: 4 }),
    );
  });

  test("Ex 9: c4 R16 prefix 254 D10 crossing an SWA page, paged and request ring", () => {
    const paged = planPrefill({ ...c4, seqLens: [264], extendLens: [10] });
    expect(cTuples(paged.planC)).toEqual([
      [256, 1, 6, 2, 3],
      [260, 5, 2, 3, 4],
      [264, 9, 0, -1, 0],
    ]);
    expect(wTuples(paged.planW)).toEqual(range(0, 10).map((r) => [r, 14 + r]));
    const req = planPrefill({ ...c4, useReqRing: true, seqLens: [264], extendLens: [10] });
    expect(cTuples(req.planC)).toEqual([
      [256, 1, 6, 2, 3],
      [260, 5, 2, 3, 0],
      [264, 9, 0, -1, 0],
    ]);
    expect(wTuples(req.planW)).toEqual([[0, 14], [1, 15], ...range(2, 10).map((r) => [r, r - 2])]);
  });

  test("Ex 10: two requests, c4 R16", () => {
    const plan = planPrefill({ ...c4, seqLens: [10, 518], extendLens: [3, 6] });
    expect(cTuples(plan.planC)).toEqual([
      [8, 0, 7, 0, 1],
      [516, 6, 4, 39, 40],
    ]);
    expect(wTuples(plan.planW)).toEqual([[0, 7], [1, 8], [2, 9], ...range(3, 9).map((r) => [r, 160 + r - 3])]);
  });

  test("Ex 11: decode", () => {
    const paged = planDecode({ ...c4, seqLens: [516, 517], reqPoolIndices: [0, 0] });
    expect(paged.records()).toEqual([
      { seqLen: 516, writeLoc: 35, readPage0: 7, readPage1: 8 },
      { seqLen: 517, writeLoc: 36, readPage0: 8, readPage1: 9 },
    ]);
    expect(planDecode({ ...c4, useReqRing: true, seqLens: [516] }).row(0)).toEqual({
      seqLen: 516,
      writeLoc: 3,
      readPage0: 3,
      readPage1: 0,
    });
    const c128plan = planDecode({ ...c128, seqLens: [640, 641], reqPoolIndices: [0, 0] });
    expect(c128plan.records()).toEqual([
      { seqLen: 640, writeLoc: 127, readPage0: 1, readPage1: 0 },
      { seqLen: 641, writeLoc: 128, readPage0: 0, readPage1: 1 },
    ]);
    expect(c128plan.toHex()).toBe("800200007f0000000100000000000000" + "8102000080000000" + "0000000001000000");
  });

  test("Ex 12: legacy planners", () => {
    const c4l = planPrefillLegacy({ compressRatio: 4, seqLens: [12], extendLens: [12], reqPoolIndices: [3] });
    expect(cTuples(c4l.planC)).toEqual([
      [4, 3, 4, 6, 6],
      [8, 7, 0, 6, 7],
      [12, 11, 0, 7, 6],
    ]);
    expect(wTuples(c4l.planW)).toEqual(range(8, 12).map((r) => [r, 24 + r - 8]));
    const c128l = planPrefillLegacy({ compressRatio: 128, seqLens: [260], extendLens: [4], reqPoolIndices: [2] });
    expect(c128l.planC.rowCount).toBe(0);
    expect(wTuples(c128l.planW)).toEqual(range(0, 4).map((r) => [r, 256 + r]));
    expect(planDecodeLegacy({ compressRatio: 4, seqLens: [516], reqPoolIndices: [3] }).row(0)).toEqual({
      seqLen: 516,
      writeLoc: 27,
      readPage0: 7,
      readPage1: 6,
    });
    expect(planDecodeLegacy({ compressRatio: 128, seqLens: [640], reqPoolIndices: [2] }).row(0)).toEqual({
      seqLen: 640,
      writeLoc: 383,
      readPage0: 2,
      readPage1: 2,
    });
  });

  test("Ex 13: failure at pad + 1, clean at pad", () => {
    const bad = new RingResidencySimulator(c4);
    bad.prefill(518);
    bad.verify(11, 1);
    bad.verify(1, 1);
    const needs = bad.violations.map((v) => [v.compressAt, v.position, v.kind, v.found?.position ?? null]);
    expect(needs).toContainEqual([519, 518, "never-written", null]);
    expect(needs).toContainEqual([519, 512, "stale-read", 528]);
    expect(bad.violations.find((v) => v.position === 512)!.found!.rejectedDraft).toBe(true);
    expect(bad.violations[0]!.message).toMatch(
      /compression at position 519 needs position 512.*holds position 528 \(a rejected draft\)/,
    );

    const good = new RingResidencySimulator(c4);
    good.prefill(518);
    good.verify(10, 1);
    good.verify(1, 1);
    expect(good.violations).toEqual([]);
  });

  test("PlannerError carries field, value and rule", () => {
    try {
      planPrefill({ ...c4, seqLens: [10], extendLens: [11] });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(PlannerError);
      const e = err as PlannerError;
      expect([e.code, e.field, e.value]).toEqual(["EXTEND_LEN", "extendLens[0]", 11]);
      expect(e.message).toBe("extendLens[0] = 11: must be <= seqLens[0] = 10 (the prefix S - E cannot be negative)");
    }
  });
});
