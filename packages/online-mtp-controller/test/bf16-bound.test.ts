// The derived bf16 bound (docs/reference/online-mtp.md §5.4): its building blocks, the rounded reference, and the
// runs of the bf16 campaign that the old flat tolerance (0.05 + 0.05·|ref|) failed.
import { describe, expect, test } from "vitest";
import { BF16_UNIT_ROUNDOFF, elementBounds, foldStepBound, roundedSpread, storeBound } from "../src/bf16-bound.js";
import { ChunkReference, emptyRowErrorStats } from "../src/bf16-reference.js";
import { CpuBackend, runSimulation } from "../src/index.js";
import { STATE_TOLERANCE } from "../src/internal.js";
import { roundBf16 } from "../src/testing.js";
import { bf16RoundOf as bf16Round } from "../src/math.js";
import { FaultyCpuBackend } from "../src/testing.js";

const U = BF16_UNIT_ROUNDOFF;

describe("bound building blocks", () => {
  test("bf16Round is the kernels' store (round to nearest even through fp32)", () => {
    for (const x of [1, 1.00390625, 1.005859375, -3.25, 60.123, 1e-30, 0]) expect(bf16Round(x)).toBe(roundBf16(x));
    expect(Math.abs(bf16Round(Math.PI) - Math.PI)).toBeLessThanOrEqual(U * Math.PI);
  });

  test("roundedSpread: 0 when the whole window rounds to one value, one ulp when it straddles a midpoint", () => {
    expect(roundedSpread(1.5, 1e-6)).toBe(0);
    const mid = 1 + 2 ** -8; // midpoint between 1 and 1 + 2^-7
    expect(roundedSpread(mid, 1e-6)).toBe(2 ** -7);
    expect(roundedSpread(1, Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });

  test("a store adds u to the log weight (and u·|m| only when the max may have changed) and u·|a| to the mean", () => {
    const o = new Float64Array(3);
    storeBound(0, 0, 0, 4, 0.5, false, 0, o);
    expect(o[0]).toBeCloseTo(-Math.log1p(-U), 15);
    expect(o[1]).toBeCloseTo(U * 0.5, 15);
    expect(o[2]).toBeCloseTo(U * 4, 15);
    storeBound(0, 0, 0, 4, 0.5, true, 0, o);
    expect(o[0]).toBeCloseTo(-Math.log1p(-U) + 4 * U, 15);
  });

  test("a fold step dilutes the log-weight error by λ and moves the mean by at most λ(1−λ)(e^ℓ−1)|a−k|", () => {
    const o = new Float64Array(2);
    foldStepBound(0.01, 0.002, 0.75, 1, -1, 0, 0, o);
    expect(o[0]).toBeCloseTo(0.0075, 15);
    expect(o[1]).toBeCloseTo(Math.min(1, 0.75 * Math.exp(0.01)) * 0.002 + 0.75 * 0.25 * Math.expm1(0.01) * 2, 15);
    const e = new Float64Array(3);
    elementBounds(0.01, 0.002, 0.02, 10, e);
    expect([...e]).toEqual([0.02, 10 * Math.expm1(0.03), 0.002]);
  });

  test("the bound holds for a worst case it is derived for: one token per store, a growing max", () => {
    // Every token raises the max (s increasing), every store rounds max, sum and acc: the bound must still hold for an
    // emulated kernel (fp32 fold, bf16 store) at every position of the chunk.
    const H = 4;
    const ref = new ChunkReference(H, true);
    const km = new Float64Array(H);
    const ks = new Float64Array(H);
    const ka = new Float64Array(H);
    const f = Math.fround;
    for (let pos = 0; pos < 127; pos++) {
      const kv = Float32Array.from({ length: H }, (_, d) => Math.sin(pos * 1.7 + d));
      const score = Float32Array.from({ length: H }, (_, d) => 0.05 * pos + 0.3 * Math.cos(pos + d));
      const ape = new Float32Array(H);
      ref.append({ kvScore: Float32Array.of(...kv, ...score), ape });
      ref.store();
      for (let d = 0; d < H; d++) {
        const s = f(score[d]! + ape[d]!);
        if (pos === 0) {
          km[d] = s;
          ks[d] = 1;
          ka[d] = kv[d]!;
        } else {
          const m2 = Math.max(km[d]!, s);
          const al = f(ks[d]! * f(Math.exp(f(km[d]! - m2))));
          const be = f(Math.exp(f(s - m2)));
          const s2 = f(al + be);
          ka[d] = f(f(f(ka[d]! * al) + f(kv[d]! * be)) / s2);
          km[d] = m2;
          ks[d] = s2;
        }
        km[d] = roundBf16(km[d]!);
        ks[d] = roundBf16(ks[d]!);
        ka[d] = roundBf16(ka[d]!);
      }
      const row = Float32Array.of(...km, ...ks, ...ka);
      const bad: unknown[] = [];
      ref.checkRow(row, emptyRowErrorStats(), (v) => bad.push(v));
      expect(bad, `position ${pos}`).toEqual([]);
    }
    expect(ref.roundings).toBe(127);
  });
});

describe("the rounded reference catches a store that does not round where the kernels round", () => {
  test("a row one ulp off the kernels' rounding is outside the rounded reference's spread", () => {
    const H = 2;
    const ref = new ChunkReference(H, true);
    for (let pos = 0; pos < 5; pos++) {
      ref.append({ kvScore: Float32Array.of(0.3 * pos, -0.2, 0.1 * pos, 0.4), ape: new Float32Array(H) });
    }
    ref.store();
    const exact = ref.exactRow();
    const rounded = exact.map((x) => roundBf16(x));
    const bad: { kind: string }[] = [];
    ref.checkRow(Float32Array.from(rounded), emptyRowErrorStats(), (v) => bad.push(v));
    expect(bad).toEqual([]);
    // one bf16 ulp off in acc (a store that truncates, or rounds twice): the rounded reference's spread is zero there
    const off = Float32Array.from(rounded);
    off[2 * H] = rounded[2 * H]! + 2 ** (Math.floor(Math.log2(Math.abs(rounded[2 * H]!))) - 7);
    ref.checkRow(off, emptyRowErrorStats(), (v) => bad.push(v));
    expect(bad.map((v) => v.kind)).toContain("bf16-vs-rounded");
  });
});

describe("the simulation catches a kernel that rounds at another point (mutation test)", () => {
  test("writePrefix rounding its registers after every step is outside the rounded reference's spread", () => {
    // The errors stay of bf16 size (it rounds where decode rounds), so a flat tolerance rarely sees it.
    const opts = { requests: 8, steps: 100, draftTokens: 4, seed: 3, stateDtype: "bf16" } as const;
    const derived = runSimulation({ ...opts, backend: new FaultyCpuBackend({ roundEveryStep: true }) });
    expect(derived.ok).toBe(false);
    expect(derived.reason).toMatch(/bf16-vs-rounded/);
    expect(derived.violationDetails[0]!.kind).toBe("bf16-vs-rounded");
    expect(runSimulation({ ...opts, backend: new CpuBackend() }).ok).toBe(true);
  }, 180_000);
});

// Seeds 8940..8968 × D 1..8 (232 runs) is the campaign of docs/reference/online-mtp.md §5.4; these five failed the old
// flat tolerance (all at D = 1: one bf16 store per token, up to 127 per chunk).
const FAILED_BEFORE = [8941, 8946, 8949, 8950, 8968];

describe("bf16 runs the flat tolerance failed pass the derived bound", () => {
  for (const seed of FAILED_BEFORE) {
    test(`seed ${seed}, D 1`, () => {
      const opts = { requests: 16, steps: 200, draftTokens: 1, seed, stateDtype: "bf16" } as const;
      const flat = runSimulation({ ...opts, backend: new CpuBackend(), tolerance: STATE_TOLERANCE.bf16 });
      expect(flat.ok).toBe(false);
      expect(flat.lostCommits).toBe(0);
      const first = flat.violationDetails[0]!;
      expect(first.kind).toBe("allclose-vs-exact");
      // a row late in its chunk: many stores, each rounding sum and acc
      expect(first.roundings).toBeGreaterThan(20);
      const derived = runSimulation({ ...opts, backend: new CpuBackend() });
      expect(derived.reason).toBeNull();
      expect(derived.ok).toBe(true);
      expect(derived.bf16!.maxRatio).toBeLessThanOrEqual(1);
    }, 180_000);
  }
});
