/**
 * entryTolerance: each bound close to tight on an adversarial window (how close is stated per test) and never
 * exceeded on random windows. Windows are pooled by the CPU backend from ring rows (bf16 state rounds them) and
 * compared with offlineCompress of the unrounded rows.
 */
import { SeededRandom } from "@dsv4-kv/planner/internal";
import { describe, expect, test } from "vitest";
import { entryTolerance } from "../src/index.js";
import { ADVERSARIAL, D, poolFromRing } from "./windows.js";

describe("adversarial windows: each bound nearly reached", () => {
  for (const a of ADVERSARIAL) {
    test(a.name, () => {
      const { err } = poolFromRing(4, a.dtype, a.rows, a.ape);
      const t = entryTolerance({
        compressRatio: 4,
        maxAbsKv: a.maxAbsKv,
        maxAbsScore: a.maxAbsScore,
        ringElementsBf16: a.dtype === "bf16",
      });
      expect(err / t.cpu).toBeGreaterThan(a.minRatio);
      expect(err).toBeLessThanOrEqual(t.cpu);
    });
  }
  test("bf16 kv rounding: the error is exactly 2^-8", () => {
    const a = ADVERSARIAL[1]!;
    expect(poolFromRing(4, a.dtype, a.rows, a.ape).err).toBe(2 ** -8);
  });
});

describe("random windows: never exceeded", () => {
  for (const cr of [4, 128] as const) {
    for (const dtype of ["fp32", "bf16"] as const) {
      test(`c${cr} ${dtype}: 40 windows, kv and score scales from 0.01 to 100`, () => {
        const rng = new SeededRandom(cr * 10 + (dtype === "bf16" ? 1 : 0));
        const w = cr === 4 ? 8 : 128;
        const re = (cr === 4 ? 4 : 2) * D;
        let worst = 0;
        for (let k = 0; k < 40; k++) {
          const kvScale = 10 ** (rng.next() * 4 - 2);
          const scoreScale = 10 ** (rng.next() * 4 - 2);
          const apeScale = scoreScale * rng.next();
          const rows = new Float32Array(w * re);
          for (let i = 0; i < rows.length; i++) {
            const scoreCol = i % re >= re / 2;
            rows[i] = (2 * rng.next() - 1) * (scoreCol ? scoreScale : kvScale);
          }
          const ape = new Float32Array(w * D).map(() => (2 * rng.next() - 1) * apeScale);
          const { err } = poolFromRing(cr, dtype, rows, ape);
          const t = entryTolerance({
            compressRatio: cr,
            maxAbsKv: kvScale,
            maxAbsScore: scoreScale + apeScale,
            ringElementsBf16: dtype === "bf16",
          });
          expect(err).toBeLessThanOrEqual(t.cpu);
          worst = Math.max(worst, err / t.cpu);
        }
        expect(worst).toBeGreaterThan(0);
      });
    }
  }
});

describe("entryTolerance", () => {
  test("the parts add up and GPU vs CPU is the sum of the fp32 bounds", () => {
    const t = entryTolerance({ compressRatio: 128, maxAbsKv: 3, maxAbsScore: 5, ringElementsBf16: true });
    expect(t.cpu).toBe(t.fp32Cpu + t.bf16);
    expect(t.gpu).toBe(t.fp32Gpu + t.bf16);
    expect(t.gpuVsCpu).toBe(t.fp32Cpu + t.fp32Gpu);
    expect(t.fp32Gpu).toBeGreaterThan(t.fp32Cpu);
  });
  test("refuses bad inputs with the field", () => {
    const ok = { compressRatio: 4 as const, maxAbsKv: 1, maxAbsScore: 1, ringElementsBf16: false };
    expect(() => entryTolerance({ ...ok, maxAbsKv: -1 })).toThrowError(expect.objectContaining({ field: "maxAbsKv" }));
    expect(() => entryTolerance({ ...ok, ringElementsBf16: "no" as never })).toThrowError(
      expect.objectContaining({ code: "INVALID_TYPE", field: "ringElementsBf16" }),
    );
    expect(() => entryTolerance({ ...ok, maxAbsKV: 1 } as never)).toThrowError(
      expect.objectContaining({ code: "UNKNOWN_KEY", params: expect.objectContaining({ suggestion: "maxAbsKv" }) }),
    );
  });
});
