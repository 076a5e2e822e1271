/**
 * The CPU reference on the real planner's plans: every entry within entryTolerance's cpu bound of the float64 oracle
 * of its window's token rows (fp32 and bf16 state, c4 paged and request ring, c128, head dims 128 and 512, padded
 * tables), the pre-batch-ring order, decode, the state rows' dtype rounding, and the backend's own refusals.
 */
import { CompressPlanTable, WritePlanTable } from "@dsv4-kv/planner";
import { toBf16Bits } from "@dsv4-kv/online-mtp-controller/internal";
import { describe, expect, test } from "vitest";
import { CompressError, CpuCompressBackend, entryTolerance, offlineCompress } from "../src/index.js";
import { WritesFirstCpuBackend } from "../src/testing.js";
import { Harness } from "./helpers.js";
import { CONFIGS, configName, runSteps } from "./steps.js";

describe("CPU backend vs the float64 oracle on planner plans", () => {
  for (const o of CONFIGS) {
    test(`${configName(o)}: every entry within the cpu bound, padding NaN`, () => {
      let entries = 0;
      let worst = 0;
      runSteps(o, new CpuCompressBackend(Harness.geometry(o)), (r, _h, label) => {
        expect(r.maxRatio, label).toBeLessThanOrEqual(1);
        entries += r.entries;
        worst = Math.max(worst, r.maxRatio);
      });
      expect(entries).toBeGreaterThan(o.cr === 4 ? 20 : 4);
      expect(worst).toBeGreaterThan(0);
    });
  }
  test("the bound is not vacuous: bf16 entries against the fp32 bound fail", () => {
    const o = CONFIGS.find((c) => c.dtype === "bf16" && c.cr === 4)!;
    const t = entryTolerance({ compressRatio: 4, maxAbsKv: 2, maxAbsScore: 4, ringElementsBf16: true });
    let worstAbs = 0;
    runSteps(o, new CpuCompressBackend(Harness.geometry(o)), (r) => {
      worstAbs = Math.max(worstAbs, r.maxAbsError);
    });
    expect(worstAbs).toBeGreaterThan(t.fp32Cpu);
    expect(worstAbs).toBeLessThanOrEqual(t.cpu);
  });
});

/** c4, headDim 128: one compression reading ring rows 0..3 (overlap) and 4 (main), one write into row 0. */
function aliasBatch() {
  const d = 128;
  const re = 4 * d;
  const input = new Float32Array(4 * re).map((_, i) => Math.sin(i * 0.37));
  const planC = CompressPlanTable.fromRecords([
    { seqLen: 12, raggedId: 2, bufferLen: 5, readPage0: 0, readPage1: 1 },
  ]).bytes;
  const planW = WritePlanTable.fromRecords([{ raggedId: 3, writeLoc: 0 }]).bytes;
  return { input, inputRows: 4, planC, planW };
}

/** The oracle of aliasBatch's window with ring rows `ring` (rows 0..4). */
function aliasOracle(ring: Float32Array, input: Float32Array, ape: Float32Array): Float64Array {
  const d = 128;
  const re = 4 * d;
  const el = (row: Float32Array, r: number, half: 0 | 1) => ({
    kv: row.slice(r * re + half * d, r * re + (half + 1) * d),
    score: row.slice(r * re + (2 + half) * d, r * re + (3 + half) * d),
  });
  const elements = [el(ring, 0, 0), el(ring, 1, 0), el(ring, 2, 0), el(ring, 3, 0), el(ring, 4, 1)];
  for (let e = 5; e < 8; e++) elements.push(el(input, 2 - 7 + e, e < 4 ? 0 : 1));
  return offlineCompress({ compressRatio: 4, headDim: d, ape, elements });
}

describe("order: compressions read the pre-batch ring, writes land after", () => {
  for (const dtype of ["fp32", "bf16"] as const) {
    test(`${dtype}: a write into a slot the same batch's compression reads`, () => {
      const b = new CpuCompressBackend({ compressRatio: 4, headDim: 128, stateDtype: dtype, stateRows: 16 });
      const ape = new Float32Array(8 * 128).map((_, i) => Math.cos(i) * 0.5);
      b.setApe(ape);
      b.writeStateRows(
        0,
        new Float32Array(16 * 512).map((_, i) => Math.cos(i * 0.11) * 2),
      );
      const pre = b.readStateRows(0, 5);
      const batch = aliasBatch();
      const out = b.prefill(batch);
      const post = b.readStateRows(0, 5);
      const t = entryTolerance({ compressRatio: 4, maxAbsKv: 2, maxAbsScore: 2.5, ringElementsBf16: false });
      const want = aliasOracle(pre, batch.input, ape);
      const after = aliasOracle(post, batch.input, ape);
      let errPre = 0;
      let errPost = 0;
      for (let i = 0; i < 128; i++) {
        errPre = Math.max(errPre, Math.abs(out[i]! - want[i]!));
        errPost = Math.max(errPost, Math.abs(out[i]! - after[i]!));
      }
      // `pre` holds the values the kernels read (bf16 already rounded): the fp32 bound applies.
      expect(errPre).toBeLessThanOrEqual(t.fp32Cpu);
      // Against the post-write ring (what a write-first order would read) the entry is far off: the test can fail.
      expect(errPost).toBeGreaterThan(1e-3);
      const wrong = new WritesFirstCpuBackend(b.geometry);
      wrong.setApe(ape);
      wrong.writeStateRows(
        0,
        new Float32Array(16 * 512).map((_, i) => Math.cos(i * 0.11) * 2),
      );
      const bad = wrong.prefill(batch);
      expect(Math.abs(bad[0]! - want[0]!)).toBeGreaterThan(1e-3);
      // The write landed (row 0 = input row 3, rounded to the state dtype).
      const row3 = batch.input.subarray(3 * 512, 4 * 512);
      const bits = b.readStateBits(0, 1);
      if (dtype === "bf16") expect(Array.from(bits)).toEqual(Array.from(row3, (x) => toBf16Bits(x)));
      else expect(new Float32Array(bits.buffer)).toEqual(row3);
    });
  }
});

describe("decode: write, then compress where seqLen % cr == 0", () => {
  test("c4: the decoded token is element 7 of its own window; other rows NaN", () => {
    const o = { cr: 4 as const, headDim: 128 as const, dtype: "fp32" as const, numReqs: 2, seed: 5 };
    const h = new Harness(o, new CpuCompressBackend(Harness.geometry(o)));
    h.prefill([
      { rid: 0, extend: 7 },
      { rid: 1, extend: 5 },
    ]);
    const r = h.decode([0, 1]); // S = 8 (compresses: q = 7), S = 6 (does not)
    expect(r.entries).toBe(1);
    expect(r.maxRatio).toBeLessThanOrEqual(1);
    expect(r.out.subarray(128).every(Number.isNaN)).toBe(true);
    // The entry depends on the decoded token (position 7): changing it changes the oracle beyond the bound.
    const want = h.oracle(0, 7);
    expect(Math.abs(r.out[0]! - want[0]!)).toBeLessThan(1e-5);
  });
  test("q = 3: the overlap half is masked", () => {
    const o = { cr: 4 as const, headDim: 128 as const, dtype: "bf16" as const, numReqs: 1, seed: 6 };
    const h = new Harness(o, new CpuCompressBackend(Harness.geometry(o)));
    h.prefill([{ rid: 0, extend: 3 }]);
    const r = h.decode([0]);
    expect(r.entries).toBe(1);
    expect(r.maxRatio).toBeLessThanOrEqual(1);
  });
});

describe("state rows", () => {
  test("bf16: stores round to nearest even (ties to even), reads widen exactly", () => {
    const b = new CpuCompressBackend({ compressRatio: 128, headDim: 128, stateDtype: "bf16", stateRows: 2 });
    const v = new Float32Array(256);
    v[0] = 1 + 2 ** -8; // tie → 1 (even)
    v[1] = 1 + 3 * 2 ** -8; // tie → 1 + 2^-6 (even)
    v[2] = 1 + 2 ** -8 + 2 ** -20; // above the tie → 1 + 2^-7
    b.writeStateRows(1, v);
    expect(Array.from(b.readStateRows(1, 1).subarray(0, 3))).toEqual([1, 1 + 2 ** -6, 1 + 2 ** -7]);
    expect(b.readStateBits(1, 1)[0]).toBe(0x3f80);
    expect(b.readStateBits(0, 1).every((x) => x === 0xffff)).toBe(true); // never written: NaN bits
  });
  test("fp32: never-written rows hold all-ones bits (what the GPU's 0xFF fill reads as)", () => {
    const b = new CpuCompressBackend({ compressRatio: 4, headDim: 128, stateDtype: "fp32", stateRows: 1 });
    expect(b.readStateBits(0, 1).every((x) => x === 0xffffffff)).toBe(true);
  });
  const refusals: [string, (b: CpuCompressBackend) => unknown, string, string][] = [
    ["firstRow past the pool", (b) => b.readStateRows(3, 0), "INVALID_ARGUMENT", "firstRow"],
    ["count past the pool", (b) => b.readStateBits(1, 2), "INVALID_ARGUMENT", "count"],
    ["count a string", (b) => b.readStateRows(0, "1" as never), "INVALID_TYPE", "count"],
    ["values not whole rows", (b) => b.writeStateRows(0, new Float32Array(5)), "BUFFER_SHAPE", "values.length"],
    ["values past the pool", (b) => b.writeStateRows(1, new Float32Array(2 * 512)), "INVALID_ARGUMENT", "count"],
    [
      "values not finite",
      (b) => b.writeStateRows(0, new Float32Array(512).fill(Number.POSITIVE_INFINITY)),
      "INVALID_ARGUMENT",
      "values[0]",
    ],
    ["ape length", (b) => b.setApe(new Float32Array(7)), "BUFFER_SHAPE", "ape.length"],
    ["ape an array", (b) => b.setApe([] as never), "INVALID_TYPE", "ape"],
    [
      "prefill before setApe",
      (b) =>
        b.prefill({ input: new Float32Array(0), inputRows: 0, planC: new Uint8Array(0), planW: new Uint8Array(0) }),
      "INVALID_ARGUMENT",
      "ape",
    ],
    [
      "use after dispose",
      (b) => {
        b.dispose();
        return b.readStateRows(0, 1);
      },
      "INVALID_ARGUMENT",
      "backend",
    ],
  ];
  for (const [name, fn, code, field] of refusals) {
    test(`refuses ${name}: ${code} ${field}`, () => {
      const b = new CpuCompressBackend({ compressRatio: 4, headDim: 128, stateDtype: "fp32", stateRows: 2 });
      let err: unknown;
      try {
        fn(b);
      } catch (e) {
        err = e;
      }
      expect(CompressError.isInstance(err)).toBe(true);
      expect([(err as CompressError).code, (err as CompressError).field]).toEqual([code, field]);
    });
  }
});
