/**
 * The GPU backend: the ring compress kernels of @dsv4-kv/kernels-cuda (native/compress). Every call runs the shared
 * host validator first (the same CompressError as the CPU backend), then uploads the batch (input and plan tables into
 * device buffers kept between calls and regrown when too small), fills `out` with 0xFF bytes (NaN: padding and
 * non-compressing rows read as NaN, as on the CPU), launches, copies `out` back and reads the device error word. A
 * device error (the kernels' re-check of the plan rows) becomes the CompressError the host validator raises for that
 * row and field.
 *
 * Every copy and fill runs on the context's stream (onlineMtpNative's copyToDevice / copyToHost / fill), so uploads,
 * launches and reads are ordered without stream synchronisation; a read returns once its bytes are on the host.
 */
import {
  type DeviceBuffer,
  type GpuContext,
  createContext,
  createDeviceBuffer,
  probeCompress,
} from "@dsv4-kv/kernels-cuda";
import {
  COMPRESS_ERR,
  COMPRESS_KERNEL,
  COMPRESS_STATE_TYPE,
  type CompressNative,
  type OnlineMtpNative,
  compressNative,
  onlineMtpNative,
} from "@dsv4-kv/kernels-cuda/internal";
import type { CompressGeometry, DecodeBatch, PrefillBatch, RingCompressBackend } from "./backend.js";
import { check, checkKeys, checkObject } from "./check.js";
import { CompressError } from "./errors.js";
import { type Layout, frozenGeometry, layoutOf } from "./geometry.js";
import { checkApe, checkRowRange, checkStateValues, toStateBits, widenBf16 } from "./state-store.js";
import {
  type CheckedDecode,
  type CheckedPrefill,
  type PlanViolation,
  checkDecodeRows,
  checkDecodeShape,
  checkPrefillRows,
  checkPrefillShape,
  compressRowRule,
  decodeRowRule,
  throwViolation,
  writeRowRule,
} from "./validate.js";

export interface GpuCompressBackendOptions {
  /** The context whose stream every call runs on; default a new context on device 0 (destroyed by dispose()). */
  context?: GpuContext;
}

const OPTION_KEYS = ["context"] as const;
type BufferName = "input" | "planC" | "planW" | "planD" | "out";

/** Backends that skip the host's plan-row rules (a test hook, kept off the published options). */
const DEVICE_ROW_CHECKS_ONLY = new WeakSet<GpuCompressBackend>();

/**
 * Testing only (imported by this package's GPU tests from this module, never exported by a subpath): `b` skips the
 * host validator's plan-row rules (shapes are still checked; a prefill of 0 input rows keeps them) so the kernels'
 * device re-check meets the bad rows; its error word still becomes the host's CompressError.
 */
export function injectDeviceRowChecksOnly(b: GpuCompressBackend): void {
  DEVICE_ROW_CHECKS_ONLY.add(b);
}
/** Why the GPU backend is (un)available; never throws. */
export function probeGpuCompressBackend(): { ok: boolean; reason: string } {
  const p = probeCompress();
  return { ok: p.ok, reason: p.reason };
}

export class GpuCompressBackend implements RingCompressBackend {
  readonly name = "gpu";
  readonly geometry: Readonly<CompressGeometry>;
  readonly rowElems: number;
  readonly context: GpuContext;
  private readonly layout: Layout;
  private readonly native: CompressNative;
  private readonly copies: OnlineMtpNative;
  private readonly state: DeviceBuffer;
  private readonly ape: DeviceBuffer;
  private readonly err: DeviceBuffer;
  private readonly scratch = new Map<BufferName, DeviceBuffer>();
  private readonly ownsContext: boolean;
  private apeSet = false;
  private disposed = false;

  constructor(geometry: CompressGeometry, options: GpuCompressBackendOptions = {}) {
    const layout = layoutOf(geometry);
    const raw: unknown = options;
    checkObject(raw, "options");
    checkKeys(raw, OPTION_KEYS, "options");
    this.layout = layout;
    this.geometry = frozenGeometry(layout);
    this.rowElems = layout.rowElems;
    this.native = compressNative();
    this.copies = onlineMtpNative();
    this.ownsContext = options.context === undefined;
    this.context = options.context ?? createContext(0);
    const elemBytes = layout.stateDtype === "fp32" ? 4 : 2;
    // Never-written rows read as NaN (all-ones bits), as on the CPU backend.
    this.state = this.fill(this.alloc(layout.stateRows * layout.rowElems * elemBytes), 0xff);
    this.ape = this.alloc(layout.window * layout.headDim * 4);
    this.err = this.fill(this.alloc(16), 0);
  }

  setApe(ape: Float32Array): void {
    this.checkLive();
    checkApe(this.layout, ape);
    this.upload(this.ape, ape);
    this.apeSet = true;
  }

  prefill(batch: PrefillBatch): Float32Array {
    this.checkLive();
    const c = checkPrefillShape(this.geometry, batch);
    // The binding takes inputRows >= 1, so an empty input launches with one dummy row the device checks would let a
    // row read: with no input rows the host rules always run, and no row they accept reads input.
    if (c.inputRows === 0 || !DEVICE_ROW_CHECKS_ONLY.has(this)) checkPrefillRows(c);
    this.requireApe();
    const { headDim } = this.layout;
    const inputRows = Math.max(1, c.inputRows);
    const input = this.staged("input", batch.input, inputRows * this.rowElems * 4);
    const planC = this.staged("planC", c.planC.bytes, c.planC.bytes.byteLength);
    const planW = this.staged("planW", c.planW.bytes, c.planW.bytes.byteLength);
    const out = this.fill(this.sized("out", c.numPlanC * headDim * 4), 0xff);
    const plans = { planC, planW, numPlanC: c.numPlanC, numPlanW: c.numPlanW };
    this.native.prefill(this.context, { ...this.launchArgs(input, inputRows, out), ...plans });
    const result = this.download(out, new Float32Array(c.numPlanC * headDim));
    this.throwDeviceError((word) => prefillViolation(c, word));
    return result;
  }

  decode(batch: DecodeBatch): Float32Array {
    this.checkLive();
    const c = checkDecodeShape(this.geometry, batch);
    if (!DEVICE_ROW_CHECKS_ONLY.has(this)) checkDecodeRows(c);
    this.requireApe();
    // No rows, no work: nothing to launch (the binding's inputRows >= 1 would need a dummy input row).
    if (c.batch === 0) return new Float32Array(0);
    const { headDim } = this.layout;
    const input = this.staged("input", batch.input, c.batch * this.rowElems * 4);
    const planD = this.staged("planD", c.planD.bytes, c.planD.bytes.byteLength);
    const out = this.fill(this.sized("out", c.batch * headDim * 4), 0xff);
    this.native.decode(this.context, { ...this.launchArgs(input, c.batch, out), planD, batch: c.batch });
    const result = this.download(out, new Float32Array(c.batch * headDim));
    this.throwDeviceError((word) => decodeViolation(c, word));
    return result;
  }

  readStateRows(firstRow: number, count: number): Float32Array {
    const bits = this.readStateBits(firstRow, count);
    return bits instanceof Uint32Array ? new Float32Array(bits.buffer) : widenBf16(bits);
  }

  readStateBits(firstRow: number, count: number): Uint32Array | Uint16Array {
    this.checkLive();
    const [lo, hi] = checkRowRange(this.layout, firstRow, count);
    const out = this.layout.stateDtype === "fp32" ? new Uint32Array(hi - lo) : new Uint16Array(hi - lo);
    return this.download(this.state, out, lo * out.BYTES_PER_ELEMENT);
  }

  writeStateRows(firstRow: number, values: Float32Array): void {
    this.checkLive();
    checkStateValues(this.layout, firstRow, values);
    const bits = toStateBits(this.layout.stateDtype, values);
    this.upload(this.state, bits, firstRow * this.rowElems * bits.BYTES_PER_ELEMENT);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.context.synchronize();
    for (const b of [this.state, this.ape, this.err, ...this.scratch.values()]) b.free();
    this.scratch.clear();
    if (this.ownsContext) this.context.destroy();
  }

  /** The arguments prefill and decode launches share: this backend's buffers and geometry, the call's input and out. */
  private launchArgs(input: DeviceBuffer, inputRows: number, out: DeviceBuffer) {
    return {
      state: this.state,
      input,
      ape: this.ape,
      out,
      err: this.err,
      stateRows: this.layout.stateRows,
      inputRows,
      cr: this.layout.compressRatio,
      headDim: this.layout.headDim as 128 | 512,
      stateType: COMPRESS_STATE_TYPE[this.layout.stateDtype],
    };
  }

  private checkLive(): void {
    check(!this.disposed, "INVALID_ARGUMENT", "backend", "disposed", "must not be used after dispose()");
  }

  private requireApe(): void {
    check(this.apeSet, "INVALID_ARGUMENT", "ape", null, "must be set with setApe(ape) before prefill / decode");
  }

  private alloc(bytes: number): DeviceBuffer {
    return createDeviceBuffer(Math.max(16, bytes), this.context);
  }
  private fill(b: DeviceBuffer, byte: number): DeviceBuffer {
    return this.copies.fill(this.context, b, byte);
  }
  private upload(b: DeviceBuffer, view: ArrayBufferView, byteOffset = 0): void {
    if (view.byteLength > 0) this.copies.copyToDevice(this.context, b, view, byteOffset);
  }
  private download<V extends ArrayBufferView>(b: DeviceBuffer, view: V, byteOffset = 0): V {
    if (view.byteLength > 0) this.copies.copyToHost(this.context, b, view, byteOffset);
    return view;
  }

  /** The scratch buffer `name`, regrown (the old one freed after the queued work) when under `bytes`. */
  private sized(name: BufferName, bytes: number): DeviceBuffer {
    const have = this.scratch.get(name);
    if (have && have.byteLength >= bytes) return have;
    if (have) {
      this.context.synchronize();
      have.free();
    }
    const b = this.alloc(Math.max(bytes, 2 * (have?.byteLength ?? 0)));
    this.scratch.set(name, b);
    return b;
  }

  /** `view` uploaded into scratch `name` of at least `bytes` bytes. */
  private staged(name: BufferName, view: ArrayBufferView, bytes: number): DeviceBuffer {
    const b = this.sized(name, bytes);
    this.upload(b, view);
    return b;
  }

  /** Reads the error word; on an error clears it and throws the host's CompressError for the row and field. */
  private throwDeviceError(violationOf: (word: Int32Array) => PlanViolation | null): void {
    const word = this.download(this.err, new Int32Array(4));
    if (word[0] === COMPRESS_ERR.none) return;
    this.fill(this.err, 0);
    const v = violationOf(word);
    if (v) throwViolation(v);
    const rule =
      "the kernels refused a plan row the host validator accepts: report it (word = [code, row, value, kernel])";
    throw new CompressError("INTERNAL", "device error word", Array.from(word), rule, { word: Array.from(word) });
  }
}

/** A GpuCompressBackend on device 0; throws KernelsCudaUnavailableError without a usable GPU. */
export function createGpuCompressBackend(geometry: CompressGeometry): GpuCompressBackend {
  return new GpuCompressBackend(geometry);
}

// ---- device error word → the host rule of the same row and field ---------------------------------------------------

/** The host violation of `rule(field)` on the first of `fields` it refuses, for a row inside the table. */
function firstViolation<F extends string>(
  row: number,
  rows: number,
  fields: readonly F[],
  rule: (row: number, field: F) => PlanViolation | null,
): PlanViolation | null {
  if (row < 0 || row >= rows) return null;
  for (const f of fields) {
    const v = rule(row, f);
    if (v) return v;
  }
  return null;
}

const RING_FIELDS = ["readPage0", "readPage1"] as const;

function prefillViolation(c: CheckedPrefill, word: Int32Array): PlanViolation | null {
  const [code, row, kernel] = [word[0]!, word[1]!, word[3]!];
  if (kernel === COMPRESS_KERNEL.prefillCompress) {
    const fields =
      code === COMPRESS_ERR.seqLen
        ? (["seqLen"] as const)
        : code === COMPRESS_ERR.bufferLen
          ? (["bufferLen"] as const)
          : code === COMPRESS_ERR.ringRow
            ? RING_FIELDS
            : code === COMPRESS_ERR.raggedRow
              ? (["raggedId"] as const)
              : [];
    return firstViolation(row, c.numPlanC, fields, (i, f) => compressRowRule(c, i, f));
  }
  if (kernel === COMPRESS_KERNEL.prefillWrite) {
    const fields =
      code === COMPRESS_ERR.writeRagged
        ? (["raggedId"] as const)
        : code === COMPRESS_ERR.writeLoc
          ? (["writeLoc"] as const)
          : [];
    return firstViolation(row, c.numPlanW, fields, (i, f) => writeRowRule(c, i, f));
  }
  return null;
}

function decodeViolation(c: CheckedDecode, word: Int32Array): PlanViolation | null {
  const [code, row, kernel] = [word[0]!, word[1]!, word[3]!];
  if (kernel !== COMPRESS_KERNEL.decode) return null;
  const fields =
    code === COMPRESS_ERR.seqLen
      ? (["seqLen"] as const)
      : code === COMPRESS_ERR.writeLoc
        ? (["writeLoc"] as const)
        : code === COMPRESS_ERR.ringRow
          ? RING_FIELDS
          : [];
  return firstViolation(row, c.batch, fields, (i, f) => decodeRowRule(c, i, f));
}
