// The V4.1 ratio-1 / ratio-2 CPU reference against its float64 oracle within the derived bound
// (docs/reference/deepseek-v4.1.md §10.4), and the upstream order of its steps.
import { SeededRandom } from "@dsv4-kv/planner/internal";
import { describe, expect, it } from "vitest";
import {
  type LatentParams,
  V41_ENTRY_LAYOUTS,
  type V41EntryLayout,
  compressRatio1,
  compressRatio2,
  decodeEntry,
  oracleRatio1,
  oracleRatio2,
  plainRopeTable,
  v41EntryTolerance,
} from "../src/index.js";
import { bf16Round } from "../src/v41/numerics.js";

const rope = plainRopeTable(64, 160_000);

function params(rng: SeededRandom, layout: V41EntryLayout): LatentParams {
  const normWeight = new Float32Array(512).map(() => bf16Round(0.5 + 1.5 * rng.next()));
  return { normWeight, eps: Math.fround(1e-6), ropeTable: rope, layout };
}

function row(rng: SeededRandom, kvScale: number, scoreScale: number, elems = 1024): Float32Array {
  return new Float32Array(elems).map((_, i) => (i < 512 ? kvScale : scoreScale) * (2 * rng.next() - 1));
}

/** Largest |decoded − oracle| / bound over the entry; fails the test on any element past its bound. */
function worstRatio(bytes: Uint8Array, layout: V41EntryLayout, tol: Float64Array, want: Float64Array): number {
  const got = decodeEntry(layout, bytes);
  let worst = 0;
  for (let i = 0; i < 512; i++) {
    const err = Math.abs(got[i]! - want[i]!);
    if (err > tol[i]!) throw new Error(`element ${i}: |${got[i]} − ${want[i]}| = ${err} > ${tol[i]}`);
    worst = Math.max(worst, err / tol[i]!);
  }
  return worst;
}

describe("the CPU reference against the float64 oracle", () => {
  for (const layout of V41_ENTRY_LAYOUTS) {
    it(`ratio 2, ${layout}: every element within its bound over kv scales 0.01 .. 100`, () => {
      const rng = new SeededRandom(7);
      let worst = 0;
      for (let n = 0; n < 60; n++) {
        const p = params(rng, layout);
        const kvScale = 10 ** (rng.next() * 4 - 2);
        const partner = row(rng, kvScale, 8);
        const own = row(rng, kvScale, 8);
        const pos = 2 * rng.int(0, 31) + 1;
        const r = compressRatio2(partner, own, pos, p);
        const o = oracleRatio2(partner, own, pos, p);
        worst = Math.max(worst, worstRatio(r.bytes, layout, v41EntryTolerance(layout, o, p.normWeight), o.rotated));
      }
      // the bound is not vacuous: the quantisation steps it charges are reached to within a factor of a few
      expect(worst).toBeGreaterThan(0.2);
      expect(worst).toBeLessThanOrEqual(1);
    });

    it(`ratio 1, ${layout}: every element within its bound`, () => {
      const rng = new SeededRandom(11);
      let worst = 0;
      for (let n = 0; n < 60; n++) {
        const p = params(rng, layout);
        const kv = row(rng, 10 ** (rng.next() * 4 - 2), 0, 512).map(bf16Round);
        const pos = rng.int(0, 63);
        const r = compressRatio1(kv, pos, p);
        const o = oracleRatio1(kv, pos, p);
        worst = Math.max(worst, worstRatio(r.bytes, layout, v41EntryTolerance(layout, o, p.normWeight), o.rotated));
      }
      expect(worst).toBeGreaterThan(0.2);
      expect(worst).toBeLessThanOrEqual(1);
    });
  }
});

describe("the upstream order of the steps", () => {
  const rng = new SeededRandom(3);
  const p = params(rng, "v41-fp4");

  it("ratio 2 pools with the softmax of the two scores (equal scores: the mean; a gap of ln 3: 3 : 1)", () => {
    const a = row(rng, 1, 0);
    const b = row(rng, 1, 0);
    const { preRope } = compressRatio2(a, b, 1, p);
    const mean = new Float32Array(512).map((_, i) => (a[i]! + b[i]!) / 2);
    const fromMean = compressRatio1(mean.map(bf16Round), 0, p);
    expect(Array.from(preRope)).toEqual(Array.from(fromMean.preRope));
    const b3 = b.slice();
    for (let i = 512; i < 1024; i++) b3[i] = Math.log(3);
    const o = oracleRatio2(a, b3, 1, p);
    for (let i = 0; i < 512; i++) expect(o.pooled[i]).toBeCloseTo(0.25 * a[i]! + 0.75 * b3[i]!, 6);
  });

  it("RoPE turns the tail at pos for ratio 1 and pos − 1 for ratio 2; the nope part is not turned", () => {
    const a = row(rng, 1, 2);
    const b = row(rng, 1, 2);
    const at5 = compressRatio2(a, b, 5, p);
    const o = oracleRatio2(a, b, 5, p);
    expect(Array.from(o.ropeRow)).toEqual(Array.from(rope.subarray(4 * 64, 5 * 64)));
    expect(Array.from(at5.stored.subarray(0, 448))).toEqual(Array.from(at5.preRope.subarray(0, 448)));
    const kv = at5.preRope; // any bf16 row
    expect(oracleRatio1(kv, 9, p).ropeRow[2]).toBe(rope[9 * 64 + 2]);
  });

  it("refuses bad input with typed errors naming the field", () => {
    const a = row(rng, 1, 1);
    expect(() => compressRatio2(a, a, 4, p)).toThrow(expect.objectContaining({ field: "position" }));
    expect(() => compressRatio2(a, a.subarray(1), 3, p)).toThrow(expect.objectContaining({ field: "own.length" }));
    expect(() => compressRatio1(new Float32Array(512).fill(0.1), 0, p)).toThrow(
      expect.objectContaining({ field: "kv[0]" }),
    );
    const bad = { ...p, normWeight: new Float32Array(512).fill(0.1) };
    expect(() => compressRatio1(new Float32Array(512), 0, bad)).toThrow(
      expect.objectContaining({ field: "normWeight[0]" }),
    );
  });
});
