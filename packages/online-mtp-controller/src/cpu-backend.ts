/**
 * CPU backend: typed arrays and the float32-semantics reference math, with the exact control flow of the CUDA
 * kernels (same guards, same skips, same write set). It is the reference the GPU backend is compared with.
 * `CheckedBackend` validates every call first; the methods here only run validated launches.
 */
import type {
  CommitPendingParams,
  MarkPendingParams,
  OnlineDecodeParams,
  OnlinePrefillParams,
  ResetSlotsParams,
  StateBuffer,
  WritePrefixParams,
} from "./backend.js";
import { SEGMENT_FIELDS } from "./backend.js";
import { type BackendKernels, type BackendStorage, CheckedBackend } from "./checked-backend.js";
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS, STATE_ROW_ELEMS } from "./constants.js";
import { OnlineMtpError } from "./errors.js";
import { HandleStore } from "./handles.js";
import { bf16BitsOf, bf16RoundOf, bf16ValueOf, updateChannel } from "./math.js";

const H = HEAD_DIM;
const f = Math.fround;

const indexes = new HandleStore<Int32Array>("CpuBackend");
const matrices = new HandleStore<Float32Array>("CpuBackend");
const states = new HandleStore<Float32Array | Uint16Array>("CpuBackend");

/**
 * Deliberately wrong kernel variants, for mutation tests that prove the invariants catch them. Set only through
 * `FaultyCpuBackend` of the testing subpath; a production `CpuBackend` has none.
 */
export interface CpuFaults {
  /** writePrefix stores step i into bank i (instead of i + 1); commit copies bank a − 1. */
  bankIndexOffByOne?: boolean;
  /** Ignores the exact-chunk-boundary rule: writes bank i+1 and commits even when (S + k) % 128 == 0. */
  ignoreBoundaryRule?: boolean;
  /** bf16: writePrefix rounds its register state after every step, not only at the bank stores. */
  roundEveryStep?: boolean;
}

const NO_FAULTS: CpuFaults = {};
const faultsOf = new WeakMap<CpuBackend, CpuFaults>();

/** The testing subpath's seam: not exported from the package root, so production code cannot reach it. */
export function injectCpuFaults(be: CpuBackend, faults: CpuFaults): void {
  faultsOf.set(be, { ...faults });
}

/** Calls `fn(b, r)` for each batch row b whose request slot r = rpi[b] is in [0, N) (others are padding: no-ops). */
function forEachSlot(rpi: Int32Array, count: number, N: number, fn: (b: number, r: number) => void): void {
  for (let b = 0; b < count; b++) {
    const r = rpi[b]!;
    if (r >= 0 && r < N) fn(b, r);
  }
}

type StateData = Float32Array | Uint16Array;

function load(s: StateBuffer, d: StateData, row: number, e: number): number {
  const i = row * STATE_ROW_ELEMS + e;
  return s.dtype === "fp32" ? d[i]! : bf16ValueOf(d[i]!);
}

function store(s: StateBuffer, d: StateData, row: number, e: number, x: number): void {
  const i = row * STATE_ROW_ELEMS + e;
  d[i] = s.dtype === "fp32" ? x : bf16BitsOf(x);
}

/** Channel `ch` of a state row: (max, sum, acc). */
function storeChannel(s: StateBuffer, d: StateData, row: number, ch: number, m: number, sg: number, a: number) {
  store(s, d, row, ch, m);
  store(s, d, row, H + ch, sg);
  store(s, d, row, 2 * H + ch, a);
}

const storage: BackendStorage = {
  newIndex: (values) => indexes.make({ kind: "index", length: values.length }, Int32Array.from(values)),
  storeIndex: (dst, values) => indexes.get(dst, "dst").set(values),
  newMatrix: (values, rows, cols) =>
    matrices.make({ kind: "matrix", rows, cols }, values ? Float32Array.from(values) : new Float32Array(rows * cols)),
  newState: (rows, dtype) => {
    // Uninitialized like torch.empty: filled with NaN so a read of a never-written row poisons the result.
    const data =
      dtype === "fp32"
        ? new Float32Array(rows * STATE_ROW_ELEMS).fill(Number.NaN)
        : new Uint16Array(rows * STATE_ROW_ELEMS).fill(0x7fc0);
    return states.make({ kind: "state", rows, dtype }, data);
  },
  loadIndex: (v) => Int32Array.from(indexes.get(v, "v")),
  loadMatrix: (m) => Float32Array.from(matrices.get(m, "m")),
  loadStateBits: (s, firstRow, count) => {
    const sub = states.get(s, "s").slice(firstRow * STATE_ROW_ELEMS, (firstRow + count) * STATE_ROW_ELEMS);
    return sub instanceof Float32Array ? new Uint32Array(sub.buffer) : sub;
  },
  loadStateRows: (s, firstRow, count) => {
    const d = states.get(s, "s");
    const out = new Float32Array(count * STATE_ROW_ELEMS);
    const base = firstRow * STATE_ROW_ELEMS;
    for (let i = 0; i < out.length; i++) out[i] = s.dtype === "fp32" ? d[base + i]! : bf16ValueOf(d[base + i]!);
    return out;
  },
  storeStateRows: (s, firstRow, values) => {
    const d = states.get(s, "s");
    for (let i = 0; i < values.length; i++) {
      store(s, d, firstRow + Math.floor(i / STATE_ROW_ELEMS), i % STATE_ROW_ELEMS, values[i]!);
    }
  },
};

/** Step i of the verify prefix into bank i + 1 (none at an exact chunk boundary). */
function cpuWritePrefix(p: WritePrefixParams, faults: CpuFaults): void {
  const kv = matrices.get(p.kvScore, "kvScore");
  const ape = matrices.get(p.ape, "ape");
  const state = states.get(p.state, "state");
  const seq = indexes.get(p.seqLens, "seqLens");
  const D = p.numVerifyTokens;
  const O = p.bankStrideRows;
  const tmp = new Float64Array(3);
  const bankShift = faults.bankIndexOffByOne ? 0 : 1;
  const r16 = (x: number) => (faults.roundEveryStep && p.state.dtype === "bf16" ? bf16RoundOf(x) : x);
  forEachSlot(indexes.get(p.reqPoolIndices, "reqPoolIndices"), p.batchSize, p.numReqSlots, (b, r) => {
    const S = seq[b]!;
    if (S < 0) return; // padding row (docs/reference/online-mtp.md §8.1)
    const start = S % CHUNK_TOKENS;
    const hasPartial = S > 0 && start !== 0;
    for (let d = 0; d < H; d++) {
      let m = hasPartial ? load(p.state, state, r, d) : 0;
      let sg = hasPartial ? load(p.state, state, r, H + d) : 0;
      let a = hasPartial ? load(p.state, state, r, 2 * H + d) : 0;
      for (let i = 0; i < D; i++) {
        const pos = (start + i) % CHUNK_TOKENS;
        const row = (b * D + i) * KV_SCORE_COLS;
        const s = f(kv[row + H + d]! + ape[pos * H + d]!);
        updateChannel(f, m, sg, a, kv[row + d]!, s, pos, tmp);
        m = r16(tmp[0]!);
        sg = r16(tmp[1]!);
        a = r16(tmp[2]!);
        if ((S + i + 1) % CHUNK_TOKENS !== 0 || faults.ignoreBoundaryRule) {
          storeChannel(p.state, state, r + (i + bankShift) * O, d, m, sg, a);
        }
        if (pos === CHUNK_TOKENS - 1) {
          m = 0;
          sg = 0;
          a = 0;
        }
      }
    }
  });
}

/** The pending marker (length, width) of every slot of the batch. */
function cpuMarkPending(p: MarkPendingParams): void {
  const pend = indexes.get(p.pendingSeqLens, "pendingSeqLens");
  const widths = indexes.get(p.pendingWidths, "pendingWidths");
  if (p.clearAll) {
    pend.fill(-1, 0, p.numReqSlots);
    widths.fill(0, 0, p.numReqSlots);
  }
  const seq = indexes.get(p.seqLens, "seqLens");
  forEachSlot(indexes.get(p.reqPoolIndices, "reqPoolIndices"), p.batchSize, p.numReqSlots, (b, r) => {
    const S = seq[b]!;
    pend[r] = S < 0 ? -1 : S;
    widths[r] = S < 0 ? 0 : p.numVerifyTokens;
  });
}

/** Copies the accepted bank into bank 0, bitwise, and clears or re-marks the marker. */
function cpuCommitPending(p: CommitPendingParams, faults: CpuFaults): void {
  const pend = indexes.get(p.pendingSeqLens, "pendingSeqLens");
  const widths = indexes.get(p.pendingWidths, "pendingWidths");
  const cur = indexes.get(p.curSeqLens, "curSeqLens");
  const data = states.get(p.state, "state");
  const mark = p.mark ? { seq: indexes.get(p.mark.seqLens, "mark.seqLens"), width: p.mark.width } : null;
  const srcBankShift = faults.bankIndexOffByOne ? 1 : 0;
  forEachSlot(indexes.get(p.reqPoolIndices, "reqPoolIndices"), p.batchSize, p.numReqSlots, (b, r) => {
    const S = pend[r]!;
    const a = commitAccept(pend, widths, r, S, cur[b]!, p.clampWidth, p.maxDraftTokens, p.consume);
    // (S + a) % 128 == 0: the next token re-initialises, bank 0 is never read
    if (a > 0 && ((S + a) % CHUNK_TOKENS !== 0 || faults.ignoreBoundaryRule)) {
      const src = (r + (a - srcBankShift) * p.bankStrideRows) * STATE_ROW_ELEMS;
      data.copyWithin(r * STATE_ROW_ELEMS, src, src + STATE_ROW_ELEMS); // raw, bitwise
    }
    if (mark) {
      const Snew = mark.seq[b]!;
      pend[r] = Snew < 0 ? -1 : Snew;
      widths[r] = Snew < 0 ? 0 : mark.width;
    }
  });
}

/** Every bank of the slots back to the empty state (and their markers cleared). */
function cpuResetSlots(p: ResetSlotsParams): void {
  const data = states.get(p.state, "state");
  const seqs = p.pending ? indexes.get(p.pending.seqLens, "pending.seqLens") : null;
  const widths = p.pending ? indexes.get(p.pending.widths, "pending.widths") : null;
  forEachSlot(indexes.get(p.slots, "slots"), p.count, p.numReqSlots, (_, r) => {
    for (let b = 0; b <= p.maxDraftTokens; b++) {
      const row = r + b * p.bankStrideRows;
      for (let d = 0; d < H; d++) storeChannel(p.state, data, row, d, Number.NEGATIVE_INFINITY, 0, 0);
    }
    if (seqs && widths) {
      seqs[r] = -1;
      widths[r] = 0;
    }
  });
}

/** One decode token per request: fold into its row, or emit the closed chunk. */
function cpuOnlineDecode(p: OnlineDecodeParams): void {
  const kv = matrices.get(p.kvScore, "kvScore");
  const ape = matrices.get(p.ape, "ape");
  const out = matrices.get(p.out, "out");
  const state = states.get(p.state, "state");
  const seq = indexes.get(p.seqLens, "seqLens");
  const tmp = new Float64Array(3);
  forEachSlot(indexes.get(p.reqPoolIndices, "reqPoolIndices"), p.batchSize, p.numReqSlots, (b, r) => {
    const L = seq[b]!;
    if (L <= 0) return;
    const pos = (L - 1) % CHUNK_TOKENS;
    const row = r + p.slotOffsetRows;
    for (let d = 0; d < H; d++) {
      const m = pos !== 0 ? load(p.state, state, row, d) : 0;
      const sg = pos !== 0 ? load(p.state, state, row, H + d) : 0;
      const a = pos !== 0 ? load(p.state, state, row, 2 * H + d) : 0;
      const s = f(kv[b * KV_SCORE_COLS + H + d]! + ape[pos * H + d]!);
      updateChannel(f, m, sg, a, kv[b * KV_SCORE_COLS + d]!, s, pos, tmp);
      if (pos === CHUNK_TOKENS - 1) out[b * H + d] = tmp[2]!;
      else storeChannel(p.state, state, row, d, tmp[0]!, tmp[1]!, tmp[2]!);
    }
  });
}

/** The prefill segments; a bad segment is reported as a device error. */
function cpuOnlinePrefill(p: OnlinePrefillParams, report: (deviceError: string) => void): void {
  // Two passes in stream order (docs/reference/online-mtp.md §5.2): closing segments only read state; trailing
  // segments then read + write.
  for (const pass of [0, 1]) {
    for (let i = 0; i < p.numSegments; i++) {
      const bad = prefillSegment(p, i, pass);
      if (bad) report(bad);
    }
  }
}

/** The kernels with the CUDA kernels' control flow; `faults` (tests only) breaks a rule on purpose. */
function cpuKernels(faultsNow: () => CpuFaults, report: (deviceError: string) => void): BackendKernels {
  return {
    writePrefix: (p) => cpuWritePrefix(p, faultsNow()),
    markPending: cpuMarkPending,
    commitPending: (p) => cpuCommitPending(p, faultsNow()),
    resetSlots: cpuResetSlots,
    onlineDecode: cpuOnlineDecode,
    onlinePrefill: (p) => cpuOnlinePrefill(p, report),
  };
}

/**
 * docs/reference/online-mtp.md §8.3 for one request slot r with marker S at current length c: returns the accepted
 * count a (0: nothing to copy) and, with `consume`, clears the marker it read.
 */
function commitAccept(
  pend: Int32Array,
  widths: Int32Array,
  r: number,
  S: number,
  c: number,
  clampWidth: number | null,
  maxDraftTokens: number,
  consume: boolean,
): number {
  if (S < 0) return 0;
  if (c < 0) return 0; // padding row: the marker stays for the request's real forward
  const width = Math.min(clampWidth ?? widths[r]!, maxDraftTokens);
  if (consume) {
    pend[r] = -1;
    widths[r] = 0;
  }
  return c - S < 0 ? 0 : Math.min(c - S, width); // a <= 0: no progress, rollback, bank 0 unchanged
}

/** One segment of a prefill pass; returns the device error it records, or null. */
function prefillSegment(p: OnlinePrefillParams, i: number, pass: number): string | null {
  const seg = indexes.get(p.segments, "segments").subarray(i * SEGMENT_FIELDS, (i + 1) * SEGMENT_FIELDS);
  const [seqLen, lastRow, len, loadRow, storeRow] = [seg[0]!, seg[1]!, seg[2]!, seg[3]!, seg[4]!];
  if (seqLen <= 0) return null; // invalid (padding) plan
  const c1 = ((seqLen - 1) % CHUNK_TOKENS) + 1; // chunk offset one past the segment's last token
  const closes = c1 === CHUNK_TOKENS;
  if ((pass === 0) !== closes) return null;
  const c0 = c1 - len;
  const rows = p.state.rows;
  const needLoad = c0 !== 0 && loadRow >= 0;
  const bad =
    len < 1 || len > CHUNK_TOKENS || c0 < 0
      ? "len"
      : lastRow - len + 1 < 0 || lastRow >= p.kvScore.rows
        ? "lastRow"
        : needLoad && loadRow >= rows
          ? "loadRow"
          : !closes && (storeRow < 0 || storeRow >= rows)
            ? "storeRow"
            : null;
  if (bad) {
    const fields = `seqLen ${seqLen}, lastRow ${lastRow}, len ${len}, loadRow ${loadRow}, storeRow ${storeRow}`;
    return `onlinePrefill: segment ${i} has ${bad} out of range (${fields}); skipped`;
  }
  const state = states.get(p.state, "state");
  const kv = matrices.get(p.kvScore, "kvScore");
  const ape = matrices.get(p.ape, "ape");
  const out = matrices.get(p.out, "out");
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
      const m1 = load(p.state, state, loadRow, d);
      const mm = Math.max(m1, m2);
      const w1 = f(load(p.state, state, loadRow, H + d) * f(Math.exp(f(m1 - mm))));
      const w2 = f(sg * f(Math.exp(f(m2 - mm))));
      const s = f(w1 + w2);
      a = f(f(f(load(p.state, state, loadRow, 2 * H + d) * w1) + f(a * w2)) / s);
      m = mm;
      sg = s;
    }
    if (closes) out[i * H + d] = a;
    else storeChannel(p.state, state, storeRow, d, m, sg, a);
  }
  return null;
}

export class CpuBackend extends CheckedBackend {
  readonly name = "cpu";
  private deviceError: string | null = null;
  protected readonly storage = storage;
  protected readonly kernels = cpuKernels(
    () => faultsOf.get(this) ?? NO_FAULTS,
    (e) => {
      this.deviceError ??= e;
    },
  );

  synchronize(): void {
    const e = this.deviceError;
    this.deviceError = null;
    if (e) throw new OnlineMtpError("BACKEND", "device", e, "a kernel found an out-of-range device-resident value");
  }
}
