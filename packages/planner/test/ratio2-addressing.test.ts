// The ratio-1/2 address arithmetic (docs/reference/ratio2-pair-ring.md), against the rules read in SGLang's
// low_ratio_backend.py (sgl-project/sglang@c0a922a2): `_low_ratio_compression_metadata`, `_low_ratio_pair_partners`.
import { describe, expect, test } from "vitest";
import {
  PlannerError,
  completesGroup,
  fusedVerifyAccepts,
  lowRatioOutLoc,
  lowRatioPageRead,
  lowRatioStoreSlot,
  lowRatioVisibleLength,
  pairGroupPosition,
  pairReadsRing,
  pairStateSlot,
  pairStateWrittenRows,
} from "../src/index.js";

describe("out locations and visible lengths", () => {
  test("ratio 2: a token completes a group at an even length, its latent at raw // 2", () => {
    // position 5 (length 6) of request 3 in the harness layout raw = 512 + req·256 + pos
    expect(lowRatioOutLoc(2, 6, 512 + 3 * 256 + 5)).toBe(Math.floor((512 + 768 + 5) / 2));
    expect(lowRatioOutLoc(2, 5, 1284)).toBe(-1);
    expect(completesGroup(2, 1)).toBe(false);
    expect(lowRatioVisibleLength(2, 1)).toBe(1);
    expect(lowRatioVisibleLength(2, 7)).toBe(3);
  });
  test("ratio 1: every token is its own group at its raw slot", () => {
    expect(lowRatioOutLoc(1, 1, 0)).toBe(0);
    expect(lowRatioOutLoc(1, 9, 1234)).toBe(1234);
    expect(lowRatioVisibleLength(1, 0)).toBe(1);
    expect(lowRatioVisibleLength(1, 9)).toBe(9);
  });
  test("a -1 out location stores to the dummy slot 0", () => {
    expect(lowRatioStoreSlot(-1)).toBe(0);
    expect(lowRatioStoreSlot(77)).toBe(77);
  });
  test("page reads: page·(P/r) + j mod (P/r)", () => {
    const row = [7, 3, 9];
    expect(lowRatioPageRead(2, 256, row, 0)).toBe(7 * 128);
    expect(lowRatioPageRead(2, 256, row, 130)).toBe(3 * 128 + 2);
    expect(lowRatioPageRead(1, 256, row, 600)).toBe(9 * 256 + 88);
    expect(() => lowRatioPageRead(2, 256, row, 3 * 128)).toThrow(PlannerError);
    expect(() => lowRatioPageRead(2, 255, row, 0)).toThrow(/multiple of the ratio 2/);
  });
  test("bad ratios and lengths are refused with their field", () => {
    expect(() => lowRatioOutLoc(4 as 2, 4, 0)).toThrow(expect.objectContaining({ code: "INVALID_RATIO" }));
    expect(() => lowRatioOutLoc(2, 0, 0)).toThrow(expect.objectContaining({ field: "seqLen" }));
  });
});

describe("the pair-state ring", () => {
  test("slot req·R₂ + pos mod R₂, -1 below position 0", () => {
    expect(pairStateSlot(3, 5, 8)).toBe(29);
    expect(pairStateSlot(3, 13, 8)).toBe(29);
    expect(pairStateSlot(0, -1, 2)).toBe(-1);
  });
  test("an odd position pools with pos - 1 and ropes at the group start", () => {
    expect(pairGroupPosition(5)).toBe(4);
    expect(pairGroupPosition(4)).toBe(4);
    expect(pairReadsRing(0, 5)).toBe(true);
    expect(pairReadsRing(1, 6)).toBe(false);
    expect(pairReadsRing(0, 0)).toBe(false);
  });
  test("write rules: decode even only, fused verify even rows, torch the last R₂ rows", () => {
    expect(pairStateWrittenRows("decode", 4, 1, 2)).toEqual([0]);
    expect(pairStateWrittenRows("decode", 5, 1, 2)).toEqual([]);
    expect(pairStateWrittenRows("verify-fused", 5, 6, 8)).toEqual([1, 3, 5]);
    expect(pairStateWrittenRows("torch", 5, 6, 8)).toEqual([0, 1, 2, 3, 4, 5]);
    // SGLang's unit test: a chunk of positions 5, 6 on a ring of 2 writes both
    expect(pairStateWrittenRows("torch", 5, 2, 2)).toEqual([0, 1]);
    expect(pairStateWrittenRows("torch", 10, 7, 4)).toEqual([3, 4, 5, 6]);
    expect(() => pairStateWrittenRows("decode", 4, 2, 2)).toThrow(expect.objectContaining({ field: "rows" }));
    expect(() => pairStateWrittenRows("fused" as "torch", 4, 2, 2)).toThrow(/must be one of decode/);
  });
  test("the verify kernel's host check: ring wider than the block", () => {
    expect(fusedVerifyAccepts(8, 6)).toBe(true);
    expect(fusedVerifyAccepts(8, 8)).toBe(false);
  });
});
