/**
 * GPU backend: the CUDA kernels of @dsv4-kv/kernels-cuda (native/online_mtp). Every call is validated with the
 * same rules as the CPU backend first (same OnlineMtpError), then the addon re-checks sizes before launching on the
 * context's stream. Kernel launches are asynchronous; `synchronize()` waits and reports a device-side bounds error
 * (prefill segment rows out of range) as an OnlineMtpError.
 *
 * Every copy and fill runs on the context's stream (the addon's `copyToDevice` / `copyToHost` / `fill`), so it is
 * ordered with the kernels without any stream synchronisation: an upload that overwrites an index vector lands after
 * the kernels queued before it have read the old values and before the ones queued after it; a read returns once
 * the queued work and its own copy are done. No call here synchronises the stream except `synchronize()` (and the
 * reads, implicitly, because they must wait for their bytes).
 */
import {
  ONLINE_MTP_STATE_TYPE,
  createContext,
  createDeviceBuffer,
  onlineMtpNative,
  probeOnlineMtp,
  type DeviceBuffer,
  type GpuContext,
  type OnlineMtpNative,
} from "@dsv4-kv/kernels-cuda";
import { STATE_ROW_ELEMS, type StateDtype } from "./constants.js";
import { OnlineMtpError, check } from "./errors.js";
import { toBf16Bits } from "./math.js";
import type {
  CommitPendingParams,
  IndexVector,
  MarkPendingParams,
  MatrixF32,
  OnlineDecodeParams,
  OnlineMtpBackend,
  OnlinePrefillParams,
  ResetSlotsParams,
  StateBuffer,
  WritePrefixParams,
} from "./backend.js";
import {
  validateCommitPending,
  validateMarkPending,
  validateOnlineDecode,
  validateOnlinePrefill,
  validateResetSlots,
  validateWritePrefix,
} from "./validate.js";

const BUF = Symbol("gpu-buffer");

class GpuIndex implements IndexVector {
  readonly kind = "index" as const;
  constructor(
    readonly length: number,
    b: DeviceBuffer,
  ) {
    this[BUF] = b;
  }
  readonly [BUF]: DeviceBuffer;
}
class GpuMatrix implements MatrixF32 {
  readonly kind = "matrix" as const;
  constructor(
    readonly rows: number,
    readonly cols: number,
    b: DeviceBuffer,
  ) {
    this[BUF] = b;
  }
  readonly [BUF]: DeviceBuffer;
}
class GpuState implements StateBuffer {
  readonly kind = "state" as const;
  constructor(
    readonly rows: number,
    readonly dtype: StateDtype,
    b: DeviceBuffer,
  ) {
    this[BUF] = b;
  }
  readonly [BUF]: DeviceBuffer;
}

function buf(x: IndexVector | MatrixF32 | StateBuffer, field: string): DeviceBuffer {
  const b = (x as unknown as Record<symbol, DeviceBuffer | undefined>)[BUF];
  check(b !== undefined, "BACKEND", field, typeof x, "must come from this GpuBackend");
  return b;
}

const SEGMENT_ERR_FIELDS = ["none", "len", "lastRow", "loadRow", "storeRow"];

/** Why the GPU backend is (un)available; never throws. */
export function probeGpuBackend(): { ok: boolean; reason: string } {
  const p = probeOnlineMtp();
  return { ok: p.ok, reason: p.reason };
}

export class GpuBackend implements OnlineMtpBackend {
  readonly name = "gpu";
  readonly native: OnlineMtpNative;
  readonly context: GpuContext;
  private readonly err: DeviceBuffer;

  constructor(context?: GpuContext) {
    this.native = onlineMtpNative();
    this.context = context ?? createContext(0);
    this.err = this.fill(createDeviceBuffer(16, this.context), 0);
  }

  private alloc(bytes: number): DeviceBuffer {
    return createDeviceBuffer(Math.max(16, bytes), this.context);
  }
  private fill(b: DeviceBuffer, byte: number): DeviceBuffer {
    return this.native.fill(this.context, b, byte);
  }
  private upload(b: DeviceBuffer, view: ArrayBufferView, byteOffset = 0): void {
    if (view.byteLength > 0) this.native.copyToDevice(this.context, b, view, byteOffset);
  }
  private download<V extends ArrayBufferView>(b: DeviceBuffer, view: V, byteOffset = 0): V {
    if (view.byteLength > 0) this.native.copyToHost(this.context, b, view, byteOffset);
    return view;
  }

  uploadIndex(values: Int32Array): IndexVector {
    const b = this.alloc(values.byteLength);
    this.upload(b, values);
    return new GpuIndex(values.length, b);
  }
  writeIndex(dst: IndexVector, values: Int32Array): void {
    check(values.length <= dst.length, "SHAPE", "values.length", values.length, `must be <= ${dst.length}`);
    this.upload(buf(dst, "dst"), values);
  }
  allocIndex(length: number, value: number): IndexVector {
    return this.uploadIndex(new Int32Array(length).fill(value));
  }
  uploadMatrix(values: Float32Array, rows: number, cols: number): MatrixF32 {
    check(values.length === rows * cols, "SHAPE", "values.length", values.length, `must be rows·cols = ${rows * cols}`);
    const b = this.alloc(values.byteLength);
    this.upload(b, values);
    return new GpuMatrix(rows, cols, b);
  }
  allocMatrix(rows: number, cols: number): MatrixF32 {
    return new GpuMatrix(rows, cols, this.fill(this.alloc(rows * cols * 4), 0));
  }
  allocState(rows: number, dtype: StateDtype): StateBuffer {
    // uninitialized like torch.empty; 0xFF bytes are NaN in fp32 and bf16, so reading a never-written row shows
    return new GpuState(rows, dtype, this.fill(this.alloc(rows * STATE_ROW_ELEMS * (dtype === "fp32" ? 4 : 2)), 0xff));
  }

  private stateType(s: StateBuffer): 0 | 1 {
    return ONLINE_MTP_STATE_TYPE[s.dtype];
  }

  writePrefix(p: WritePrefixParams): void {
    if (!validateWritePrefix(p)) return;
    this.native.writePrefix(this.context, {
      kvScore: buf(p.kvScore, "kvScore"),
      seqLens: buf(p.seqLens, "seqLens"),
      reqPoolIndices: buf(p.reqPoolIndices, "reqPoolIndices"),
      ape: buf(p.ape, "ape"),
      state: buf(p.state, "state"),
      batch: p.batchSize,
      numVerify: p.numVerifyTokens,
      bankStrideRows: p.bankStrideRows,
      numReqSlots: p.numReqSlots,
      stateType: this.stateType(p.state),
    });
  }
  markPending(p: MarkPendingParams): void {
    if (!validateMarkPending(p)) return;
    this.native.markPending(this.context, {
      seqLens: buf(p.seqLens, "seqLens"),
      reqPoolIndices: buf(p.reqPoolIndices, "reqPoolIndices"),
      pendingSeqLens: buf(p.pendingSeqLens, "pendingSeqLens"),
      pendingWidths: buf(p.pendingWidths, "pendingWidths"),
      batch: p.batchSize,
      numVerify: p.numVerifyTokens,
      numReqSlots: p.numReqSlots,
      clearAll: p.clearAll ? 1 : 0,
    });
  }
  commitPending(p: CommitPendingParams): void {
    if (!validateCommitPending(p)) return;
    this.native.commitPending(this.context, {
      curSeqLens: buf(p.curSeqLens, "curSeqLens"),
      reqPoolIndices: buf(p.reqPoolIndices, "reqPoolIndices"),
      pendingSeqLens: buf(p.pendingSeqLens, "pendingSeqLens"),
      pendingWidths: buf(p.pendingWidths, "pendingWidths"),
      state: buf(p.state, "state"),
      batch: p.batchSize,
      maxDraftTokens: p.maxDraftTokens,
      clampWidth: p.clampWidth ?? 0,
      bankStrideRows: p.bankStrideRows,
      numReqSlots: p.numReqSlots,
      consume: p.consume ? 1 : 0,
      markSeqLens: p.mark ? buf(p.mark.seqLens, "mark.seqLens") : null,
      markWidth: p.mark ? p.mark.width : 1,
      stateType: this.stateType(p.state),
    });
  }
  resetSlots(p: ResetSlotsParams): void {
    if (!validateResetSlots(p)) return;
    this.native.resetSlots(this.context, {
      state: buf(p.state, "state"),
      slots: buf(p.slots, "slots"),
      pendingSeqLens: p.pending ? buf(p.pending.seqLens, "pending.seqLens") : null,
      pendingWidths: p.pending ? buf(p.pending.widths, "pending.widths") : null,
      count: p.count,
      bankStrideRows: p.bankStrideRows,
      maxDraftTokens: p.maxDraftTokens,
      numReqSlots: p.numReqSlots,
      stateType: this.stateType(p.state),
    });
  }
  onlineDecode(p: OnlineDecodeParams): void {
    if (!validateOnlineDecode(p)) return;
    this.native.decode(this.context, {
      state: buf(p.state, "state"),
      kvScore: buf(p.kvScore, "kvScore"),
      ape: buf(p.ape, "ape"),
      seqLens: buf(p.seqLens, "seqLens"),
      reqPoolIndices: buf(p.reqPoolIndices, "reqPoolIndices"),
      out: buf(p.out, "out"),
      batch: p.batchSize,
      slotOffsetRows: p.slotOffsetRows,
      numReqSlots: p.numReqSlots,
      stateType: this.stateType(p.state),
    });
  }
  onlinePrefill(p: OnlinePrefillParams): void {
    if (!validateOnlinePrefill(p)) return;
    this.native.prefill(this.context, {
      state: buf(p.state, "state"),
      kvScore: buf(p.kvScore, "kvScore"),
      ape: buf(p.ape, "ape"),
      segments: buf(p.segments, "segments"),
      out: buf(p.out, "out"),
      err: this.err,
      numSegments: p.numSegments,
      stateType: this.stateType(p.state),
    });
  }

  readIndex(v: IndexVector): Int32Array {
    return this.download(buf(v, "index"), new Int32Array(v.length));
  }
  readMatrix(m: MatrixF32): Float32Array {
    return this.download(buf(m, "matrix"), new Float32Array(m.rows * m.cols));
  }
  readStateBits(s: StateBuffer, firstRow: number, count: number): Uint32Array | Uint16Array {
    check(
      firstRow >= 0 && firstRow + count <= s.rows,
      "STATE_ROWS",
      "rows",
      [firstRow, count],
      `must lie in [0, ${s.rows})`,
    );
    const eb = s.dtype === "fp32" ? 4 : 2;
    const out =
      s.dtype === "fp32" ? new Uint32Array(count * STATE_ROW_ELEMS) : new Uint16Array(count * STATE_ROW_ELEMS);
    return this.download(buf(s, "state"), out, firstRow * STATE_ROW_ELEMS * eb);
  }
  readStateRows(s: StateBuffer, firstRow: number, count: number): Float32Array {
    const bits = this.readStateBits(s, firstRow, count);
    if (bits instanceof Uint32Array) return new Float32Array(bits.buffer);
    const wide = new Uint32Array(bits.length);
    for (let i = 0; i < bits.length; i++) wide[i] = bits[i]! << 16;
    return new Float32Array(wide.buffer);
  }
  writeStateRows(s: StateBuffer, firstRow: number, values: Float32Array): void {
    const count = values.length / STATE_ROW_ELEMS;
    check(
      Number.isInteger(count) && firstRow >= 0 && firstRow + count <= s.rows,
      "STATE_ROWS",
      "rows",
      [firstRow, count],
      `must lie in [0, ${s.rows})`,
    );
    if (s.dtype === "fp32") this.upload(buf(s, "state"), values, firstRow * STATE_ROW_ELEMS * 4);
    else
      this.upload(
        buf(s, "state"),
        Uint16Array.from(values, (x) => toBf16Bits(x)),
        firstRow * STATE_ROW_ELEMS * 2,
      );
  }
  synchronize(): void {
    this.context.synchronize();
    const e = this.download(this.err, new Int32Array(4));
    if (e[0] !== 0) {
      this.fill(this.err, 0);
      throw new OnlineMtpError(
        "BACKEND",
        "device",
        Array.from(e),
        `onlinePrefill: segment ${e[1]} has ${SEGMENT_ERR_FIELDS[e[0]!] ?? "a field"} out of range (value ${e[2]}); skipped`,
      );
    }
  }
}

/** A GpuBackend on device 0; throws KernelsCudaUnavailableError without a usable GPU. */
export function createGpuBackend(): GpuBackend {
  return new GpuBackend();
}
