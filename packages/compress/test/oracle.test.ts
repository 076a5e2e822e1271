/** The float64 oracle and the window builder: softmax pooling on hand-checkable windows, the c4 halves and mask. */
import { describe, expect, test } from "vitest";
import { CompressError, offlineCompress, windowOf } from "../src/index.js";

const D = 128;
const filled = (v: number) => new Float32Array(D).fill(v);

describe("offlineCompress", () => {
  test("equal logits: the mean of kv; masked elements are excluded", () => {
    const elements = Array.from({ length: 8 }, (_, e) => ({ kv: e < 2 ? null : filled(e), score: filled(1) }));
    const out = offlineCompress({ compressRatio: 4, headDim: D, ape: new Float32Array(8 * D), elements });
    expect(out[0]).toBeCloseTo((2 + 3 + 4 + 5 + 6 + 7) / 6, 12);
  });
  test("two elements: weights e^s / Σ e^s, ape added per element and channel", () => {
    const ape = new Float32Array(8 * D);
    ape[7 * D + 3] = Math.log(3); // element 7, channel 3
    const elements = Array.from({ length: 8 }, (_, e) => ({
      kv: e >= 6 ? filled(e === 6 ? -1 : 1) : null,
      score: filled(0),
    }));
    const out = offlineCompress({ compressRatio: 4, headDim: D, ape, elements });
    expect(out[0]).toBeCloseTo(0, 12);
    expect(out[3]).toBeCloseTo((3 - 1) / 4, 6); // ape rounded to fp32: 6 digits
  });
  test("refusals name the field", () => {
    const ok = { compressRatio: 4 as const, headDim: D, ape: new Float32Array(8 * D), elements: [] as never[] };
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        if (CompressError.isInstance(e)) return [e.code, e.field];
      }
      return null;
    };
    expect(codeOf(() => offlineCompress(ok))).toEqual(["BUFFER_SHAPE", "elements.length"]);
    const masked = Array.from({ length: 8 }, () => ({ kv: null, score: null }));
    expect(codeOf(() => offlineCompress({ ...ok, elements: masked }))).toEqual(["INVALID_ARGUMENT", "elements"]);
    const short = Array.from({ length: 8 }, () => ({ kv: new Float32Array(3), score: filled(0) }));
    expect(codeOf(() => offlineCompress({ ...ok, elements: short }))).toEqual([
      "BUFFER_SHAPE",
      "elements[0].kv.length",
    ]);
    const sparse: { kv: Float32Array; score: Float32Array }[] = Array.from({ length: 7 }, () => ({
      kv: filled(0),
      score: filled(0),
    }));
    sparse.length = 8; // a hole at element 7
    expect(codeOf(() => offlineCompress({ ...ok, elements: sparse }))).toEqual(["INVALID_TYPE", "elements[7]"]);
    expect(codeOf(() => offlineCompress({ ...ok, extra: 1 } as never))).toEqual(["UNKNOWN_KEY", "input.extra"]);
    expect(codeOf(() => offlineCompress({ ...ok, compressRatio: 2 as never }))).toEqual([
      "INVALID_ARGUMENT",
      "compressRatio",
    ]);
  });
  test("a string for a numeric choice is refused without suggesting the same text back", () => {
    const ape = new Float32Array(8 * D);
    let err: unknown;
    try {
      offlineCompress({ compressRatio: "4" as never, headDim: D, ape, elements: [] });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "INVALID_TYPE", field: "compressRatio" });
    expect((err as CompressError).params).not.toHaveProperty("suggestion");
  });
});

describe("windowOf", () => {
  const rowOf = (p: number) => new Float32Array(4 * D).map((_, i) => p * 10 + Math.floor(i / D)); // block id in ones
  test("c4: overlap half for e < 4, main half for e >= 4", () => {
    const w = windowOf(4, D, rowOf, 11);
    expect(w.map((el) => el.kv![0])).toEqual([40, 50, 60, 70, 81, 91, 101, 111]);
    expect(w.map((el) => el.score![0])).toEqual([42, 52, 62, 72, 83, 93, 103, 113]);
  });
  test("c4 q = 3: the overlap elements lie before position 0 and are masked", () => {
    const w = windowOf(4, D, rowOf, 3);
    expect(w.map((el) => el.kv?.[0] ?? null)).toEqual([null, null, null, null, 1, 11, 21, 31]);
  });
  test("c128: one half, positions q − 127 .. q", () => {
    const w = windowOf(128, D, (p) => new Float32Array(2 * D).fill(p), 255);
    expect(w[0]!.kv![0]).toBe(128);
    expect(w[127]!.score![0]).toBe(255);
  });
  test("refuses a non-event position and a missing row", () => {
    expect(() => windowOf(4, D, rowOf, 5)).toThrowError(
      expect.objectContaining({ code: "INVALID_ARGUMENT", field: "q" }),
    );
    expect(() => windowOf(4, D, () => undefined, 7)).toThrowError(
      expect.objectContaining({ code: "INVALID_TYPE", field: "rowsByPosition(0)" }),
    );
  });
});
