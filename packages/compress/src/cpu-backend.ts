/**
 * The CPU reference of the ring compress kernels (docs/reference/planner.md §8), on typed arrays: the state pool is a
 * Float32Array (fp32) or a Uint16Array of bf16 bits, every store rounded as the kernels round it. Prefill does every
 * compression first (all of them read the pre-batch ring), then every write; decode does every row's write, then
 * every compression (each request's window is in its own ring, so this equals the kernels' per-row order). The
 * arithmetic is pool.ts's fp32 order. Each call runs the shared host validator first.
 */
import { bf16BitsOf, bf16ValueOf } from "@dsv4-kv/online-mtp-controller/internal";
import { INVALID_SEQ_LEN } from "@dsv4-kv/planner";
import type { CompressGeometry, DecodeBatch, PrefillBatch, RingCompressBackend } from "./backend.js";
import { check } from "./check.js";
import { type Layout, frozenGeometry, layoutOf } from "./geometry.js";
import { type GatheredWindow, newGatheredWindow, poolWindowF32 } from "./pool.js";
import { checkApe, checkRowRange, checkStateValues, nanFilled, toStateBits, widenBf16 } from "./state-store.js";
import { type CheckedPrefill, decodeCompresses, validateDecodeBatch, validatePrefillBatch } from "./validate.js";
import { type WindowSpans, decodeSpans, halfOf, prefillSpans } from "./window.js";

/** Backends that write before they compress (the testing subpath's fault: the wrong launch order). */
const WRITES_FIRST = new WeakSet<CpuCompressBackend>();

/** Makes `b` land a prefill's writes before its compressions (testing only: the order the write pad forbids). */
export function injectWritesFirst(b: CpuCompressBackend): void {
  WRITES_FIRST.add(b);
}

export class CpuCompressBackend implements RingCompressBackend {
  readonly name = "cpu";
  readonly geometry: Readonly<CompressGeometry>;
  readonly rowElems: number;
  private readonly layout: Layout;
  /** fp32 values, or bf16 bits. Never-written rows hold all-ones bits (NaN), like the GPU's 0xFF fill. */
  private readonly state: Float32Array | Uint16Array;
  private ape: Float32Array | null = null;
  private disposed = false;
  private readonly g: GatheredWindow;
  /** bf16: element e's widened kv | score (2·headDim floats). */
  private readonly widened: Float32Array[];
  private readonly scratch: Float64Array;

  constructor(geometry: CompressGeometry) {
    const layout = layoutOf(geometry);
    this.layout = layout;
    this.geometry = frozenGeometry(layout);
    this.rowElems = layout.rowElems;
    const n = layout.stateRows * layout.rowElems;
    this.state = layout.stateDtype === "fp32" ? nanFilled(n) : new Uint16Array(n).fill(0xffff);
    this.g = newGatheredWindow(layout.window);
    this.widened = Array.from({ length: layout.window }, () => new Float32Array(2 * layout.headDim));
    this.scratch = new Float64Array(layout.window);
  }

  setApe(ape: Float32Array): void {
    this.checkLive();
    checkApe(this.layout, ape);
    this.ape = Float32Array.from(ape);
  }

  prefill(batch: PrefillBatch): Float32Array {
    this.checkLive();
    const c = validatePrefillBatch(this.geometry, batch);
    const ape = this.requireApe();
    const { headDim } = this.layout;
    const out = nanFilled(c.numPlanC * headDim);
    if (WRITES_FIRST.has(this)) this.writeAll(c, batch.input);
    for (let i = 0; i < c.numPlanC; i++) {
      if (c.planC.isInvalid(i)) continue;
      const r = c.planC.row(i);
      const spans = prefillSpans(this.layout, r.seqLen, r.raggedId, r.bufferLen, r.readPage0, r.readPage1);
      this.gather(spans, batch.input);
      poolWindowF32(this.g, ape, headDim, out, i * headDim, this.scratch);
    }
    if (!WRITES_FIRST.has(this)) this.writeAll(c, batch.input);
    return out;
  }

  private writeAll(c: CheckedPrefill, input: Float32Array): void {
    for (let i = 0; i < c.numPlanW; i++) {
      if (c.planW.isInvalid(i)) continue;
      const r = c.planW.row(i);
      this.storeRow(r.writeLoc, input, r.raggedId);
    }
  }

  decode(batch: DecodeBatch): Float32Array {
    this.checkLive();
    const c = validateDecodeBatch(this.geometry, batch);
    const ape = this.requireApe();
    const { headDim } = this.layout;
    const out = nanFilled(c.batch * headDim);
    const rows = c.planD.records();
    rows.forEach((r, b) => {
      if (r.seqLen !== INVALID_SEQ_LEN) this.storeRow(r.writeLoc, batch.input, b);
    });
    rows.forEach((r, b) => {
      if (!decodeCompresses(this.layout, r.seqLen)) return;
      this.gather(decodeSpans(this.layout, r.seqLen, r.readPage0, r.readPage1), batch.input);
      poolWindowF32(this.g, ape, headDim, out, b * headDim, this.scratch);
    });
    return out;
  }

  readStateRows(firstRow: number, count: number): Float32Array {
    this.checkLive();
    const [lo, hi] = checkRowRange(this.layout, firstRow, count);
    const s = this.state;
    return s instanceof Float32Array ? s.slice(lo, hi) : widenBf16(s.subarray(lo, hi));
  }

  readStateBits(firstRow: number, count: number): Uint32Array | Uint16Array {
    this.checkLive();
    const [lo, hi] = checkRowRange(this.layout, firstRow, count);
    const s = this.state;
    return s instanceof Float32Array ? new Uint32Array(s.slice(lo, hi).buffer) : s.slice(lo, hi);
  }

  writeStateRows(firstRow: number, values: Float32Array): void {
    this.checkLive();
    checkStateValues(this.layout, firstRow, values);
    this.state.set(toStateBits(this.layout.stateDtype, values), firstRow * this.rowElems);
  }

  dispose(): void {
    this.disposed = true;
  }

  private checkLive(): void {
    check(!this.disposed, "INVALID_ARGUMENT", "backend", "disposed", "must not be used after dispose()");
  }

  private requireApe(): Float32Array {
    const ape = this.ape;
    check(ape !== null, "INVALID_ARGUMENT", "ape", null, "must be set with setApe(ape) before prefill / decode");
    return ape;
  }

  /** State row `dst` ← input row `src` (every column, rounded to the state dtype). */
  private storeRow(dst: number, input: Float32Array, src: number): void {
    const re = this.rowElems;
    const from = input.subarray(src * re, (src + 1) * re);
    const s = this.state;
    if (s instanceof Float32Array) s.set(from, dst * re);
    else for (let k = 0; k < re; k++) s[dst * re + k] = bf16BitsOf(from[k]!);
  }

  /** Points `this.g` at each element's kv and score (widening bf16 ring rows into scratch). */
  private gather(spans: WindowSpans, input: Float32Array): void {
    const { headDim, rowElems } = this.layout;
    const scoreBlock = (rowElems / headDim / 2) * headDim;
    const g = this.g;
    for (let e = 0; e < spans.maskedEnd; e++) g.rows[e] = null;
    const point = (e: number, rows: Float32Array, rowStart: number) => {
      const h = halfOf(this.layout, e) * headDim;
      g.rows[e] = rows;
      g.kvAt[e] = rowStart + h;
      g.scoreAt[e] = rowStart + scoreBlock + h;
    };
    for (const span of spans.ring) {
      for (let e = span.e0; e < span.e1; e++) {
        const start = (span.firstRow + e - span.e0) * rowElems;
        const s = this.state;
        if (s instanceof Float32Array) {
          point(e, s, start);
          continue;
        }
        const h = halfOf(this.layout, e) * headDim;
        const w = this.widened[e]!;
        for (let d = 0; d < headDim; d++) {
          w[d] = bf16ValueOf(s[start + h + d]!);
          w[headDim + d] = bf16ValueOf(s[start + scoreBlock + h + d]!);
        }
        g.rows[e] = w;
        g.kvAt[e] = 0;
        g.scoreAt[e] = headDim;
      }
    }
    if (spans.input) {
      const span = spans.input;
      for (let e = span.e0; e < span.e1; e++) point(e, input, (span.firstRow + e - span.e0) * rowElems);
    }
  }
}
