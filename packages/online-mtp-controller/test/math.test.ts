import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  clearedRow,
  compareRows,
  foldRow,
  fromBf16Bits,
  mergeRows,
  offlinePool,
  roundBf16,
  segmentStats,
  updateRow,
  type TokenInput,
} from "../src/testing.js";
import { toBf16Bits } from "../src/internal.js";

const Hs = 16; // the math is per channel; a narrow head keeps property tests fast

function tokens(seedVals: number[], n: number, scale = 3): TokenInput[] {
  return Array.from({ length: n }, (_, j) => ({
    kvScore: Float32Array.from({ length: 2 * Hs }, (_, i) =>
      Math.fround(Math.sin(seedVals[0]! * (j + 1) * (i + 3)) * scale),
    ),
    ape: Float32Array.from({ length: Hs }, (_, i) => Math.fround(Math.cos(seedVals[1]! * (j + 2) * (i + 1)))),
  }));
}

describe("reference math (online-mtp §2, §5.1, §5.2)", () => {
  test("online == offline pooling, float64 and float32 semantics, any chunk length", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 128 }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        (n, a, b) => {
          const toks = tokens([a, b], n);
          const want = offlinePool(toks, Hs);
          for (const prec of ["f64", "f32"] as const) {
            const got = foldRow(null, toks, 0, prec, Hs);
            const st = compareRows(
              got,
              want,
              prec === "f64" ? { atol: 1e-12, rtol: 1e-12 } : { atol: 2e-5, rtol: 2e-5 },
            );
            expect(st.violations).toBe(0);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  test("the cleared row is an identity of the update at pos != 0", () => {
    const toks = tokens([1.3, 2.1], 1);
    const fromCleared = updateRow(clearedRow(Hs), toks[0]!, 17, "f64");
    const reinit = updateRow(new Float64Array(3 * Hs), toks[0]!, 0, "f64");
    expect(Array.from(fromCleared)).toEqual(Array.from(reinit));
    const f32 = updateRow(Float32Array.from(clearedRow(Hs)), toks[0]!, 17, "f32");
    expect(compareRows(f32, reinit, { atol: 0, rtol: 1e-7 }).violations).toBe(0);
  });

  test("segment merge (prefill) == sequential fold at any cut point", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 128 }),
        fc.integer({ min: 1, max: 127 }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        (n, cutRaw, a) => {
          const cut = 1 + (cutRaw % (n - 1));
          const toks = tokens([a, a + 1], n);
          const seq = foldRow(null, toks, 0, "f64", Hs);
          for (const prec of ["f64", "f32"] as const) {
            const merged = mergeRows(
              segmentStats(toks.slice(0, cut), prec, Hs),
              segmentStats(toks.slice(cut), prec, Hs),
              prec,
            );
            expect(compareRows(merged, seq, { atol: 2e-5, rtol: 2e-5 }).violations).toBe(0);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  test("bf16 conversion rounds to nearest even and round-trips", () => {
    expect(toBf16Bits(1)).toBe(0x3f80);
    expect(fromBf16Bits(0x3f80)).toBe(1);
    expect(roundBf16(1 + 2 ** -8)).toBe(1); // tie → even
    expect(roundBf16(1 + 3 * 2 ** -8)).toBe(1 + 2 ** -6);
    expect(fromBf16Bits(toBf16Bits(Number.NEGATIVE_INFINITY))).toBe(Number.NEGATIVE_INFINITY);
    expect(Number.isNaN(roundBf16(Number.NaN))).toBe(true);
    fc.assert(
      fc.property(
        fc.float({ noNaN: true, noDefaultInfinity: true, min: Math.fround(-1e30), max: Math.fround(1e30) }),
        (x) => {
          const r = roundBf16(x);
          expect(Math.abs(r - x)).toBeLessThanOrEqual(Math.abs(x) * 2 ** -8 + 1e-38);
        },
      ),
    );
  });
});
