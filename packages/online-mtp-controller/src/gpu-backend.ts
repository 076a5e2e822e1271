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
  createContext,
  createDeviceBuffer,
  probeOnlineMtp,
  type DeviceBuffer,
  type GpuContext,
} from "@dsv4-kv/kernels-cuda";
import { ONLINE_MTP_STATE_TYPE, onlineMtpNative, type OnlineMtpNative } from "@dsv4-kv/kernels-cuda/internal";
import type { IndexVector, MatrixF32, StateBuffer } from "./backend.js";
import { type BackendKernels, type BackendStorage, CheckedBackend } from "./checked-backend.js";
import { STATE_ROW_ELEMS } from "./constants.js";
import { OnlineMtpError } from "./errors.js";
import { HandleStore } from "./handles.js";
import { bf16BitsOf } from "./math.js";

type Handle = IndexVector | MatrixF32 | StateBuffer;

const buffers = new HandleStore<DeviceBuffer>("GpuBackend");

/** The device buffers behind the handle fields `keys` of `p`, under the same names (what the addon takes). */
function buffersOf<const K extends string>(
  p: Readonly<Record<NoInfer<K>, Handle>>,
  keys: readonly K[],
): Record<K, DeviceBuffer> {
  const out = {} as Record<K, DeviceBuffer>;
  for (const k of keys) out[k] = buffers.get(p[k], k);
  return out;
}

/** Like `buffersOf` for an optional handle: null when absent. */
function bufferOrNull(h: Handle | null | undefined, field: string): DeviceBuffer | null {
  return h ? buffers.get(h, field) : null;
}

function stateType(s: StateBuffer): 0 | 1 {
  return ONLINE_MTP_STATE_TYPE[s.dtype];
}

const SEGMENT_ERR_FIELDS = ["none", "len", "lastRow", "loadRow", "storeRow"];

/** Why the GPU backend is (un)available; never throws. */
export function probeGpuBackend(): { ok: boolean; reason: string } {
  const p = probeOnlineMtp();
  return { ok: p.ok, reason: p.reason };
}

export class GpuBackend extends CheckedBackend {
  readonly name = "gpu";
  readonly native: OnlineMtpNative;
  readonly context: GpuContext;
  private readonly err: DeviceBuffer;

  constructor(context?: GpuContext) {
    super();
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
  private uploaded(values: ArrayBufferView): DeviceBuffer {
    const b = this.alloc(values.byteLength);
    this.upload(b, values);
    return b;
  }

  protected readonly storage: BackendStorage = {
    newIndex: (values) => buffers.make({ kind: "index", length: values.length }, this.uploaded(values)),
    storeIndex: (dst, values) => this.upload(buffers.get(dst, "dst"), values),
    newMatrix: (values, rows, cols) =>
      buffers.make(
        { kind: "matrix", rows, cols },
        values ? this.uploaded(values) : this.fill(this.alloc(rows * cols * 4), 0),
      ),
    newState: (rows, dtype) => {
      // uninitialized like torch.empty; 0xFF bytes are NaN in fp32 and bf16, so reading a never-written row shows
      const b = this.fill(this.alloc(rows * STATE_ROW_ELEMS * (dtype === "fp32" ? 4 : 2)), 0xff);
      return buffers.make({ kind: "state", rows, dtype }, b);
    },
    loadIndex: (v) => this.download(buffers.get(v, "v"), new Int32Array(v.length)),
    loadMatrix: (m) => this.download(buffers.get(m, "m"), new Float32Array(m.rows * m.cols)),
    loadStateBits: (s, firstRow, count) => {
      const n = count * STATE_ROW_ELEMS;
      const out = s.dtype === "fp32" ? new Uint32Array(n) : new Uint16Array(n);
      return this.download(buffers.get(s, "s"), out, firstRow * STATE_ROW_ELEMS * out.BYTES_PER_ELEMENT);
    },
    loadStateRows: (s, firstRow, count) => {
      const bits = this.storage.loadStateBits(s, firstRow, count);
      if (bits instanceof Uint32Array) return new Float32Array(bits.buffer);
      const wide = new Uint32Array(bits.length);
      for (let i = 0; i < bits.length; i++) wide[i] = bits[i]! << 16;
      return new Float32Array(wide.buffer);
    },
    storeStateRows: (s, firstRow, values) => {
      const bits = s.dtype === "fp32" ? values : Uint16Array.from(values, (x) => bf16BitsOf(x));
      this.upload(buffers.get(s, "s"), bits, firstRow * STATE_ROW_ELEMS * bits.BYTES_PER_ELEMENT);
    },
  };

  protected readonly kernels: BackendKernels = {
    writePrefix: (p) =>
      this.native.writePrefix(this.context, {
        ...buffersOf(p, ["kvScore", "seqLens", "reqPoolIndices", "ape", "state"]),
        batch: p.batchSize,
        numVerify: p.numVerifyTokens,
        bankStrideRows: p.bankStrideRows,
        numReqSlots: p.numReqSlots,
        stateType: stateType(p.state),
      }),
    markPending: (p) =>
      this.native.markPending(this.context, {
        ...buffersOf(p, ["seqLens", "reqPoolIndices", "pendingSeqLens", "pendingWidths"]),
        batch: p.batchSize,
        numVerify: p.numVerifyTokens,
        numReqSlots: p.numReqSlots,
        clearAll: p.clearAll ? 1 : 0,
      }),
    commitPending: (p) =>
      this.native.commitPending(this.context, {
        ...buffersOf(p, ["curSeqLens", "reqPoolIndices", "pendingSeqLens", "pendingWidths", "state"]),
        batch: p.batchSize,
        maxDraftTokens: p.maxDraftTokens,
        clampWidth: p.clampWidth ?? 0,
        bankStrideRows: p.bankStrideRows,
        numReqSlots: p.numReqSlots,
        consume: p.consume ? 1 : 0,
        markSeqLens: bufferOrNull(p.mark?.seqLens, "mark.seqLens"),
        markWidth: p.mark ? p.mark.width : 1,
        stateType: stateType(p.state),
      }),
    resetSlots: (p) =>
      this.native.resetSlots(this.context, {
        ...buffersOf(p, ["state", "slots"]),
        pendingSeqLens: bufferOrNull(p.pending?.seqLens, "pending.seqLens"),
        pendingWidths: bufferOrNull(p.pending?.widths, "pending.widths"),
        count: p.count,
        bankStrideRows: p.bankStrideRows,
        maxDraftTokens: p.maxDraftTokens,
        numReqSlots: p.numReqSlots,
        stateType: stateType(p.state),
      }),
    onlineDecode: (p) =>
      this.native.decode(this.context, {
        ...buffersOf(p, ["state", "kvScore", "ape", "seqLens", "reqPoolIndices", "out"]),
        batch: p.batchSize,
        slotOffsetRows: p.slotOffsetRows,
        numReqSlots: p.numReqSlots,
        stateType: stateType(p.state),
      }),
    onlinePrefill: (p) =>
      this.native.prefill(this.context, {
        ...buffersOf(p, ["state", "kvScore", "ape", "segments", "out"]),
        err: this.err,
        numSegments: p.numSegments,
        stateType: stateType(p.state),
      }),
  };

  synchronize(): void {
    this.context.synchronize();
    const e = this.download(this.err, new Int32Array(4));
    if (e[0] !== 0) {
      this.fill(this.err, 0);
      const what = SEGMENT_ERR_FIELDS[e[0]!] ?? "a field";
      const rule = `onlinePrefill: segment ${e[1]} has ${what} out of range (value ${e[2]}); skipped`;
      throw new OnlineMtpError("BACKEND", "device", Array.from(e), rule);
    }
  }
}

/** A GpuBackend on device 0; throws KernelsCudaUnavailableError without a usable GPU. */
export function createGpuBackend(): GpuBackend {
  return new GpuBackend();
}
