/**
 * A float64 reference of the ring compress kernels for test/bindings/compress.test.ts: how a batch consumes its plan
 * rows (docs/reference/planner.md §8), written from the contract and not from the kernels. This package's CPU backend
 * and oracle are not used on purpose: the raw bindings are checked against code that shares nothing with either
 * backend.
 *
 * Layout: a state / input row holds rowBlocks(cr) · headDim floats, c4 `| kv_ov | kv | score_ov | score |`,
 * c128 `| kv | score |`; ape is [window, headDim]. Plan rows are the planner's records.
 */
import {
  type CompressPlanRecord,
  type DecodePlanRecord,
  INVALID_RAGGED_ID,
  INVALID_SEQ_LEN,
  type WritePlanRecord,
} from "@dsv4-kv/planner";
import { COMPRESS_ERR, COMPRESS_KERNEL } from "@dsv4-kv/kernels-cuda/internal";
import type { Rng } from "@dsv4-kv/vitest-preset/rng";

export type Ratio = 4 | 128;
export type StateType = 0 | 1;

export const windowOf = (cr: Ratio): number => (cr === 4 ? 8 : 128);
export const rowBlocksOf = (cr: Ratio): number => (cr === 4 ? 4 : 2);

/** The device error word [code, row, value, kernel]. */
export type ErrWord = [number, number, number, number];

// ---- bf16 ------------------------------------------------------------------------------------------------------
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** bf16 bits of an fp32 value, round to nearest even (finite values). */
export function toBf16(x: number): number {
  f32[0] = x;
  const u = u32[0]!;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
export function fromBf16(b: number): number {
  u32[0] = b << 16;
  return f32[0]!;
}

/** Raw state bits: one Uint32 per fp32 element, one Uint16 per bf16 element. */
export type StateBits = Uint32Array | Uint16Array;
export function stateValues(bits: StateBits, stateType: StateType): Float32Array {
  if (stateType === 0) return new Float32Array(bits.buffer, bits.byteOffset, bits.length);
  const wide = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) wide[i] = bits[i]! << 16;
  return new Float32Array(wide.buffer);
}
/** bf16 bits of every value (round to nearest even; finite values). */
export function bf16Bits(values: Float32Array): Uint16Array {
  const u = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < u.length; i++) out[i] = (u[i]! + 0x7fff + ((u[i]! >>> 16) & 1)) >>> 16;
  return out;
}
/** The bits `value` is stored as in the state dtype. */
function storedBits(value: number, stateType: StateType): number {
  if (stateType === 1) return toBf16(value);
  f32[0] = value;
  return u32[0]!;
}

// ---- the batch a reference call consumes ---------------------------------------------------------------------
export interface RefBatch {
  cr: Ratio;
  headDim: number;
  stateType: StateType;
  stateRows: number;
  /** stateRows rows (more are ignored), raw bits of the state dtype. */
  stateBits: StateBits;
  inputRows: number;
  input: Float32Array;
  ape: Float32Array;
}

export interface RefResult {
  /** Per plan row: the entry (headDim values), or null for a padding / bad row / a decode row that does not pool. */
  entries: (Float64Array | null)[];
  /** Per pooled row: max over its window of |kv| per channel (the tolerance's scale). */
  kvMax: (Float64Array | null)[];
  /** The state after the batch (stateRows rows), raw bits. */
  stateBits: StateBits;
  /** Every bad row, in plan order (the device records whichever wins its atomicCAS; tests make one row bad). */
  errors: ErrWord[];
}

/** Where element e of a window comes from: a state row, an input row, or masked (excluded). */
export type Source = { from: "state" | "input"; row: number } | { from: "masked" };

/** Columns of element e's kv and score within a row (c4: overlap half for e < 4). */
export function columns(cr: Ratio, headDim: number, e: number): { kv: number; score: number } {
  if (cr === 128) return { kv: 0, score: headDim };
  return e < 4 ? { kv: 0, score: 2 * headDim } : { kv: headDim, score: 3 * headDim };
}

/** Prefill: the W sources of a valid CompressPlan row (docs/reference/planner.md §8.1, §8.2). */
export function prefillSources(cr: Ratio, c: CompressPlanRecord): Source[] {
  const W = windowOf(cr);
  return Array.from({ length: W }, (_, e): Source => {
    if (cr === 4 && e < 4 && c.seqLen <= 4) return { from: "masked" };
    if (e < c.bufferLen) {
      const row = cr === 4 ? (e < 4 ? c.readPage0 * 4 + e : c.readPage1 * 4 + e - 4) : c.readPage1 * 128 + e;
      return { from: "state", row };
    }
    return { from: "input", row: c.raggedId - (W - 1) + e };
  });
}

/** Decode: the W sources of a row that pools (all from the ring). */
export function decodeSources(cr: Ratio, d: DecodePlanRecord): Source[] {
  const W = windowOf(cr);
  return Array.from({ length: W }, (_, e): Source => {
    if (cr === 4 && e < 4 && d.seqLen <= 4) return { from: "masked" };
    const row = cr === 4 ? (e < 4 ? d.readPage0 * 4 + e : d.readPage1 * 4 + e - 4) : d.readPage1 * 128 + e;
    return { from: "state", row };
  });
}

const inRange = (row: number, rows: number) => row >= 0 && row < rows;

/** The code and value of a bad CompressPlan row, in the kernels' check order; null when it is valid. */
export function checkCompressRow(b: RefBatch, c: CompressPlanRecord): [number, number] | null {
  const W = windowOf(b.cr);
  if (c.seqLen === 0 || c.seqLen % b.cr !== 0) return [COMPRESS_ERR.seqLen, c.seqLen];
  if (c.bufferLen > W) return [COMPRESS_ERR.bufferLen, c.bufferLen];
  const src = prefillSources(b.cr, c);
  for (let e = 0; e < W; e++) {
    const s = src[e]!;
    // c4: the overlap page first, then the main page (readPage0, readPage1).
    if (s.from === "state" && !inRange(s.row, b.stateRows))
      return [COMPRESS_ERR.ringRow, b.cr === 4 && e < 4 ? c.readPage0 : c.readPage1];
  }
  if (src.some((s) => s.from === "input" && !inRange(s.row, b.inputRows))) return [COMPRESS_ERR.raggedRow, c.raggedId];
  return null;
}

/** Softmax pooling of one window in float64 (masked elements excluded). */
function pool(
  b: RefBatch,
  sources: Source[],
  readRow: (s: { from: "state" | "input"; row: number }) => [Float32Array, number],
): { entry: Float64Array; kvMax: Float64Array } {
  const H = b.headDim;
  const entry = new Float64Array(H);
  const kvMax = new Float64Array(H);
  const used = sources.flatMap((s, e) => (s.from === "masked" ? [] : [{ e, at: readRow(s) }]));
  for (let d = 0; d < H; d++) {
    let m = Number.NEGATIVE_INFINITY;
    const sc: number[] = [];
    for (const { e, at } of used) {
      const [arr, base] = at;
      const s = arr[base + columns(b.cr, H, e).score + d]! + b.ape[e * H + d]!;
      sc.push(s);
      m = Math.max(m, s);
    }
    let num = 0;
    let den = 0;
    let km = 0;
    used.forEach(({ e, at }, i) => {
      const [arr, base] = at;
      const kv = arr[base + columns(b.cr, H, e).kv + d]!;
      const w = Math.exp(sc[i]! - m);
      num += w * kv;
      den += w;
      km = Math.max(km, Math.abs(kv));
    });
    entry[d] = num / den;
    kvMax[d] = km;
  }
  return { entry, kvMax };
}

/**
 * A prefill batch: every valid CompressPlan row pools from the PRE-batch ring and the input, then every valid
 * WritePlan row copies its input row into state row writeLoc (rounded to the state dtype). Bad rows are skipped.
 */
export function refPrefill(b: RefBatch, planC: CompressPlanRecord[], planW: WritePlanRecord[]): RefResult {
  const rowElems = rowBlocksOf(b.cr) * b.headDim;
  const before = stateValues(b.stateBits, b.stateType);
  const out: RefResult = {
    entries: [],
    kvMax: [],
    stateBits: b.stateBits.slice(0, b.stateRows * rowElems),
    errors: [],
  };
  const readRow = (s: { from: "state" | "input"; row: number }): [Float32Array, number] =>
    s.from === "state" ? [before, s.row * rowElems] : [b.input, s.row * rowElems];
  planC.forEach((c, i) => {
    const bad = c.seqLen === INVALID_SEQ_LEN ? null : checkCompressRow(b, c);
    if (bad) out.errors.push([bad[0], i, bad[1], COMPRESS_KERNEL.prefillCompress]);
    if (c.seqLen === INVALID_SEQ_LEN || bad) {
      out.entries.push(null);
      out.kvMax.push(null);
      return;
    }
    const { entry, kvMax } = pool(b, prefillSources(b.cr, c), readRow);
    out.entries.push(entry);
    out.kvMax.push(kvMax);
  });
  planW.forEach((w, k) => {
    if (w.raggedId === INVALID_RAGGED_ID) return;
    if (w.raggedId >= b.inputRows) {
      out.errors.push([COMPRESS_ERR.writeRagged, k, w.raggedId | 0, COMPRESS_KERNEL.prefillWrite]);
      return;
    }
    if (!inRange(w.writeLoc, b.stateRows)) {
      out.errors.push([COMPRESS_ERR.writeLoc, k, w.writeLoc, COMPRESS_KERNEL.prefillWrite]);
      return;
    }
    for (let j = 0; j < rowElems; j++)
      out.stateBits[w.writeLoc * rowElems + j] = storedBits(b.input[w.raggedId * rowElems + j]!, b.stateType);
  });
  return out;
}

/** The code and value of a bad DecodePlan row, in the kernels' check order; null when it is valid. */
export function checkDecodeRow(b: RefBatch, d: DecodePlanRecord): [number, number] | null {
  if (d.seqLen === 0) return [COMPRESS_ERR.seqLen, 0];
  if (!inRange(d.writeLoc, b.stateRows)) return [COMPRESS_ERR.writeLoc, d.writeLoc];
  if (d.seqLen % b.cr !== 0) return null;
  const src = decodeSources(b.cr, d);
  for (let e = 0; e < src.length; e++) {
    const s = src[e]!;
    if (s.from === "state" && !inRange(s.row, b.stateRows))
      return [COMPRESS_ERR.ringRow, b.cr === 4 && e < 4 ? d.readPage0 : d.readPage1];
  }
  return null;
}

/**
 * A decode batch: every valid row b writes input row b into state row writeLoc, then the rows with seqLen % cr == 0
 * pool their window from the ring (which holds the row just written). Rows do not share ring rows in these tests,
 * so all writes come first here. A bad row is skipped entirely (no write, no entry).
 */
export function refDecode(b: RefBatch, planD: DecodePlanRecord[]): RefResult {
  const rowElems = rowBlocksOf(b.cr) * b.headDim;
  const bits = b.stateBits.slice(0, b.stateRows * rowElems);
  const errors: ErrWord[] = [];
  const ok = planD.map((d, i) => {
    if (d.seqLen === INVALID_SEQ_LEN) return false;
    const bad = checkDecodeRow(b, d);
    if (bad) errors.push([bad[0], i, bad[1], COMPRESS_KERNEL.decode]);
    return !bad;
  });
  planD.forEach((d, i) => {
    if (!ok[i]) return;
    for (let j = 0; j < rowElems; j++)
      bits[d.writeLoc * rowElems + j] = storedBits(b.input[i * rowElems + j]!, b.stateType);
  });
  const after = stateValues(bits, b.stateType);
  const readRow = (s: { from: "state" | "input"; row: number }): [Float32Array, number] => [after, s.row * rowElems];
  const entries: (Float64Array | null)[] = [];
  const kvMax: (Float64Array | null)[] = [];
  planD.forEach((d, i) => {
    if (!ok[i] || d.seqLen % b.cr !== 0) {
      entries.push(null);
      kvMax.push(null);
      return;
    }
    const r = pool(b, decodeSources(b.cr, d), readRow);
    entries.push(r.entry);
    kvMax.push(r.kvMax);
  });
  return { entries, kvMax, stateBits: bits, errors };
}

/** The bound an fp32 entry must meet per channel: (2W + 16) · 2^-24 · max|kv| over its window. */
export function entryTolerance(cr: Ratio, kvMax: number): number {
  return (2 * windowOf(cr) + 16) * 2 ** -24 * kvMax;
}

/**
 * `rows` random rows: kv uniform in [-2, 2), score uniform in [-1, 1), so that |score + ape − max| stays a few units
 * and the fp32 exponentials stay well inside the tolerance's budget (uniforms: one generator step per value).
 */
export function randomRows(rng: Rng, cr: Ratio, headDim: number, rows: number): Float32Array {
  const rowElems = rowBlocksOf(cr) * headDim;
  const kvElems = (cr === 4 ? 2 : 1) * headDim;
  const v = new Float32Array(rows * rowElems);
  for (let r = 0; r < rows; r++) {
    const base = r * rowElems;
    for (let j = 0; j < kvElems; j++) v[base + j] = 4 * rng.u() - 2;
    for (let j = kvElems; j < rowElems; j++) v[base + j] = 2 * rng.u() - 1;
  }
  return v;
}
