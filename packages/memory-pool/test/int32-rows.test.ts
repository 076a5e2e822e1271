// Slot math that used to return rows past int32 (c128OfflineStateRow(2^31, 0, 256) = 549755813888) now
// refuses them with INT32_OVERFLOW, naming the input that drove the row there.
import { describe, expect, test } from "vitest";
import {
  MemoryPoolError,
  c128OfflineRequestRows,
  c128OfflineStateRow,
  c128OnlineStateRow,
  swaLocToC4StateRow,
} from "../src/index.js";
import { unifiedC4StateRow } from "../src/slots.js";

function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect(MemoryPoolError.isInstance(e)).toBe(true);
    const { code, field, value, params } = e as MemoryPoolError;
    return { code, field, value, params };
  }
  throw new Error("accepted");
}

describe("state rows fit int32", () => {
  test("c128OfflineStateRow(2^31, 0, 256) names reqIdx and the row", () => {
    expect(refusal(() => c128OfflineStateRow(2 ** 31, 0, 256))).toEqual({
      code: "INT32_OVERFLOW",
      field: "reqIdx",
      value: 2 ** 31,
      params: { row: 549755813888, max: 2147483647 },
    });
  });
  test("the last row that fits is returned; one past it is refused", () => {
    const lastReq = Math.floor(2147483647 / 256);
    expect(c128OfflineStateRow(lastReq, 255, 256)).toBe(lastReq * 256 + 255);
    expect(refusal(() => c128OfflineStateRow(lastReq + 1, 0, 256)).code).toBe("INT32_OVERFLOW");
    expect(refusal(() => unifiedC4StateRow(lastReq + 1, 0, 256)).code).toBe("INT32_OVERFLOW");
  });
  test("swaLocToC4StateRow, c128OfflineRequestRows and c128OnlineStateRow", () => {
    expect(refusal(() => swaLocToC4StateRow(2 ** 40, 256, 16))).toMatchObject({
      code: "INT32_OVERFLOW",
      field: "swaLoc",
    });
    expect(refusal(() => c128OfflineRequestRows(2 ** 31, 256))).toMatchObject({
      code: "INT32_OVERFLOW",
      field: "reqIdx",
    });
    expect(refusal(() => c128OnlineStateRow(2 ** 31))).toMatchObject({ code: "INT32_OVERFLOW", field: "reqIdx" });
    expect(c128OfflineRequestRows(3, 256)).toEqual({ startRow: 768, endRow: 1024 });
    expect(swaLocToC4StateRow(-5, 256, 16)).toBe(-1);
  });
});
