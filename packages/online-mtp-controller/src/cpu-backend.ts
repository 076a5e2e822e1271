/**
 * CPU backend: typed arrays and the float32-semantics reference math, with the exact control flow of the CUDA
 * kernels (same guards, same skips, same write set). It is the reference the GPU backend is compared with.
 */
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS, STATE_ROW_ELEMS, type StateDtype } from "./constants.js";
import { OnlineMtpError, check } from "./errors.js";
import { fromBf16Bits, toBf16Bits, updateChannelF32 } from "./math.js";
import {
  SEGMENT_FIELDS,
  type CommitPendingParams,
  type IndexVector,
  type MarkPendingParams,
  type MatrixF32,
  type OnlineDecodeParams,
  type OnlineMtpBackend,
  type OnlinePrefillParams,
  type ResetSlotsParams,
  type StateBuffer,
  type WritePrefixParams,
} from "./backend.js";
import {
  validateCommitPending,
  validateMarkPending,
  validateOnlineDecode,
  validateOnlinePrefill,
  validateResetSlots,
  validateWritePrefix,
} from "./validate.js";

const DATA = Symbol("cpu-data");
const H = HEAD_DIM;
const f = Math.fround;

class CpuIndex implements IndexVector {
  readonly kind = "index" as const;
  readonly [DATA]: Int32Array;
  constructor(data: Int32Array) {
    this[DATA] = data;
  }
  get length(): number {
    return this[DATA].length;
  }
}
class CpuMatrix implements MatrixF32 {
  readonly kind = "matrix" as const;
  readonly [DATA]: Float32Array;
  constructor(
    data: Float32Array,
    readonly rows: number,
    readonly cols: number,
  ) {
    this[DATA] = data;
  }
}
class CpuState implements StateBuffer {
  readonly kind = "state" as const;
  readonly [DATA]: Float32Array | Uint16Array;
  constructor(
    readonly rows: number,
    readonly dtype: StateDtype,
  ) {
    // Uninitialized like torch.empty: filled with NaN so a read of a never-written row poisons the result.
    if (dtype === "fp32") this[DATA] = new Float32Array(rows * STATE_ROW_ELEMS).fill(Number.NaN);
    else this[DATA] = new Uint16Array(rows * STATE_ROW_ELEMS).fill(0x7fc0);
  }
}

function idx(v: IndexVector): Int32Array {
  check(v instanceof CpuIndex, "BACKEND", "indexVector", typeof v, "must come from this CpuBackend");
  return (v as CpuIndex)[DATA];
}
function mat(m: MatrixF32): Float32Array {
  check(m instanceof CpuMatrix, "BACKEND", "matrix", typeof m, "must come from this CpuBackend");
  return (m as CpuMatrix)[DATA];
}
function st(s: StateBuffer): CpuState {
  check(s instanceof CpuState, "BACKEND", "state", typeof s, "must come from this CpuBackend");
  return s as CpuState;
}

/**
 * Deliberately wrong variants, for tests that prove the invariants catch them (mutation testing). Never set in
 * production code.
 */
export interface CpuFaults {
  /** writePrefix stores step i into bank i (instead of i + 1); commit copies bank a − 1. */
  bankIndexOffByOne?: boolean;
  /** Ignores the exact-chunk-boundary rule: writes bank i+1 and commits even when (S + k) % 128 == 0. */
  ignoreBoundaryRule?: boolean;
}

export class CpuBackend implements OnlineMtpBackend {
  readonly name = "cpu";
  private deviceError: string | null = null;
  constructor(private readonly faults: CpuFaults = {}) {}

  uploadIndex(values: Int32Array): IndexVector {
    return new CpuIndex(Int32Array.from(values));
  }
  writeIndex(dst: IndexVector, values: Int32Array): void {
    const d = idx(dst);
    check(values.length <= d.length, "SHAPE", "values.length", values.length, `must be <= ${d.length}`);
    d.set(values);
  }
  allocIndex(length: number, value: number): IndexVector {
    return new CpuIndex(new Int32Array(length).fill(value));
  }
  uploadMatrix(values: Float32Array, rows: number, cols: number): MatrixF32 {
    check(values.length === rows * cols, "SHAPE", "values.length", values.length, `must be rows·cols = ${rows * cols}`);
    return new CpuMatrix(Float32Array.from(values), rows, cols);
  }
  allocMatrix(rows: number, cols: number): MatrixF32 {
    return new CpuMatrix(new Float32Array(rows * cols), rows, cols);
  }
  allocState(rows: number, dtype: StateDtype): StateBuffer {
    return new CpuState(rows, dtype);
  }

  private load(s: CpuState, row: number, e: number): number {
    const d = s[DATA];
    const i = row * STATE_ROW_ELEMS + e;
    return s.dtype === "fp32" ? d[i]! : fromBf16Bits(d[i]!);
  }
  private store(s: CpuState, row: number, e: number, x: number): void {
    const d = s[DATA];
    const i = row * STATE_ROW_ELEMS + e;
    if (s.dtype === "fp32") d[i] = x;
    else d[i] = toBf16Bits(x);
  }

  writePrefix(p: WritePrefixParams): void {
    if (!validateWritePrefix(p)) return;
    const kv = mat(p.kvScore);
    const ape = mat(p.ape);
    const state = st(p.state);
    const seq = idx(p.seqLens);
    const rpi = idx(p.reqPoolIndices);
    const D = p.numVerifyTokens;
    const O = p.bankStrideRows;
    const tmp = new Float64Array(3);
    const bankShift = this.faults.bankIndexOffByOne ? 0 : 1;
    for (let b = 0; b < p.batchSize; b++) {
      const S = seq[b]!;
      const r = rpi[b]!;
      if (S < 0 || r < 0 || r >= p.numReqSlots) continue; // padding / invalid rows are no-ops (§6.1)
      const start = S % CHUNK_TOKENS;
      const hasPartial = S > 0 && start !== 0;
      for (let d = 0; d < H; d++) {
        let m = hasPartial ? this.load(state, r, d) : 0;
        let sg = hasPartial ? this.load(state, r, H + d) : 0;
        let a = hasPartial ? this.load(state, r, 2 * H + d) : 0;
        for (let i = 0; i < D; i++) {
          const pos = (start + i) % CHUNK_TOKENS;
          const row = (b * D + i) * KV_SCORE_COLS;
          const k = kv[row + d]!;
          const s = f(kv[row + H + d]! + ape[pos * H + d]!);
          updateChannelF32(m, sg, a, k, s, pos, tmp);
          m = tmp[0]!;
          sg = tmp[1]!;
          a = tmp[2]!;
          if ((S + i + 1) % CHUNK_TOKENS !== 0 || this.faults.ignoreBoundaryRule) {
            const dst = r + (i + bankShift) * O;
            this.store(state, dst, d, m);
            this.store(state, dst, H + d, sg);
            this.store(state, dst, 2 * H + d, a);
          }
          if (pos === CHUNK_TOKENS - 1) {
            m = 0;
            sg = 0;
            a = 0;
          }
        }
      }
    }
  }

  markPending(p: MarkPendingParams): void {
    if (!validateMarkPending(p)) return;
    const pend = idx(p.pendingSeqLens);
    const widths = idx(p.pendingWidths);
    if (p.clearAll) {
      pend.fill(-1, 0, p.numReqSlots);
      widths.fill(0, 0, p.numReqSlots);
    }
    const seq = idx(p.seqLens);
    const rpi = idx(p.reqPoolIndices);
    for (let i = 0; i < p.batchSize; i++) {
      const r = rpi[i]!;
      if (r < 0 || r >= p.numReqSlots) continue;
      const S = seq[i]!;
      pend[r] = S < 0 ? -1 : S;
      widths[r] = S < 0 ? 0 : p.numVerifyTokens;
    }
  }

  commitPending(p: CommitPendingParams): void {
    if (!validateCommitPending(p)) return;
    const pend = idx(p.pendingSeqLens);
    const widths = idx(p.pendingWidths);
    const cur = idx(p.curSeqLens);
    const rpi = idx(p.reqPoolIndices);
    const state = st(p.state);
    const data = state[DATA];
    const markSeq = p.mark ? idx(p.mark.seqLens) : null;
    for (let b = 0; b < p.batchSize; b++) {
      const r = rpi[b]!;
      if (r < 0 || r >= p.numReqSlots) continue;
      this.commitRow(p, b, r, pend, widths, cur, data);
      if (markSeq) {
        const Snew = markSeq[b]!;
        pend[r] = Snew < 0 ? -1 : Snew;
        widths[r] = Snew < 0 ? 0 : p.mark!.width;
      }
    }
  }

  private commitRow(
    p: CommitPendingParams,
    b: number,
    r: number,
    pend: Int32Array,
    widths: Int32Array,
    cur: Int32Array,
    data: Float32Array | Uint16Array,
  ): void {
    {
      const S = pend[r]!;
      if (S < 0) return;
      const c = cur[b]!;
      if (c < 0) return; // padding row: the marker stays for the request's real forward
      const width = Math.min(p.clampWidth ?? widths[r]!, p.maxDraftTokens);
      if (p.consume) {
        pend[r] = -1;
        widths[r] = 0;
      }
      const a = c - S < 0 ? 0 : Math.min(c - S, width);
      if (a <= 0) return; // no progress: rollback, bank 0 unchanged
      if ((S + a) % CHUNK_TOKENS === 0 && !this.faults.ignoreBoundaryRule) return; // next token re-inits
      const src = (r + (a - (this.faults.bankIndexOffByOne ? 1 : 0)) * p.bankStrideRows) * STATE_ROW_ELEMS;
      data.copyWithin(r * STATE_ROW_ELEMS, src, src + STATE_ROW_ELEMS); // raw, bitwise
    }
  }

  resetSlots(p: ResetSlotsParams): void {
    if (!validateResetSlots(p)) return;
    const slots = idx(p.slots);
    const state = st(p.state);
    for (let i = 0; i < p.count; i++) {
      const r = slots[i]!;
      if (r < 0 || r >= p.numReqSlots) continue;
      for (let b = 0; b <= p.maxDraftTokens; b++) {
        const row = r + b * p.bankStrideRows;
        for (let d = 0; d < H; d++) {
          this.store(state, row, d, Number.NEGATIVE_INFINITY);
          this.store(state, row, H + d, 0);
          this.store(state, row, 2 * H + d, 0);
        }
      }
      if (p.pending) {
        idx(p.pending.seqLens)[r] = -1;
        idx(p.pending.widths)[r] = 0;
      }
    }
  }

  onlineDecode(p: OnlineDecodeParams): void {
    if (!validateOnlineDecode(p)) return;
    const kv = mat(p.kvScore);
    const ape = mat(p.ape);
    const out = mat(p.out);
    const state = st(p.state);
    const seq = idx(p.seqLens);
    const rpi = idx(p.reqPoolIndices);
    const tmp = new Float64Array(3);
    for (let b = 0; b < p.batchSize; b++) {
      const L = seq[b]!;
      const r = rpi[b]!;
      if (L <= 0 || r < 0 || r >= p.numReqSlots) continue;
      const pos = (L - 1) % CHUNK_TOKENS;
      const row = r + p.slotOffsetRows;
      for (let d = 0; d < H; d++) {
        const m = pos !== 0 ? this.load(state, row, d) : 0;
        const sg = pos !== 0 ? this.load(state, row, H + d) : 0;
        const a = pos !== 0 ? this.load(state, row, 2 * H + d) : 0;
        const s = f(kv[b * KV_SCORE_COLS + H + d]! + ape[pos * H + d]!);
        updateChannelF32(m, sg, a, kv[b * KV_SCORE_COLS + d]!, s, pos, tmp);
        if (pos === CHUNK_TOKENS - 1) {
          out[b * H + d] = tmp[2]!;
        } else {
          this.store(state, row, d, tmp[0]!);
          this.store(state, row, H + d, tmp[1]!);
          this.store(state, row, 2 * H + d, tmp[2]!);
        }
      }
    }
  }

  onlinePrefill(p: OnlinePrefillParams): void {
    if (!validateOnlinePrefill(p)) return;
    // Two passes in stream order (§4.2): closing segments only read state; trailing segments then read + write.
    for (const pass of [0, 1]) {
      for (let i = 0; i < p.numSegments; i++) this.prefillSegment(p, i, pass);
    }
  }

  private prefillSegment(p: OnlinePrefillParams, i: number, pass: number): void {
    const seg = idx(p.segments).subarray(i * SEGMENT_FIELDS, (i + 1) * SEGMENT_FIELDS);
    const [seqLen, lastRow, len, loadRow, storeRow] = [seg[0]!, seg[1]!, seg[2]!, seg[3]!, seg[4]!];
    if (seqLen <= 0) return; // invalid (padding) plan
    const c1 = ((seqLen - 1) % CHUNK_TOKENS) + 1; // chunk offset one past the segment's last token
    const closes = c1 === CHUNK_TOKENS;
    if ((pass === 0) !== closes) return;
    const c0 = c1 - len;
    const state = st(p.state);
    const needLoad = c0 !== 0 && loadRow >= 0;
    const bad =
      len < 1 || len > CHUNK_TOKENS || c0 < 0
        ? "len"
        : lastRow - len + 1 < 0 || lastRow >= p.kvScore.rows
          ? "lastRow"
          : needLoad && loadRow >= state.rows
            ? "loadRow"
            : !closes && (storeRow < 0 || storeRow >= state.rows)
              ? "storeRow"
              : null;
    if (bad) {
      this.deviceError ??= `onlinePrefill: segment ${i} has ${bad} out of range (seqLen ${seqLen}, lastRow ${lastRow}, len ${len}, loadRow ${loadRow}, storeRow ${storeRow}); skipped`;
      return;
    }
    const kv = mat(p.kvScore);
    const ape = mat(p.ape);
    const out = mat(p.out);
    const first = lastRow - len + 1;
    for (let d = 0; d < H; d++) {
      let m2 = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < len; j++)
        m2 = Math.max(m2, f(kv[(first + j) * KV_SCORE_COLS + H + d]! + ape[(c0 + j) * H + d]!));
      let sum = 0;
      let num = 0;
      for (let j = 0; j < len; j++) {
        const e = f(Math.exp(f(f(kv[(first + j) * KV_SCORE_COLS + H + d]! + ape[(c0 + j) * H + d]!) - m2)));
        sum = f(sum + e);
        num = f(num + f(e * kv[(first + j) * KV_SCORE_COLS + d]!));
      }
      let m = m2;
      let sg = sum;
      let a = f(num / sum);
      if (needLoad) {
        const m1 = this.load(state, loadRow, d);
        const mm = Math.max(m1, m2);
        const w1 = f(this.load(state, loadRow, H + d) * f(Math.exp(f(m1 - mm))));
        const w2 = f(sg * f(Math.exp(f(m2 - mm))));
        const s = f(w1 + w2);
        a = f(f(f(this.load(state, loadRow, 2 * H + d) * w1) + f(a * w2)) / s);
        m = mm;
        sg = s;
      }
      if (closes) out[i * H + d] = a;
      else {
        this.store(state, storeRow, d, m);
        this.store(state, storeRow, H + d, sg);
        this.store(state, storeRow, 2 * H + d, a);
      }
    }
  }

  readIndex(v: IndexVector): Int32Array {
    return Int32Array.from(idx(v));
  }
  readMatrix(m: MatrixF32): Float32Array {
    return Float32Array.from(mat(m));
  }
  readStateRows(s: StateBuffer, firstRow: number, count: number): Float32Array {
    const state = st(s);
    check(
      firstRow >= 0 && firstRow + count <= s.rows,
      "STATE_ROWS",
      "rows",
      [firstRow, count],
      `must lie in [0, ${s.rows})`,
    );
    const out = new Float32Array(count * STATE_ROW_ELEMS);
    const d = state[DATA];
    const base = firstRow * STATE_ROW_ELEMS;
    for (let i = 0; i < out.length; i++) out[i] = s.dtype === "fp32" ? d[base + i]! : fromBf16Bits(d[base + i]!);
    return out;
  }
  readStateBits(s: StateBuffer, firstRow: number, count: number): Uint32Array | Uint16Array {
    const state = st(s);
    check(
      firstRow >= 0 && firstRow + count <= s.rows,
      "STATE_ROWS",
      "rows",
      [firstRow, count],
      `must lie in [0, ${s.rows})`,
    );
    const d = state[DATA];
    const sub = d.slice(firstRow * STATE_ROW_ELEMS, (firstRow + count) * STATE_ROW_ELEMS);
    return sub instanceof Float32Array ? new Uint32Array(sub.buffer) : sub;
  }
  writeStateRows(s: StateBuffer, firstRow: number, values: Float32Array): void {
    const state = st(s);
    const count = values.length / STATE_ROW_ELEMS;
    check(
      Number.isInteger(count) && firstRow >= 0 && firstRow + count <= s.rows,
      "STATE_ROWS",
      "rows",
      [firstRow, count],
      `must lie in [0, ${s.rows})`,
    );
    for (let i = 0; i < values.length; i++) {
      const row = firstRow + Math.floor(i / STATE_ROW_ELEMS);
      this.store(state, row, i % STATE_ROW_ELEMS, values[i]!);
    }
  }
  synchronize(): void {
    const e = this.deviceError;
    this.deviceError = null;
    if (e) throw new OnlineMtpError("BACKEND", "device", e, "a kernel found an out-of-range device-resident value");
  }
}
