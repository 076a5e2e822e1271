/**
 * The host side of test/bindings/compress.test.ts, checked without a GPU: the float64 reference on windows whose entry
 * is known by hand, the cases the GPU tests build (random planner batches, the pre-batch-ring batches, the bad rows and
 * the error word each must produce), and the tolerance itself: an fp32 evaluation of the same math (the kernels' order:
 * max, then Σ exp(s − m)·kv and Σ exp(s − m), then one division) stays inside (2W + 16)·2^-24·max|kv| on the data the
 * GPU tests use, so a kernel failing it is wrong, not unlucky.
 */
import { INVALID_SEQ_LEN } from "@dsv4-kv/planner";
import { describe, expect, test } from "vitest";
import {
  badDecodeCase,
  badPrefillCase,
  DECODE_BAD,
  GEOMETRIES,
  type Geometry,
  LAYOUTS,
  ORDER_CASES,
  orderCase,
  PREFILL_BAD_SETS,
  randomData,
  randomDecode,
  randomPrefill,
  refBatch,
} from "./compress-cases.js";
import {
  columns,
  entryTolerance,
  prefillSources,
  type RefBatch,
  refDecode,
  refPrefill,
  rowBlocksOf,
  type Source,
  stateValues,
} from "./compress-reference.js";
import { Rng } from "@dsv4-kv/vitest-preset/rng";

describe("the float64 reference on windows known by hand", () => {
  /** A c4 batch of one state row page pair and 8 input rows, every score 0 (equal weights) unless patched. */
  function c4Batch(): RefBatch {
    const H = 128;
    const rowElems = 4 * H;
    const input = new Float32Array(8 * rowElems);
    for (let r = 0; r < 8; r++) {
      input.fill(r + 1, r * rowElems, r * rowElems + H); // kv_ov = r + 1
      input.fill(10 * (r + 1), r * rowElems + H, r * rowElems + 2 * H); // kv = 10 (r + 1)
    }
    const state = new Float32Array(8 * rowElems);
    for (let r = 0; r < 8; r++) state.fill(-(r + 1), r * rowElems, r * rowElems + 2 * H);
    const stateBits = new Uint32Array(state.buffer);
    return {
      cr: 4,
      headDim: H,
      stateType: 0,
      stateRows: 8,
      stateBits,
      inputRows: 8,
      input,
      ape: new Float32Array(8 * H),
    };
  }
  test("c4, all from the input: the overlap half of rows 0..3 and the main half of rows 4..7, equal weights", () => {
    const r = refPrefill(c4Batch(), [{ seqLen: 8, raggedId: 7, bufferLen: 0, readPage0: -1, readPage1: 0 }], []);
    // elements 0..3: kv_ov of rows 0..3 = 1..4; elements 4..7: kv of rows 4..7 = 50..80; mean = (10 + 260) / 8.
    expect(r.entries[0]![5]).toBeCloseTo(270 / 8, 12);
    expect(r.kvMax[0]![5]).toBe(80);
  });
  test("c4 at q = 3: the overlap half is masked (excluded, not zero)", () => {
    const r = refPrefill(c4Batch(), [{ seqLen: 4, raggedId: 3, bufferLen: 0, readPage0: -1, readPage1: 0 }], []);
    // elements 4..7: kv of input rows 0..3 = 10, 20, 30, 40.
    expect(r.entries[0]![0]).toBeCloseTo(25, 12);
  });
  test("c4 with bufferLen 5: elements 0..4 from the ring pages, the rest from the input", () => {
    const b = c4Batch();
    const r = refPrefill(b, [{ seqLen: 8, raggedId: 7, bufferLen: 5, readPage0: 1, readPage1: 0 }], []);
    const src = prefillSources(4, { seqLen: 8, raggedId: 7, bufferLen: 5, readPage0: 1, readPage1: 0 });
    expect(src.slice(0, 6)).toEqual([
      { from: "state", row: 4 },
      { from: "state", row: 5 },
      { from: "state", row: 6 },
      { from: "state", row: 7 },
      { from: "state", row: 0 },
      { from: "input", row: 5 },
    ]);
    // state rows 4..7 overlap kv = -5..-8, state row 0 main kv = -1, input rows 5..7 main kv = 60, 70, 80.
    expect(r.entries[0]![0]).toBeCloseTo((-5 - 6 - 7 - 8 - 1 + 60 + 70 + 80) / 8, 12);
  });
  test("a higher score takes the weight: one element at +40 dominates", () => {
    const b = c4Batch();
    b.input[7 * 4 * 128 + 3 * 128 + 2] = 40; // score of element 7, channel 2
    const r = refPrefill(b, [{ seqLen: 8, raggedId: 7, bufferLen: 0, readPage0: -1, readPage1: 0 }], []);
    expect(r.entries[0]![2]).toBeCloseTo(80, 10);
    expect(r.entries[0]![3]).toBeCloseTo(270 / 8, 12);
  });
  test("writes come after every compression, rounded to the state dtype", () => {
    const b = { ...c4Batch(), stateType: 1 as const, stateBits: new Uint16Array(8 * 512) };
    b.input[2 * 512] = 1 + 2 ** -9; // halfway between two bf16 values: rounds to even (1)
    b.input[2 * 512 + 1] = 1 + 3 * 2 ** -9; // rounds up to 1 + 2^-7
    const r = refPrefill(b, [], [{ raggedId: 2, writeLoc: 6 }]);
    const vals = stateValues(r.stateBits, 1);
    expect([vals[6 * 512], vals[6 * 512 + 1]]).toEqual([1, 1 + 2 ** -7]);
  });
});

describe("the cases the GPU tests run", () => {
  test.each(LAYOUTS.map((L) => [L.name, L] as const))("%s: random prefill batches are padded and valid", (_, L) => {
    const rng = new Rng(9);
    let ringRows = 0;
    for (let i = 0; i < 20; i++) {
      const c = randomPrefill(rng, L);
      expect(c.planC.some((r) => r.seqLen === INVALID_SEQ_LEN)).toBe(true);
      const g: Geometry = { cr: L.cr, headDim: 128, stateType: 0, stateRows: L.stateRows };
      const ref = refPrefill(refBatch(g, randomData(rng, g, c.inputRows), c.inputRows), c.planC, c.planW);
      expect(ref.errors).toEqual([]);
      ringRows += c.planC.filter((r) => r.seqLen !== INVALID_SEQ_LEN && r.bufferLen > 0).length;
    }
    expect(ringRows, "some compressions read the ring").toBeGreaterThan(5);
  });
  test.each(LAYOUTS.map((L) => [L.name, L] as const))("%s: random decode batches pool and pad", (_, L) => {
    const rng = new Rng(10);
    let pooled = 0;
    for (let i = 0; i < 20; i++) {
      const planD = randomDecode(rng, L);
      const g: Geometry = { cr: L.cr, headDim: 128, stateType: 1, stateRows: L.stateRows };
      const ref = refDecode(refBatch(g, randomData(rng, g, planD.length), planD.length), planD);
      expect(ref.errors).toEqual([]);
      pooled += ref.entries.filter((e) => e !== null).length;
      // No two rows write, or pool from, the same ring rows (the rows run in parallel on the device).
      const valid = planD.filter((d) => d.seqLen !== INVALID_SEQ_LEN);
      expect(new Set(valid.map((d) => d.readPage1)).size).toBe(valid.length);
    }
    expect(pooled).toBeGreaterThan(20);
  });
  test.each(ORDER_CASES.map((o) => [o.L.name, o] as const))("%s: the order case clobbers what it reads", (_, o) => {
    const { c, clobbered } = orderCase(o.L, o.seqLens, o.extendLens);
    expect(clobbered).toBeGreaterThan(0);
    const g: Geometry = { cr: o.L.cr, headDim: 128, stateType: 0, stateRows: o.L.stateRows };
    const data = randomData(new Rng(77), g, c.inputRows);
    const ref = refPrefill(refBatch(g, data, c.inputRows), c.planC, c.planW);
    const after = refPrefill({ ...refBatch(g, data, c.inputRows), stateBits: ref.stateBits }, c.planC, []);
    const moved = ref.entries.filter((e, i) => e?.some((v, d) => Math.abs(v - after.entries[i]![d]!) > 1e-3)).length;
    expect(moved).toBeGreaterThan(0);
  });
  for (const { L, base, cases } of PREFILL_BAD_SETS) {
    test.each(cases.map(([name, c, w]) => [name, c, w] as const))(`${L.name} prefill: %s`, (_, patchC, patchW) => {
      const { c, want } = badPrefillCase(L, base, patchC, patchW);
      const g: Geometry = { cr: L.cr, headDim: 128, stateType: 1, stateRows: L.stateRows };
      const ref = refPrefill(refBatch(g, randomData(new Rng(31), g, c.inputRows), c.inputRows), c.planC, c.planW);
      expect(ref.errors).toEqual([want]);
    });
  }
  test.each(DECODE_BAD.map(([L, base, name, patch]) => [`${L.name}: ${name}`, L, base, patch] as const))(
    "decode %s",
    (_, L, base, patch) => {
      const { planD, want } = badDecodeCase(L, base, patch);
      const g: Geometry = { cr: L.cr, headDim: 512, stateType: 0, stateRows: L.stateRows };
      const ref = refDecode(refBatch(g, randomData(new Rng(41), g, planD.length), planD.length), planD);
      expect(ref.errors).toEqual([want]);
    },
  );
});

/** The kernels' fp32 evaluation of one window on channel d: fp32 s = score + ape, max, fma sums, one division. */
function fp32Entry(b: RefBatch, values: (s: Source) => [Float32Array, number], src: Source[], d: number): number {
  const f = Math.fround;
  const used = src.flatMap((s, e) => (s.from === "masked" ? [] : [{ e, at: values(s) }]));
  const score = used.map(({ e, at }) =>
    f(at[0][at[1] + columns(b.cr, b.headDim, e).score + d]! + b.ape[e * b.headDim + d]!),
  );
  const m = Math.max(...score);
  let sum = 0;
  let acc = 0;
  used.forEach(({ e, at }, i) => {
    const w = f(Math.exp(f(score[i]! - m)));
    sum = f(sum + w);
    acc = f(w * at[0][at[1] + columns(b.cr, b.headDim, e).kv + d]! + acc);
  });
  return f(acc / sum);
}

describe("the tolerance holds for an fp32 evaluation on the GPU tests' data", () => {
  test.each(
    GEOMETRIES.filter(({ g }) => g.headDim === 128).map(({ L, g }) => [`${L.name} ${g.stateType}`, L, g] as const),
  )("%s", (_, L, g) => {
    const rng = new Rng(123);
    const rowElems = rowBlocksOf(g.cr) * g.headDim;
    let worst = 0;
    for (let it = 0; it < 4; it++) {
      const c = randomPrefill(rng, L);
      const data = randomData(rng, g, c.inputRows);
      const b = refBatch(g, data, c.inputRows);
      const ref = refPrefill(b, c.planC, c.planW);
      const state = stateValues(b.stateBits, g.stateType);
      const at = (s: Source): [Float32Array, number] =>
        s.from === "state" ? [state, s.row * rowElems] : [b.input, s.from === "input" ? s.row * rowElems : 0];
      c.planC.forEach((row, i) => {
        const want = ref.entries[i];
        if (!want) return;
        const src = prefillSources(g.cr, row);
        for (let d = 0; d < g.headDim; d++) {
          const err = Math.abs(fp32Entry(b, at, src, d) - want[d]!);
          worst = Math.max(worst, err / entryTolerance(g.cr, ref.kvMax[i]![d]!));
        }
      });
    }
    expect(worst).toBeLessThan(0.5);
  });
});
