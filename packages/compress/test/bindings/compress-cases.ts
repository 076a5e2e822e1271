/**
 * The cases test/bindings/compress.test.ts runs on a GPU, built on the host: ring layouts, random extend / verify /
 * decode batches planned by the real planner (padded as under CUDA graphs), random data, the batches whose writes land
 * in slots their own compressions read, and the bad plan rows with the error word each must produce.
 * test/bindings/compress-cases.test.ts checks them against the reference without a GPU.
 */
import {
  type CompressPlanRecord,
  type DecodePlanRecord,
  INVALID_COMPRESS_PLAN,
  INVALID_RAGGED_ID,
  INVALID_SEQ_LEN,
  planDecode,
  planPrefill,
  type WritePlanRecord,
} from "@dsv4-kv/planner";
import { COMPRESS_ERR, COMPRESS_KERNEL } from "@dsv4-kv/kernels-cuda/internal";
import {
  bf16Bits,
  type ErrWord,
  type Ratio,
  type RefBatch,
  type StateBits,
  type StateType,
  randomRows,
  rowBlocksOf,
  windowOf,
} from "./compress-reference.js";
import type { Rng } from "@dsv4-kv/vitest-preset/rng";

/** Rows past each buffer's extent (stateRows, inputRows, the out rows): canaries that must stay as they were. */
export const CANARY_ROWS = 3;

// ---- layouts and random batches from the planner --------------------------------------------------------------
export interface Layout {
  name: string;
  cr: Ratio;
  ringSize: number;
  swaPageSize: number;
  useReqRing: boolean;
  /** Rows the planner can address for request indices < `rids` (identity maps: positions < 2048). */
  stateRows: number;
  rids: number;
}
export const C4_PAGED: Layout = {
  name: "c4 paged",
  cr: 4,
  ringSize: 16,
  swaPageSize: 256,
  useReqRing: false,
  stateRows: 512,
  rids: 4,
};
export const C4_REQ: Layout = { ...C4_PAGED, name: "c4 req ring", useReqRing: true, stateRows: 128, rids: 8 };
export const C128: Layout = {
  name: "c128",
  cr: 128,
  ringSize: 256,
  swaPageSize: 256,
  useReqRing: false,
  stateRows: 1280,
  rids: 5,
};
export const LAYOUTS = [C4_PAGED, C4_REQ, C128];
export const ring = (L: Layout) => ({
  compressRatio: L.cr,
  ringSize: L.ringSize,
  swaPageSize: L.swaPageSize,
  ...(L.useReqRing ? { useReqRing: true } : {}),
});

export function distinctRids(rng: Rng, n: number, of: number): number[] {
  const all = Array.from({ length: of }, (_, i) => i);
  for (let i = all.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, n);
}

export interface PrefillCase {
  planC: CompressPlanRecord[];
  planW: WritePlanRecord[];
  inputRows: number;
}
/** A random extend / verify batch, padded to numQTokens as under a CUDA graph (the device path's tables). */
export function randomPrefill(rng: Rng, L: Layout): PrefillCase {
  const B = rng.int(1, Math.min(6, L.rids));
  const rids = distinctRids(rng, B, L.rids);
  const maxP = L.cr === 4 ? 200 : 700;
  const maxE = L.cr === 4 ? 60 : 400;
  const extendLens = rids.map(() => (rng.u() < 0.4 ? rng.int(1, 10) : rng.int(1, maxE)));
  const seqLens = extendLens.map((e) => rng.int(0, maxP) + e);
  const numQTokens = extendLens.reduce((a, b) => a + b, 0) + rng.int(0, 8);
  const plan = planPrefill({ ...ring(L), seqLens, extendLens, reqPoolIndices: rids, numQTokens, path: "device" });
  return { planC: plan.planC.records(), planW: plan.planW.records(), inputRows: numQTokens };
}

/** A random decode batch (many rows closing their window), with padding rows appended as under a CUDA graph. */
export function randomDecode(rng: Rng, L: Layout): DecodePlanRecord[] {
  const B = rng.int(1, Math.min(8, L.rids));
  const rids = distinctRids(rng, B, L.rids);
  const seqLens = rids.map(() => {
    const r = rng.u();
    if (r < 0.5) return L.cr * rng.int(1, Math.floor(2000 / L.cr));
    if (r < 0.6) return L.cr;
    return rng.int(1, 2000);
  });
  const rows = planDecode({ ...ring(L), seqLens, reqPoolIndices: rids }).records();
  const pad = rng.int(0, 3);
  for (let i = 0; i < pad; i++) rows.push({ seqLen: INVALID_SEQ_LEN, writeLoc: -1, readPage0: -1, readPage1: -1 });
  return rows;
}

// ---- data ----------------------------------------------------------------------------------------------------
export interface Geometry {
  cr: Ratio;
  headDim: 128 | 512;
  stateType: StateType;
  stateRows: number;
}
export const rowElemsOf = (g: Geometry) => rowBlocksOf(g.cr) * g.headDim;

/** Random initial state (stateRows + canary rows) as raw bits of the dtype, input rows and ape. */
export function randomData(
  rng: Rng,
  g: Geometry,
  inputRows: number,
): { bits: StateBits; input: Float32Array; ape: Float32Array } {
  const vals = randomRows(rng, g.cr, g.headDim, g.stateRows + CANARY_ROWS);
  const bits = g.stateType === 0 ? new Uint32Array(vals.buffer) : bf16Bits(vals);
  const input = randomRows(rng, g.cr, g.headDim, inputRows + CANARY_ROWS);
  const ape = Float32Array.from({ length: windowOf(g.cr) * g.headDim }, () => 0.25 * rng.n());
  return { bits, input, ape };
}

export function refBatch(g: Geometry, data: ReturnType<typeof randomData>, inputRows: number): RefBatch {
  return { ...g, stateBits: data.bits, inputRows, input: data.input, ape: data.ape };
}

export const GEOMETRIES = LAYOUTS.flatMap((L) =>
  ([128, 512] as const).flatMap((headDim) =>
    ([0, 1] as const).map((stateType) => ({ L, g: { cr: L.cr, headDim, stateType, stateRows: L.stateRows } })),
  ),
);
export const dtypeName = (t: StateType) => (t === 0 ? "fp32" : "bf16");

/**
 * Requests resuming at a prefix that is not chunk-aligned and extending past one ring length: their tail writes land
 * in the ring slots their first compressions read (c4 R 16: positions 11..20 over slots 11..15, 0..4 while the events
 * at 7 and 11 read positions 0..4; c128 R 256: 256..299 over slots 0..43 while the event at 127 reads 0..99).
 */
export const ORDER_CASES = [
  { L: C4_PAGED, seqLens: [21], extendLens: [16] },
  { L: C128, seqLens: [300], extendLens: [200] },
];
/** The plan of an order case (one request, index 0, host path) and the write rows that hit slots it reads. */
export function orderCase(L: Layout, seqLens: number[], extendLens: number[]): { c: PrefillCase; clobbered: number } {
  const c = extendCase(L, seqLens, extendLens);
  const reads = ringReads(L.cr, c.planC);
  return { c, clobbered: c.planW.filter((w) => reads.has(w.writeLoc)).length };
}

/**
 * One extend per request (request i on pool row i), unpadded as an extend too long for a CUDA graph: with long extends
 * the c4 compress kernel's work slots take several items each (at headDim 512 on an H200, above about 528 compress
 * rows), the launch shape where it stages ape in shared memory (native/compress/prefill_compress.cu).
 */
export function extendCase(L: Layout, seqLens: number[], extendLens: number[]): PrefillCase {
  const plan = planPrefill({ ...ring(L), seqLens, extendLens, reqPoolIndices: seqLens.map((_, i) => i) });
  const inputRows = extendLens.reduce((a, b) => a + b, 0);
  return { planC: plan.planC.records(), planW: plan.planW.records(), inputRows };
}
/** Three requests extending 1,600 tokens each from prefixes off the chunk grid: 1,200 c4 compress rows. */
export const LONG_EXTEND = { seqLens: [1621, 1607, 1630], extendLens: [1600, 1600, 1600] };

/**
 * The stream-order case, one period of its compress table (`spacing` plan rows: one copy of a c4 compression that
 * reads the first row of main page P, `bufferLen` 5 = row 0 of `readPage1`, then padding); the test tiles the period
 * thousands of times. Every write-plan row is padding (the write kernel has nothing to store, the form that once let
 * its grid end before the compress grid); then a decode whose one row stores into that same state row (seqLen 6:
 * `seqLen % 4 != 0`, a store only). The c4 compress grid has one warp slot per resident warp (SMs x blocks per SM x 4)
 * and slot o takes items o, o + slots, …; with `spacing` = SMs x 4 every copy lands on one of at most 16 slots (one
 * per resident block of an SM), which pool their copies one after another while every other warp exits after reading
 * its padding. So the busy slots run for copies / 16 compressions or more, the rest of the GPU is free for the write
 * and decode kernels, and a decode that stores before the last compression changes the entries of every compression
 * after it: each entry is the pooling of the pre-decode row (stream order) or of the decode's row (a broken order).
 */
export function sharedPageOrderCase(spacing: number): {
  planC: CompressPlanRecord[];
  planW: WritePlanRecord[];
  planD: DecodePlanRecord[];
  inputRows: number;
  reading: CompressPlanRecord;
} {
  const base = extendCase(C4_PAGED, [21], [16]);
  const first = base.planC.find((r) => validC(r) && r.bufferLen === 5);
  if (first === undefined) throw new Error("the c4 order case lacks a compression that reads one main-page row");
  const page = C4_PAGED.stateRows / 4 - 1;
  if (page <= first.readPage0) throw new Error("the main page would overlap the overlap page");
  const reading = { ...first, readPage1: page };
  // One period of the compress table; the test tiles its bytes `valid` times (2 million records as objects would
  // cost seconds and hundreds of MB).
  const planC = Array.from({ length: spacing }, (_, i) => (i === 0 ? reading : INVALID_COMPRESS_PLAN));
  const planW = Array.from({ length: 64 }, () => ({ raggedId: INVALID_RAGGED_ID, writeLoc: 0 }));
  const planD = [{ seqLen: 6, writeLoc: page * 4, readPage0: 0, readPage1: 0 }];
  return { planC, planW, planD, inputRows: base.inputRows, reading };
}

// ---- bad plan rows ---------------------------------------------------------------------------------------------
/** State rows the batch's compressions read from the ring. */
export function ringReads(cr: Ratio, planC: CompressPlanRecord[]): Set<number> {
  const rows = new Set<number>();
  for (const c of planC) {
    if (c.seqLen === INVALID_SEQ_LEN) continue;
    for (let e = 0; e < c.bufferLen; e++) {
      if (cr === 4 && e < 4 && c.seqLen <= 4) continue;
      rows.add(cr === 4 ? (e < 4 ? c.readPage0 * 4 + e : c.readPage1 * 4 + e - 4) : c.readPage1 * 128 + e);
    }
  }
  return rows;
}

export type Patch<R> = (rows: R[], geometry: { stateRows: number; inputRows: number }) => ErrWord;

/** The first row index matching `pred` (the test's construction guarantees one). */
export function rowWhere<R>(rows: R[], pred: (r: R) => boolean): number {
  const i = rows.findIndex(pred);
  if (i < 0) throw new Error("the base batch lacks the row this case needs");
  return i;
}
export const validC = (r: CompressPlanRecord) => r.seqLen !== INVALID_SEQ_LEN;

// c4 paged: request 1 resumes at 5 (its first event q = 7 reads the ring: bufferLen 5, both pages), request 3 at 20.
export const C4_BAD_BASE = { seqLens: [13, 40], extendLens: [8, 20], reqPoolIndices: [1, 3] };
export const C4_PREFILL_BAD: [string, Patch<CompressPlanRecord> | null, Patch<WritePlanRecord> | null][] = [
  [
    "seqLen not a multiple of cr",
    (rows) => {
      const i = rowWhere(rows, validC);
      rows[i] = { ...rows[i]!, seqLen: rows[i]!.seqLen + 1 };
      return [COMPRESS_ERR.seqLen, i, rows[i]!.seqLen, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "bufferLen above the window",
    (rows) => {
      const i = rowWhere(rows, validC);
      rows[i] = { ...rows[i]!, bufferLen: 9 };
      return [COMPRESS_ERR.bufferLen, i, 9, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "raggedId past the input rows",
    (rows, n) => {
      const i = rowWhere(rows, validC);
      rows[i] = { ...rows[i]!, raggedId: n.inputRows + 2 };
      return [COMPRESS_ERR.raggedRow, i, n.inputRows + 2, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "raggedId whose window starts before input row 0",
    (rows) => {
      const i = rowWhere(rows, (r) => validC(r) && r.bufferLen === 0);
      rows[i] = { ...rows[i]!, raggedId: 3 };
      return [COMPRESS_ERR.raggedRow, i, 3, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "readPage1 past the state rows",
    (rows, n) => {
      const i = rowWhere(rows, (r) => validC(r) && r.bufferLen > 4);
      rows[i] = { ...rows[i]!, readPage1: n.stateRows / 4 };
      return [COMPRESS_ERR.ringRow, i, n.stateRows / 4, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "readPage0 negative",
    (rows) => {
      const i = rowWhere(rows, (r) => validC(r) && r.bufferLen > 0 && r.seqLen > 4);
      rows[i] = { ...rows[i]!, readPage0: -1 };
      return [COMPRESS_ERR.ringRow, i, -1, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "write writeLoc one past the state rows",
    null,
    (rows, n) => {
      rows[2] = { ...rows[2]!, writeLoc: n.stateRows };
      return [COMPRESS_ERR.writeLoc, 2, n.stateRows, COMPRESS_KERNEL.prefillWrite];
    },
  ],
  [
    "write writeLoc negative",
    null,
    (rows) => {
      rows[0] = { ...rows[0]!, writeLoc: -1 };
      return [COMPRESS_ERR.writeLoc, 0, -1, COMPRESS_KERNEL.prefillWrite];
    },
  ],
  [
    "write raggedId past the input rows",
    null,
    (rows, n) => {
      rows[1] = { ...rows[1]!, raggedId: n.inputRows };
      return [COMPRESS_ERR.writeRagged, 1, n.inputRows, COMPRESS_KERNEL.prefillWrite];
    },
  ],
];

// c128: request 0 resumes at 100 (its event q = 127 reads 100 ring rows), request 2 at 0 (a chunk of its own).
export const C128_BAD_BASE = { seqLens: [300, 256], extendLens: [200, 256], reqPoolIndices: [0, 2] };
export const C128_PREFILL_BAD: [string, Patch<CompressPlanRecord> | null, Patch<WritePlanRecord> | null][] = [
  [
    "seqLen a multiple of 64, not 128",
    (rows) => {
      const i = rowWhere(rows, validC);
      rows[i] = { ...rows[i]!, seqLen: rows[i]!.seqLen - 64 };
      return [COMPRESS_ERR.seqLen, i, rows[i]!.seqLen, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "bufferLen 129",
    (rows) => {
      const i = rowWhere(rows, validC);
      rows[i] = { ...rows[i]!, bufferLen: 129 };
      return [COMPRESS_ERR.bufferLen, i, 129, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "readPage1 past the state rows",
    (rows, n) => {
      const i = rowWhere(rows, (r) => validC(r) && r.bufferLen > 0);
      rows[i] = { ...rows[i]!, readPage1: n.stateRows / 128 };
      return [COMPRESS_ERR.ringRow, i, n.stateRows / 128, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "raggedId past the input rows",
    (rows, n) => {
      const i = rowWhere(rows, (r) => validC(r) && r.bufferLen === 0);
      rows[i] = { ...rows[i]!, raggedId: n.inputRows };
      return [COMPRESS_ERR.raggedRow, i, n.inputRows, COMPRESS_KERNEL.prefillCompress];
    },
    null,
  ],
  [
    "write writeLoc one past the state rows",
    null,
    (rows, n) => {
      rows[5] = { ...rows[5]!, writeLoc: n.stateRows };
      return [COMPRESS_ERR.writeLoc, 5, n.stateRows, COMPRESS_KERNEL.prefillWrite];
    },
  ],
];

export const C4_DECODE = { seqLens: [8, 13, 4, 16], reqPoolIndices: [0, 3, 1, 2] };
export const C128_DECODE = { seqLens: [256, 100, 128], reqPoolIndices: [1, 3, 4] };
export const DECODE_BAD: [Layout, typeof C4_DECODE, string, Patch<DecodePlanRecord>][] = [
  [
    C4_PAGED,
    C4_DECODE,
    "seqLen 0",
    (rows) => {
      rows[1] = { ...rows[1]!, seqLen: 0 };
      return [COMPRESS_ERR.seqLen, 1, 0, COMPRESS_KERNEL.decode];
    },
  ],
  [
    C4_PAGED,
    C4_DECODE,
    "writeLoc one past the state rows",
    (rows, n) => {
      rows[3] = { ...rows[3]!, writeLoc: n.stateRows };
      return [COMPRESS_ERR.writeLoc, 3, n.stateRows, COMPRESS_KERNEL.decode];
    },
  ],
  [
    C4_PAGED,
    C4_DECODE,
    "readPage1 past the state rows (a row that pools)",
    (rows, n) => {
      rows[0] = { ...rows[0]!, readPage1: n.stateRows / 4 };
      return [COMPRESS_ERR.ringRow, 0, n.stateRows / 4, COMPRESS_KERNEL.decode];
    },
  ],
  [
    C4_PAGED,
    C4_DECODE,
    "readPage0 negative (a row that pools, S > 4)",
    (rows) => {
      rows[3] = { ...rows[3]!, readPage0: -5 };
      return [COMPRESS_ERR.ringRow, 3, -5, COMPRESS_KERNEL.decode];
    },
  ],
  [
    C128,
    C128_DECODE,
    "readPage1 past the state rows (a row that pools)",
    (rows, n) => {
      rows[0] = { ...rows[0]!, readPage1: n.stateRows / 128 };
      return [COMPRESS_ERR.ringRow, 0, n.stateRows / 128, COMPRESS_KERNEL.decode];
    },
  ],
  [
    C128,
    C128_DECODE,
    "seqLen 0",
    (rows) => {
      rows[2] = { ...rows[2]!, seqLen: 0 };
      return [COMPRESS_ERR.seqLen, 2, 0, COMPRESS_KERNEL.decode];
    },
  ],
];

/** A bad-row prefill batch: the base plan (padded to numQTokens), one row patched, the word it must produce. */
export function badPrefillCase(
  L: Layout,
  base: typeof C4_BAD_BASE,
  patchC: Patch<CompressPlanRecord> | null,
  patchW: Patch<WritePlanRecord> | null,
): { c: PrefillCase; want: ErrWord } {
  const numQTokens = L.cr === 4 ? 280 : 480;
  const plan = planPrefill({ ...ring(L), ...base, numQTokens, path: "device" });
  const c: PrefillCase = { planC: plan.planC.records(), planW: plan.planW.records(), inputRows: numQTokens };
  const n = { stateRows: L.stateRows, inputRows: numQTokens };
  const want = patchC ? patchC(c.planC, n) : patchW!(c.planW, n);
  return { c, want };
}
export const PREFILL_BAD_SETS = [
  { L: C4_PAGED, base: C4_BAD_BASE, cases: C4_PREFILL_BAD },
  { L: C128, base: C128_BAD_BASE, cases: C128_PREFILL_BAD },
];

/** A bad-row decode batch: the base plan plus one padding row, one row patched, the word it must produce. */
export function badDecodeCase(
  L: Layout,
  base: typeof C4_DECODE,
  patch: Patch<DecodePlanRecord>,
): { planD: DecodePlanRecord[]; want: ErrWord } {
  const planD = planDecode({ ...ring(L), ...base }).records();
  planD.push({ seqLen: INVALID_SEQ_LEN, writeLoc: -1, readPage0: -1, readPage1: -1 });
  return { planD, want: patch(planD, { stateRows: L.stateRows, inputRows: planD.length }) };
}
