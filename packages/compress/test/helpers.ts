/**
 * A small multi-step driver for the tests: requests with random token rows, prefill chunks and decodes planned by the
 * real planner, run on a backend, every entry checked against offlineCompress of the window's token rows within
 * entryTolerance. (The scenario package folder has the full random scenarios; this one keeps to accepted chunks.)
 */
import {
  CompressPlanTable,
  DEFAULT_IDENTITY_TOKENS_PER_REQ,
  DecodePlanTable,
  WritePlanTable,
  SPECULATIVE_RING_SIZE,
  planDecode,
  planPrefill,
  windowSize,
} from "@dsv4-kv/planner";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import type { CompressGeometry, RingCompressBackend, RingRatio, StateDtype } from "../src/backend.js";
import { rowBlocks } from "../src/geometry.js";
import { offlineCompress, windowOf } from "../src/oracle.js";
import { entryTolerance } from "../src/tolerance.js";

/** Tokens per SWA page: a multiple of both rings (c4 16, c128 256). */
export const SWA_PAGE_SIZE = 256;

/** A decode padding row (a CUDA-graph bucket's): the kernels skip seqLen 0xFFFFFFFF. */
export const DECODE_PADDING = { seqLen: 0xffffffff, writeLoc: -1, readPage0: -1, readPage1: -1 } as const;

export interface HarnessOptions {
  cr: RingRatio;
  headDim: 128 | 512;
  dtype: StateDtype;
  useReqRing?: boolean;
  numReqs: number;
  seed: number;
  /** Token values: kv uniform in [−kvScale, kvScale], score in [−scoreScale, scoreScale], ape in ±apeScale. */
  kvScale?: number;
  scoreScale?: number;
  apeScale?: number;
}

export interface StepReport {
  entries: number;
  /** max over checked entries of |entry − oracle| / bound (<= 1 means within the tolerance). */
  maxRatio: number;
  maxAbsError: number;
  out: Float32Array;
}

/** State rows the planner's slots of `numReqs` requests (identity maps, positions < 2048) can reach. */
export function stateRowsFor(cr: RingRatio, numReqs: number, useReqRing: boolean): number {
  const ring = SPECULATIVE_RING_SIZE[cr];
  if (cr === 4 && !useReqRing) return ((numReqs * DEFAULT_IDENTITY_TOKENS_PER_REQ) / SWA_PAGE_SIZE) * ring;
  return numReqs * ring;
}

export function randomArray(rng: SeededRandom, n: number, scale: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rng.next() - 1) * scale;
  return a;
}

export class Harness {
  readonly geometry: CompressGeometry;
  readonly rowElems: number;
  readonly window: number;
  readonly ape: Float32Array;
  readonly lens: number[];
  readonly rng: SeededRandom;
  private readonly tokens = new Map<number, Float32Array>();
  private readonly kvScale: number;
  private readonly scoreScale: number;
  private readonly apeScale: number;
  readonly useReqRing: boolean;

  constructor(
    readonly o: HarnessOptions,
    readonly backend: RingCompressBackend,
  ) {
    this.useReqRing = o.useReqRing ?? false;
    this.geometry = backend.geometry;
    this.rowElems = rowBlocks(o.cr) * o.headDim;
    this.window = windowSize(o.cr);
    this.rng = new SeededRandom(o.seed);
    this.kvScale = o.kvScale ?? 2;
    this.scoreScale = o.scoreScale ?? 3;
    this.apeScale = o.apeScale ?? 1;
    this.ape = randomArray(this.rng, this.window * o.headDim, this.apeScale);
    backend.setApe(this.ape);
    this.lens = new Array<number>(o.numReqs).fill(0);
  }

  static geometry(o: HarnessOptions): CompressGeometry {
    return {
      compressRatio: o.cr,
      headDim: o.headDim,
      stateDtype: o.dtype,
      stateRows: stateRowsFor(o.cr, o.numReqs, o.useReqRing ?? false),
    };
  }

  /** The token row of request `rid` at position `p` (random, fixed per harness). */
  token(rid: number, p: number): Float32Array {
    const key = rid * DEFAULT_IDENTITY_TOKENS_PER_REQ + p;
    let t = this.tokens.get(key);
    if (!t) {
      const d = this.o.headDim;
      const blocks = rowBlocks(this.o.cr);
      t = new Float32Array(this.rowElems);
      for (let b = 0; b < blocks; b++) {
        const scale = b < blocks / 2 ? this.kvScale : this.scoreScale;
        t.set(randomArray(this.rng, d, scale), b * d);
      }
      this.tokens.set(key, t);
    }
    return t;
  }

  private ring() {
    return {
      compressRatio: this.o.cr,
      ringSize: SPECULATIVE_RING_SIZE[this.o.cr],
      swaPageSize: SWA_PAGE_SIZE,
      useReqRing: this.useReqRing,
    };
  }

  private bound(): number {
    const t = entryTolerance({
      compressRatio: this.o.cr,
      maxAbsKv: this.kvScale,
      maxAbsScore: this.scoreScale + this.apeScale,
      ringElementsBf16: this.o.dtype === "bf16",
    });
    return this.backend.name === "cpu" ? t.cpu : t.gpu;
  }

  /** The oracle entry of request `rid`'s window closing at `q`. */
  oracle(rid: number, q: number): Float64Array {
    const elements = windowOf(this.o.cr, this.o.headDim, (p) => this.token(rid, p), q);
    return offlineCompress({ compressRatio: this.o.cr, headDim: this.o.headDim, ape: this.ape, elements });
  }

  /** One prefill batch (every token accepted): `extend` tokens per listed request; `padTo`: CUDA-graph rows. */
  prefill(batch: readonly { rid: number; extend: number }[], padTo?: number): StepReport {
    const seqLens = batch.map((b) => this.lens[b.rid]! + b.extend);
    const extendLens = batch.map((b) => b.extend);
    const numQ = extendLens.reduce((a, b) => a + b, 0);
    const plan = planPrefill({
      ...this.ring(),
      seqLens,
      extendLens,
      reqPoolIndices: batch.map((b) => b.rid),
      useCudaGraph: padTo !== undefined,
    });
    const inputRows = Math.max(padTo ?? numQ, numQ);
    const planC = padTable<CompressPlanTable>(plan.planC, CompressPlanTable, inputRows);
    const planW = padTable<WritePlanTable>(plan.planW, WritePlanTable, inputRows);
    const input = new Float32Array(inputRows * this.rowElems);
    const owner: { rid: number; p: number }[] = [];
    for (const b of batch) {
      const p0 = this.lens[b.rid]!;
      for (let p = p0; p < p0 + b.extend; p++) {
        input.set(this.token(b.rid, p), owner.length * this.rowElems);
        owner.push({ rid: b.rid, p });
      }
    }
    const out = this.backend.prefill({ input, inputRows, planC: planC.bytes, planW: planW.bytes });
    const report = this.checkEntries(out, planC.rowCount, (i) => {
      if (planC.isInvalid(i)) return null;
      const r = planC.row(i);
      const o = owner[r.raggedId]!;
      if (o.p !== r.seqLen - 1) throw new Error(`planC[${i}] event ${r.seqLen - 1} is not its token's position ${o.p}`);
      return o;
    });
    batch.forEach((b, i) => {
      this.lens[b.rid] = seqLens[i]!;
    });
    return report;
  }

  /** One decode step of the listed requests (one token each); `padTo`: padding rows (seqLen 0xFFFFFFFF) after. */
  decode(rids: readonly number[], padTo?: number): StepReport {
    const seqLens = rids.map((rid) => this.lens[rid]! + 1);
    const planned = planDecode({ ...this.ring(), seqLens, reqPoolIndices: rids });
    const rows = Math.max(padTo ?? rids.length, rids.length);
    const planD = DecodePlanTable.allocate(rows);
    planD.bytes.set(planned.bytes);
    for (let b = rids.length; b < rows; b++) planD.set(b, DECODE_PADDING);
    const input = new Float32Array(rows * this.rowElems);
    for (const [b, rid] of rids.entries()) input.set(this.token(rid, seqLens[b]! - 1), b * this.rowElems);
    const out = this.backend.decode({ input, planD: planD.bytes, batch: rows });
    const report = this.checkEntries(out, rows, (b) => {
      const s = seqLens[b];
      return s !== undefined && s % this.o.cr === 0 ? { rid: rids[b]!, p: s - 1 } : null;
    });
    rids.forEach((rid, b) => {
      this.lens[rid] = seqLens[b]!;
    });
    return report;
  }

  /** Checks every compressing row's entry; rows that do not compress must be NaN. */
  private checkEntries(
    out: Float32Array,
    rows: number,
    eventOf: (row: number) => { rid: number; p: number } | null,
  ): StepReport {
    const d = this.o.headDim;
    const bound = this.bound();
    let entries = 0;
    let maxAbsError = 0;
    for (let i = 0; i < rows; i++) {
      const ev = eventOf(i);
      const got = out.subarray(i * d, (i + 1) * d);
      if (!ev) {
        if (!got.every(Number.isNaN)) throw new Error(`row ${i} does not compress but its entry is not NaN`);
        continue;
      }
      const want = this.oracle(ev.rid, ev.p);
      for (let c = 0; c < d; c++) maxAbsError = Math.max(maxAbsError, Math.abs(got[c]! - want[c]!));
      if (!got.every(Number.isFinite)) maxAbsError = Number.POSITIVE_INFINITY;
      entries++;
    }
    return { entries, maxAbsError, maxRatio: maxAbsError / bound, out };
  }
}

/** `table` grown to `rows` rows with padding (sentinel) rows, as a CUDA-graph bucket pads it. */
export function padTable<T extends CompressPlanTable | WritePlanTable>(
  table: T,
  ctor: { allocate(rows: number): T },
  rows: number,
): T {
  if (table.rowCount >= rows) return table;
  const out = ctor.allocate(rows);
  out.bytes.set(table.bytes);
  for (let i = table.rowCount; i < rows; i++) out.setInvalid(i);
  return out;
}

/** The first index where two arrays' elements differ (bitwise for integer arrays), or −1; fast on big arrays. */
export function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}
