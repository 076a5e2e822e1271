/**
 * kernels-cuda's raw ring compress bindings on a GPU (its native/compress), tested here because their plan rows come
 * from the planner, which kernels-cuda's own tests may not import (docs/decisions.md D47): the refusals that need
 * DeviceBuffers (sizes, freed buffers, the context), then the kernels against the float64 reference of
 * test/bindings/compress-reference.ts on plans made by the real planner (c4 paged and request ring, c128; head dim 128
 * and 512; fp32 and bf16 state; tables padded as under CUDA graphs): entries within (2W + 16)·2^-24·max|kv| per
 * channel, state rows bitwise, padding rows of `out` and canary rows past every buffer's extent untouched; bad plan
 * rows reported in the error word with the other rows intact; compressions reading the pre-batch ring; CUDA-graph
 * capture through `bench`. Without a GPU every test here skips with the probe's reason (the argument refusals that need
 * no buffers: kernels-cuda's test/compress-keys.test.ts).
 */
import {
  CompressPlanTable,
  type DecodePlanRecord,
  DecodePlanTable,
  INVALID_SEQ_LEN,
  WritePlanTable,
} from "@dsv4-kv/planner";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { describe, expect, it } from "vitest";
import {
  createContext,
  createDeviceBuffer,
  type DeviceBuffer,
  type GpuContext,
  getDefaultContext,
  KernelsCudaError,
  probe,
  probeCompress,
} from "@dsv4-kv/kernels-cuda";
import { type CompressNative, compressNative, onlineMtpNative } from "@dsv4-kv/kernels-cuda/internal";
import { processBenchAddon } from "@dsv4-kv/kernels-cuda/testing";
import {
  badDecodeCase,
  badPrefillCase,
  C4_PAGED,
  CANARY_ROWS,
  DECODE_BAD,
  dtypeName,
  extendCase,
  GEOMETRIES,
  type Geometry,
  LONG_EXTEND,
  ORDER_CASES,
  orderCase,
  PREFILL_BAD_SETS,
  type PrefillCase,
  randomData,
  randomDecode,
  randomPrefill,
  refBatch,
  rowElemsOf,
  sharedPageOrderCase,
} from "./compress-cases.js";
import {
  type ErrWord,
  type RefResult,
  type StateBits,
  entryTolerance,
  refDecode,
  refPrefill,
} from "./compress-reference.js";
import { Rng } from "@dsv4-kv/vitest-preset/rng";

interface Env {
  nat: CompressNative;
  ctx: GpuContext;
  bufs: DeviceBuffer[];
}
const gpuTest = createGpuTest(
  probeCompress,
  (): Env => ({ nat: compressNative(), ctx: getDefaultContext(), bufs: [] }),
);

/** Runs `fn`, then frees every buffer it allocated through `env`. */
function withBuffers(env: Env, fn: () => void): void {
  try {
    fn();
  } finally {
    for (const b of env.bufs) b.free();
    env.bufs.length = 0;
  }
}
function alloc(env: Env, bytes: number): DeviceBuffer {
  const b = createDeviceBuffer(bytes, env.ctx);
  env.bufs.push(b);
  return b;
}
function dev(env: Env, view: ArrayBufferView, minBytes = 16): DeviceBuffer {
  const b = alloc(env, Math.max(minBytes, view.byteLength));
  if (view.byteLength > 0) b.upload(view);
  return b;
}

/** What `fn` throws, as a KernelsCudaError. */
function refusal(fn: () => unknown): KernelsCudaError {
  try {
    fn();
  } catch (e) {
    if (KernelsCudaError.isInstance(e)) return e as KernelsCudaError;
    throw e;
  }
  throw new Error("the call was accepted");
}

/** Bits of `out` rows the kernels must not write (padding, bad and non-pooling rows, rows past the extent). */
const SENTINEL = 0x7fc0dead;
// ---- one batch on the device ----------------------------------------------------------------------------------
interface DeviceResult {
  /** stateRows + canary rows. */
  stateBits: StateBits;
  /** (rows + canary rows) × headDim. */
  out: Float32Array;
  err: ErrWord;
}

function outBuffer(env: Env, rows: number, headDim: number): DeviceBuffer {
  return dev(env, new Uint32Array((rows + CANARY_ROWS) * headDim).fill(SENTINEL));
}
function readBack(
  g: Geometry,
  state: DeviceBuffer,
  out: DeviceBuffer,
  err: DeviceBuffer,
  outRows: number,
): DeviceResult {
  const n = (g.stateRows + CANARY_ROWS) * rowElemsOf(g);
  const stateBits = state.download(g.stateType === 0 ? new Uint32Array(n) : new Uint16Array(n));
  const outv = out.download(new Float32Array((outRows + CANARY_ROWS) * g.headDim));
  const e = err.download(new Int32Array(4));
  return { stateBits, out: outv, err: [e[0]!, e[1]!, e[2]!, e[3]!] };
}

function runPrefill(env: Env, g: Geometry, c: PrefillCase, data: ReturnType<typeof randomData>): DeviceResult {
  const state = dev(env, data.bits);
  const out = outBuffer(env, c.planC.length, g.headDim);
  const err = dev(env, new Int32Array(4));
  env.nat.prefill(env.ctx, {
    state,
    input: dev(env, data.input),
    ape: dev(env, data.ape),
    planC: dev(env, CompressPlanTable.fromRecords(c.planC).bytes),
    planW: dev(env, WritePlanTable.fromRecords(c.planW).bytes),
    out,
    err,
    stateRows: g.stateRows,
    inputRows: c.inputRows,
    numPlanC: c.planC.length,
    numPlanW: c.planW.length,
    cr: g.cr,
    headDim: g.headDim,
    stateType: g.stateType,
  });
  return readBack(g, state, out, err, c.planC.length);
}

function runDecode(
  env: Env,
  g: Geometry,
  planD: DecodePlanRecord[],
  data: ReturnType<typeof randomData>,
): DeviceResult {
  const state = dev(env, data.bits);
  const out = outBuffer(env, planD.length, g.headDim);
  const err = dev(env, new Int32Array(4));
  env.nat.decode(env.ctx, {
    state,
    input: dev(env, data.input),
    ape: dev(env, data.ape),
    planD: dev(env, DecodePlanTable.fromRecords(planD).bytes),
    out,
    err,
    stateRows: g.stateRows,
    inputRows: planD.length,
    batch: planD.length,
    cr: g.cr,
    headDim: g.headDim,
    stateType: g.stateType,
  });
  return readBack(g, state, out, err, planD.length);
}

// ---- comparisons (counted, so a failure names the first bad element instead of dumping megabytes) ---------------
const bitsOf = (f: Float32Array, i: number) => new Uint32Array(f.buffer, f.byteOffset + i * 4, 1)[0]!;

function expectEntries(what: string, g: Geometry, ref: RefResult, got: DeviceResult): void {
  const H = g.headDim;
  let wrong = 0;
  let first = "";
  ref.entries.forEach((want, i) => {
    for (let d = 0; d < H; d++) {
      const v = got.out[i * H + d]!;
      const ok = want
        ? Math.abs(v - want[d]!) <= entryTolerance(g.cr, ref.kvMax[i]![d]!)
        : bitsOf(got.out, i * H + d) === SENTINEL;
      if (!ok && wrong++ === 0) first = `row ${i} channel ${d}: got ${v}, want ${want ? want[d] : "untouched"}`;
    }
  });
  for (let i = ref.entries.length * H; i < got.out.length; i++)
    if (bitsOf(got.out, i) !== SENTINEL && wrong++ === 0) first = `out canary element ${i} written`;
  expect(wrong, `${what}: ${wrong} wrong out elements; first: ${first}`).toBe(0);
}

function expectState(what: string, g: Geometry, ref: RefResult, got: DeviceResult, initial: StateBits): void {
  const n = g.stateRows * rowElemsOf(g);
  let wrong = 0;
  let first = "";
  for (let i = 0; i < got.stateBits.length; i++) {
    const want = i < n ? ref.stateBits[i]! : initial[i]!;
    if (got.stateBits[i] !== want && wrong++ === 0)
      first = `row ${Math.floor(i / rowElemsOf(g))} element ${i % rowElemsOf(g)}${i >= n ? " (canary)" : ""}`;
  }
  expect(wrong, `${what}: ${wrong} wrong state elements; first: ${first}`).toBe(0);
}

function expectBatch(what: string, g: Geometry, ref: RefResult, got: DeviceResult, initial: StateBits): void {
  expectEntries(what, g, ref, got);
  expectState(what, g, ref, got, initial);
}

describe("prefill: random planner batches against the float64 reference", () => {
  for (const { L, g } of GEOMETRIES) {
    gpuTest(
      `${L.name}, headDim ${g.headDim}, ${dtypeName(g.stateType)}: entries, state bitwise, padding and canaries`,
      ({ gpu: env }) => {
        const rng = new Rng(1000 + g.cr + g.headDim + 7 * g.stateType + (L.useReqRing ? 3 : 0));
        for (let it = 0; it < 3; it++) {
          withBuffers(env, () => {
            const c = randomPrefill(rng, L);
            expect(c.planC.some((r) => r.seqLen === INVALID_SEQ_LEN)).toBe(true); // padded as under a graph
            const data = randomData(rng, g, c.inputRows);
            const got = runPrefill(env, g, c, data);
            const ref = refPrefill(refBatch(g, data, c.inputRows), c.planC, c.planW);
            expect(ref.errors).toEqual([]);
            expect(got.err).toEqual([0, 0, 0, 0]);
            expectBatch(`batch ${it}`, g, ref, got, data.bits);
          });
        }
      },
    );
  }
});

describe("prefill: a long extend, where the c4 kernel's work slots take several items each", () => {
  for (const stateType of [0, 1] as const) {
    gpuTest(
      `c4 paged, headDim 512, ${dtypeName(stateType)}: 1,200 compress rows, entries and state`,
      ({ gpu: env }) => {
        withBuffers(env, () => {
          const g: Geometry = { cr: 4, headDim: 512, stateType, stateRows: C4_PAGED.stateRows };
          const c = extendCase(C4_PAGED, LONG_EXTEND.seqLens, LONG_EXTEND.extendLens);
          expect(c.planC.length * (g.headDim / 128), "more items than an H200 has warp slots").toBeGreaterThan(
            132 * 16,
          );
          const data = randomData(new Rng(91 + stateType), g, c.inputRows);
          const got = runPrefill(env, g, c, data);
          const ref = refPrefill(refBatch(g, data, c.inputRows), c.planC, c.planW);
          expect(ref.errors).toEqual([]);
          expect(got.err).toEqual([0, 0, 0, 0]);
          expectBatch("long extend", g, ref, got, data.bits);
        });
      },
    );
  }
});

describe("decode: random planner batches against the float64 reference", () => {
  for (const { L, g } of GEOMETRIES) {
    gpuTest(
      `${L.name}, headDim ${g.headDim}, ${dtypeName(g.stateType)}: write, pool where the window closes, padding`,
      ({ gpu: env }) => {
        const rng = new Rng(2000 + g.cr + g.headDim + 7 * g.stateType + (L.useReqRing ? 3 : 0));
        for (let it = 0; it < 3; it++) {
          withBuffers(env, () => {
            const planD = randomDecode(rng, L);
            const data = randomData(rng, g, planD.length);
            const got = runDecode(env, g, planD, data);
            const ref = refDecode(refBatch(g, data, planD.length), planD);
            expect(ref.errors).toEqual([]);
            expect(got.err).toEqual([0, 0, 0, 0]);
            expectBatch(`batch ${it}`, g, ref, got, data.bits);
          });
        }
      },
    );
  }
});

// ---- the pre-batch ring ----------------------------------------------------------------------------------------
describe("prefill order: every compression of a batch reads the pre-batch ring", () => {
  for (const { L, seqLens, extendLens } of ORDER_CASES) {
    for (const stateType of [0, 1] as const) {
      gpuTest(`${L.name} ${dtypeName(stateType)}: S ${seqLens[0]}, E ${extendLens[0]}`, ({ gpu: env }) => {
        withBuffers(env, () => {
          const g: Geometry = { cr: L.cr, headDim: 128, stateType, stateRows: L.stateRows };
          const { c, clobbered } = orderCase(L, seqLens, extendLens);
          expect(clobbered, "the batch writes slots its compressions read").toBeGreaterThan(0);
          const data = randomData(new Rng(77 + stateType), g, c.inputRows);
          const got = runPrefill(env, g, c, data);
          const ref = refPrefill(refBatch(g, data, c.inputRows), c.planC, c.planW);
          // The same plan pooled from the post-batch ring would differ: the test can tell the two orders apart.
          const after = refPrefill({ ...refBatch(g, data, c.inputRows), stateBits: ref.stateBits }, c.planC, []);
          const differs = ref.entries.some((e, i) =>
            e?.some((v, d) => Math.abs(v - after.entries[i]![d]!) > 10 * entryTolerance(L.cr, ref.kvMax[i]![d]!)),
          );
          expect(differs, "the post-write ring gives other entries").toBe(true);
          expect(got.err).toEqual([0, 0, 0, 0]);
          expectBatch("pre-batch ring", g, ref, got, data.bits);
        });
      });
    }
  }
});

const STREAM_BLOCKER_BYTES = 4 * 2 ** 30;
// 4,096 copies of one compression on at most 16 busy warp slots: 256 or more dependent poolings each, hundreds of µs,
// far longer than the launch of the write and decode kernels behind them (a few µs).
const ORDER_COPIES = 4096;
const ORDER_GEOMETRY: Geometry = { cr: 4, headDim: 128, stateType: 0, stateRows: C4_PAGED.stateRows };

/** The stream-order batch's one entry from the pre-decode ring and from the ring after the decode's store. */
function orderEntries(data: ReturnType<typeof randomData>, decodeInput: Float32Array) {
  const g = ORDER_GEOMETRY;
  const { planD, reading, inputRows } = sharedPageOrderCase(1);
  const before = refPrefill(refBatch(g, data, inputRows), [reading], []);
  const row = rowElemsOf(g);
  const afterBits = before.stateBits.slice();
  afterBits.set(new Uint32Array(decodeInput.buffer, decodeInput.byteOffset, row), planD[0]!.writeLoc * row);
  const after = refPrefill({ ...refBatch(g, data, inputRows), stateBits: afterBits }, [reading], []);
  return { before: before.entries[0]!, after: after.entries[0]!, kvMax: before.kvMax[0]! };
}

/** Whether an entry is the pre-decode pooling, the post-decode pooling, or neither. */
function classifyEntry(got: Float32Array, e: ReturnType<typeof orderEntries>): "before" | "after" | "neither" {
  const near = (want: ArrayLike<number>) =>
    want.length === got.length &&
    Array.from(got).every((v, d) => Math.abs(v - want[d]!) <= entryTolerance(4, e.kvMax[d]!));
  return near(e.before) ? "before" : near(e.after) ? "after" : "neither";
}

/** `period` repeated `times` times: the compress table of the stream-order case without 2 million objects. */
function tiled(period: Uint8Array, times: number): Uint8Array {
  const bytes = new Uint8Array(period.length * times);
  for (let i = 0; i < times; i++) bytes.set(period, i * period.length);
  return bytes;
}

describe("stream order: a decode after a prefill waits for the prefill's compressions", () => {
  it("the case can tell the orders apart: the decode's store changes the pooled entry", () => {
    const rng = new Rng(57);
    const { inputRows } = sharedPageOrderCase(1);
    const data = randomData(rng, ORDER_GEOMETRY, inputRows);
    const e = orderEntries(data, randomData(rng, ORDER_GEOMETRY, 1).input);
    expect(classifyEntry(Float32Array.from(e.before), e)).toBe("before");
    expect(classifyEntry(Float32Array.from(e.after), e)).toBe("after");
  });

  // The write kernel is a programmatic dependent of the compress kernel, and the c4 decode kernel one of whatever
  // precedes it. Every write-plan row is padding, so unless the write grid ends after the compress grid even with no
  // row to write, and the decode waits for the write grid, the decode's store lands while compressions still read
  // that row and the compressions after it pool the decode's row. docs/decisions.md D38 records which builds this
  // test tells apart on the H200.
  gpuTest(
    "c4 paged, headDim 128, fp32: 4,096 compressions of one row on few warps, write rows all padding, then a decode",
    ({ gpu: env }) => {
      withBuffers(env, () => {
        const g = ORDER_GEOMETRY;
        const spacing = (probe().device?.multiProcessorCount ?? 132) * 4;
        const c = sharedPageOrderCase(spacing);
        const numPlanC = spacing * ORDER_COPIES;
        const rng = new Rng(57);
        const data = randomData(rng, g, c.inputRows);
        const decodeInput = randomData(rng, g, c.planD.length).input;
        const state = dev(env, data.bits);
        const shape = { stateRows: g.stateRows, cr: g.cr, headDim: g.headDim, stateType: g.stateType };
        // Every buffer is made before the launches: an upload synchronises the device, and one between the prefill and
        // the decode would order them whatever the kernels do.
        const ape = dev(env, data.ape);
        const out = alloc(env, numPlanC * g.headDim * 4);
        const err = dev(env, new Int32Array(4));
        const prefillArgs = {
          ...shape,
          state,
          input: dev(env, data.input),
          ape,
          planC: dev(env, tiled(CompressPlanTable.fromRecords(c.planC).bytes, ORDER_COPIES)),
          planW: dev(env, WritePlanTable.fromRecords(c.planW).bytes),
          out,
          err,
          inputRows: c.inputRows,
          numPlanC,
          numPlanW: c.planW.length,
        };
        const decodeErr = dev(env, new Int32Array(4));
        const decodeArgs = {
          ...shape,
          state,
          input: dev(env, decodeInput),
          ape,
          planD: dev(env, DecodePlanTable.fromRecords(c.planD).bytes),
          out: outBuffer(env, c.planD.length, g.headDim),
          err: decodeErr,
          inputRows: c.planD.length,
          batch: c.planD.length,
        };
        const blocker = alloc(env, STREAM_BLOCKER_BYTES);
        // A kernel's first launch in a process loads its module (CUDA's lazy loading), which holds the launch until the
        // GPU is idle and so orders the calls whatever the kernels do: on the H200 a decode that never waits started
        // 3 ms after the compressions on the first run and 25 µs after their start on the next (globaltimer stamps,
        // docs/decisions.md D38). So every kernel runs once first, and the ring is put back before the real run.
        onlineMtpNative().fill(env.ctx, blocker, 0);
        env.nat.prefill(env.ctx, prefillArgs);
        env.nat.decode(env.ctx, decodeArgs);
        state.upload(data.bits);
        // The host's launch gap (tens of µs) would still order the calls: a 4 GiB memset on the same stream holds the
        // GPU (about 1.5 ms) until the compress, write and decode kernels are all queued behind it.
        onlineMtpNative().fill(env.ctx, blocker, 0);
        env.nat.prefill(env.ctx, prefillArgs);
        env.nat.decode(env.ctx, decodeArgs);
        expect(Array.from(err.download(new Int32Array(4)))).toEqual([0, 0, 0, 0]);
        expect(Array.from(decodeErr.download(new Int32Array(4)))).toEqual([0, 0, 0, 0]);
        const e = orderEntries(data, decodeInput);
        const counts = { before: 0, after: 0, neither: 0 };
        const entry = new Float32Array(g.headDim);
        for (let i = 0; i < ORDER_COPIES; i++)
          counts[classifyEntry(out.download(entry, i * spacing * g.headDim * 4), e)]++;
        expect(counts, "every compression pools the row as it was before the decode").toEqual({
          before: ORDER_COPIES,
          after: 0,
          neither: 0,
        });
        const row = rowElemsOf(g);
        const stored = state.download(new Float32Array(row), c.planD[0]!.writeLoc * row * 4);
        expect(Array.from(stored), "the decode stored its input").toEqual(Array.from(decodeInput.subarray(0, row)));
      });
    },
  );
});

// ---- bad plan rows ---------------------------------------------------------------------------------------------
describe("bad plan rows: reported in the error word; the other rows intact, nothing outside written", () => {
  for (const { L, base, cases } of PREFILL_BAD_SETS) {
    for (const [name, patchC, patchW] of cases) {
      gpuTest(`prefill ${L.name}: ${name}`, ({ gpu: env }) => {
        withBuffers(env, () => {
          const g: Geometry = { cr: L.cr, headDim: 128, stateType: 1, stateRows: L.stateRows };
          const { c, want } = badPrefillCase(L, base, patchC, patchW);
          const data = randomData(new Rng(31), g, c.inputRows);
          const got = runPrefill(env, g, c, data);
          const ref = refPrefill(refBatch(g, data, c.inputRows), c.planC, c.planW);
          expect(ref.errors).toEqual([want]);
          expect(got.err).toEqual(want);
          expectBatch(name, g, ref, got, data.bits);
        });
      });
    }
  }
  for (const [L, base, name, patch] of DECODE_BAD) {
    gpuTest(`decode ${L.name}: ${name}`, ({ gpu: env }) => {
      withBuffers(env, () => {
        const g: Geometry = { cr: L.cr, headDim: 512, stateType: 0, stateRows: L.stateRows };
        const { planD, want } = badDecodeCase(L, base, patch);
        const data = randomData(new Rng(41), g, planD.length);
        const got = runDecode(env, g, planD, data);
        const ref = refDecode(refBatch(g, data, planD.length), planD);
        expect(ref.errors).toEqual([want]);
        expect(got.err).toEqual(want);
        expectBatch(name, g, ref, got, data.bits);
      });
    });
  }
});

// ---- refusals that need buffers --------------------------------------------------------------------------------
/** Exact-size buffers of a small prefill (cr 4, headDim 128, fp32) whose plan rows are all padding. */
function smallPrefill(env: Env): Record<string, unknown> {
  const stateRows = 8;
  const inputRows = 8;
  const rowBytes = 4 * 128 * 4;
  const planC = CompressPlanTable.fromRecords([
    { seqLen: INVALID_SEQ_LEN, raggedId: 0, bufferLen: 0, readPage0: -1, readPage1: -1 },
    { seqLen: INVALID_SEQ_LEN, raggedId: 0, bufferLen: 0, readPage0: -1, readPage1: -1 },
  ]).bytes;
  return {
    state: alloc(env, stateRows * rowBytes),
    input: alloc(env, inputRows * rowBytes),
    ape: alloc(env, 8 * 128 * 4),
    planC: dev(env, planC, planC.byteLength),
    planW: dev(env, new Uint8Array(16).fill(0xff), 16),
    out: dev(env, new Uint32Array(2 * 128).fill(SENTINEL)),
    err: dev(env, new Int32Array(4)),
    stateRows,
    inputRows,
    numPlanC: 2,
    numPlanW: 2,
    cr: 4,
    headDim: 128,
    stateType: 0,
  };
}
/** Exact-size buffers of a small decode (cr 128, headDim 512, bf16) whose rows are all padding. */
function smallDecode(env: Env): Record<string, unknown> {
  const stateRows = 256;
  return {
    state: alloc(env, stateRows * 2 * 512 * 2),
    input: alloc(env, 2 * 2 * 512 * 4),
    ape: alloc(env, 128 * 512 * 4),
    planD: dev(env, new Uint32Array(8).fill(INVALID_SEQ_LEN), 32),
    out: dev(env, new Uint32Array(2 * 512).fill(SENTINEL)),
    err: dev(env, new Int32Array(4)),
    stateRows,
    inputRows: 2,
    batch: 2,
    cr: 128,
    headDim: 512,
    stateType: 1,
  };
}
const BUFFER_KEYS = {
  prefill: ["state", "input", "ape", "planC", "planW", "out", "err"],
  decode: ["state", "input", "ape", "planD", "out", "err"],
} as const;

describe("refusals that need device buffers", () => {
  for (const op of ["prefill", "decode"] as const) {
    const small = op === "prefill" ? smallPrefill : smallDecode;
    const call = (env: Env, args: Record<string, unknown>, ctx: unknown = env.ctx) =>
      (env.nat[op] as (c: unknown, a: unknown) => void)(ctx, args);

    gpuTest(`${op}: exact sizes pass; an all-padding plan writes nothing`, ({ gpu: env }) => {
      withBuffers(env, () => {
        const args = small(env);
        call(env, args);
        expect((args.err as DeviceBuffer).download(new Int32Array(4))).toEqual(new Int32Array(4));
        const out = (args.out as DeviceBuffer).download(new Uint32Array((args.out as DeviceBuffer).byteLength / 4));
        expect(out.every((b) => b === SENTINEL)).toBe(true);
      });
    });
    for (const key of BUFFER_KEYS[op]) {
      gpuTest(`${op}: ${key} one byte short, or freed`, ({ gpu: env }) => {
        withBuffers(env, () => {
          const args = small(env);
          const exact = (args[key] as DeviceBuffer).byteLength;
          const e = refusal(() => call(env, { ...args, [key]: alloc(env, exact - 1) }));
          expect([e.code, e.field, e.value]).toEqual(["DEVICE_BUFFER", `${key}.byteLength`, exact - 1]);
          expect(e.rule).toBe(`needs at least ${exact} bytes`);
          const freed = alloc(env, exact);
          freed.free();
          expect([refusal(() => call(env, { ...args, [key]: freed })).code]).toEqual(["DEVICE_BUFFER"]);
        });
      });
    }
    gpuTest(`${op}: the context: not a Context, destroyed, another device's buffer`, ({ gpu: env }) => {
      withBuffers(env, () => {
        const args = small(env);
        expect(shapeOf(refusal(() => call(env, args, {})))).toEqual(["INVALID_TYPE", "ctx"]);
        const gone = createContext(0);
        gone.destroy();
        expect(shapeOf(refusal(() => call(env, args, gone)))).toEqual(["CONTEXT", "ctx"]);
        if (probe().deviceCount < 2) return; // one device: no buffer of another device exists
        const other = createContext(1);
        const far = createDeviceBuffer((args.err as DeviceBuffer).byteLength, other);
        try {
          expect(shapeOf(refusal(() => call(env, { ...args, err: far })))).toEqual(["INVALID_ARGUMENT", "err.device"]);
        } finally {
          far.free();
          other.destroy();
        }
      });
    });
  }
  gpuTest("bench checks the buffers like the call it times", ({ gpu: env, skip }) => {
    const benchAddon = processBenchAddon();
    if (!benchAddon.addon) return skip(benchAddon.reason);
    const nat = benchAddon.addon.compress;
    withBuffers(env, () => {
      const args = smallPrefill(env);
      const bench = { ...args, op: "prefill", graph: 1, iters: 2, reps: 1, rotate: 2 };
      const e = refusal(() => nat.bench(env.ctx, { ...bench, out: alloc(env, 16) } as never));
      expect([e.code, e.field]).toEqual(["DEVICE_BUFFER", "out.byteLength"]);
    });
  });
});
const shapeOf = (e: KernelsCudaError) => [e.code, e.field];

// ---- bench: CUDA-graph capture and eager timing -----------------------------------------------------------------
describe("bench: eager and CUDA-graph timing of both ops", () => {
  // Repeating a call is idempotent where it matters here: a prefill's writes copy the same input rows, a decode's
  // write-then-pool gives the same entries, so after the timed calls the given buffers hold one call's results.
  for (const op of ["prefill", "decode"] as const) {
    for (const graph of [0, 1] as const) {
      gpuTest(
        `${op}, graph ${graph}: iters 2, rotate 3 then 1; the given buffers hold the results`,
        ({ gpu: env, skip }) => {
          const benchAddon = processBenchAddon();
          if (!benchAddon.addon) return skip(benchAddon.reason);
          const nat = benchAddon.addon.compress;
          withBuffers(env, () => {
            const g: Geometry = { cr: 4, headDim: 512, stateType: 1, stateRows: C4_PAGED.stateRows };
            const rng = new Rng(5 + graph);
            const c = op === "prefill" ? randomPrefill(rng, C4_PAGED) : null;
            const planD = op === "decode" ? randomDecode(rng, C4_PAGED) : [];
            const inputRows = c ? c.inputRows : planD.length;
            const data = randomData(rng, g, inputRows);
            const state = dev(env, data.bits);
            const out = outBuffer(env, c ? c.planC.length : planD.length, g.headDim);
            const err = dev(env, new Int32Array(4));
            const common = { state, input: dev(env, data.input), ape: dev(env, data.ape), out, err, inputRows };
            const shape = { stateRows: g.stateRows, cr: g.cr, headDim: g.headDim, stateType: g.stateType };
            const args = c
              ? {
                  ...common,
                  ...shape,
                  planC: dev(env, CompressPlanTable.fromRecords(c.planC).bytes),
                  planW: dev(env, WritePlanTable.fromRecords(c.planW).bytes),
                  numPlanC: c.planC.length,
                  numPlanW: c.planW.length,
                }
              : { ...common, ...shape, planD: dev(env, DecodePlanTable.fromRecords(planD).bytes), batch: planD.length };
            for (const rotate of [3, 1]) {
              const r = nat.bench(env.ctx, { ...args, op, graph, iters: 2, reps: 3, rotate } as never);
              expect(Object.keys(r).sort()).toEqual(["maxUs", "minUs", "usPerCall"]);
              for (const v of Object.values(r)) expect(Number.isFinite(v) && v > 0).toBe(true);
              expect(r.minUs <= r.usPerCall && r.usPerCall <= r.maxUs).toBe(true);
            }
            const got = readBack(g, state, out, err, c ? c.planC.length : planD.length);
            expect(got.err).toEqual([0, 0, 0, 0]);
            const b = refBatch(g, data, inputRows);
            const ref = c ? refPrefill(b, c.planC, c.planW) : refDecode(b, planD);
            expectState("after bench", g, ref, got, data.bits);
            if (!c) expectEntries("after bench", g, ref, got);
          });
        },
      );
    }
  }
});
