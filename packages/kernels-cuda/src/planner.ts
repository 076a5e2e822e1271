/**
 * The compress planner on the GPU. Same options objects as @dsv4-kv/planner, same tables, same bytes, same
 * PlannerError codes: inputs are validated here with the planner package's rules before anything is launched,
 * and what only the device can see (table lookups, device-resident inputs) comes back through a status record.
 *
 * Rows come out in the host loop's order (batch-major, positions ascending) on both paths, so the bytes equal
 * `planPrefill(options)` exactly; the GPU kernel is deterministic (no shared-memory atomics).
 */
import {
  CompressPlanTable,
  DecodePlanTable,
  DEFAULT_IDENTITY_TOKENS_PER_REQ,
  MAX_NUM_Q_TOKENS,
  PlannerError,
  normalizePrefillOptions,
  SlotResolver,
  UPSTREAM_DEVICE_BATCH_LIMIT,
  validateRing,
  WritePlanTable,
  writePad as derivedWritePad,
  type DecodePlanOptions,
  type IntegerArray,
  type LegacyDecodePlanOptions,
  type LegacyPrefillPlanOptions,
  type PlannerPath,
  type PrefillPlan,
  type PrefillPlanOptions,
  type ReqToToken,
  type FullToState,
  devicePathOf,
} from "@dsv4-kv/planner";
import { loadNative, type NativeAddon } from "./native.js";

const INT32_MAX = 0x7fffffff;
/**
 * Status region after the tables: 256 records of 48 bytes (code, index, value, aux, numCompress, numWrite, grid),
 * one per launched block for prefill and one per warp for decode, each rewritten by every launch; record 0's
 * `grid` says how many to read. See native/planner/plan_kernels.cuh. Device-resident calls need a status buffer of
 * this size; it never needs zeroing.
 */
export const PLAN_STATUS_RECORD_BYTES = 48;
export const PLAN_STATUS_BYTES = 256 * PLAN_STATUS_RECORD_BYTES;

/** A device + stream. Plans on one context are serialised on its stream. */
export interface GpuContext {
  readonly device: number;
  synchronize(): void;
  destroy(): void;
}

export interface GpuCallOptions {
  /** Context (device + stream) to run on; default: a shared context on device 0. */
  context?: GpuContext;
}

let defaultContext: GpuContext | undefined;

/** The shared context on device 0 (created on first use). */
export function getDefaultContext(): GpuContext {
  if (!defaultContext) defaultContext = createContext(0);
  return defaultContext;
}

/** A new context (device + non-blocking stream). */
export function createContext(device = 0): GpuContext {
  const addon = loadNative();
  return new addon.Context(device) as GpuContext;
}

/** Most requests one GPU prefill plan serves (upstream's single-block kernel: 1,024). */
export function maxGpuBatch(): number {
  return loadNative().maxGpuBatch as number;
}

// ---------------------------------------------------------------------------------------------------------------
// Validation (the planner package's rules, in its order, with its codes)

function toIntArray(field: string, values: IntegerArray, min: number, max: number): Int32Array | Float64Array {
  const n = values.length;
  const out = max <= INT32_MAX && min >= -INT32_MAX - 1 ? new Int32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const raw = values[i] as number | bigint | undefined;
    const v = typeof raw === "bigint" ? Number(raw) : raw;
    if (typeof v !== "number" || !Number.isInteger(v))
      throw new PlannerError("INVALID_ARGUMENT", `${field}[${i}]`, raw, "must be an integer");
    if (v < min || v > max) {
      throw new PlannerError(
        v > INT32_MAX ? "INT32_OVERFLOW" : "INVALID_ARGUMENT",
        `${field}[${i}]`,
        raw,
        `must be in [${min}, ${max}]`,
      );
    }
    out[i] = v;
  }
  return out;
}

function requireInteger(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value))
    throw new PlannerError("INVALID_ARGUMENT", field, value, "must be an integer");
  if (value < min || value > max)
    throw new PlannerError("INVALID_ARGUMENT", field, value, `must be in [${min}, ${max}]`);
  return value;
}

interface SlotInputs {
  reqStyle: boolean;
  r2t?: Int32Array;
  r2tStride: number;
  r2tRows: number;
  f2s?: Int32Array;
  f2sLen: number;
}

/** The SlotResolver constructor's checks; tables are converted only when the addressing reads them. */
function slotInputs(
  cr: number,
  useReqRing: boolean,
  maps: { reqToToken?: ReqToToken; fullToState?: FullToState },
): SlotInputs {
  const reqStyle = cr === 128 || useReqRing;
  const r2t = maps.reqToToken ?? { identity: { tokensPerReq: DEFAULT_IDENTITY_TOKENS_PER_REQ } };
  let out: SlotInputs;
  if ("identity" in r2t) {
    const t = r2t.identity.tokensPerReq;
    if (!Number.isInteger(t) || t < 1)
      throw new PlannerError("INVALID_ARGUMENT", "reqToToken.identity.tokensPerReq", t, "must be a positive integer");
    out = { reqStyle, r2tStride: t, r2tRows: Math.floor(INT32_MAX / t), f2sLen: 0 };
  } else {
    if (!Number.isInteger(r2t.stride) || r2t.stride < 1)
      throw new PlannerError("INVALID_ARGUMENT", "reqToToken.stride", r2t.stride, "must be a positive integer");
    if (r2t.data.length % r2t.stride !== 0) {
      throw new PlannerError(
        "INVALID_ARGUMENT",
        "reqToToken.data.length",
        r2t.data.length,
        `must be a multiple of reqToToken.stride ${r2t.stride}`,
      );
    }
    out = { reqStyle, r2tStride: r2t.stride, r2tRows: r2t.data.length / r2t.stride, f2sLen: 0 };
    if (!reqStyle) out.r2t = r2t.data instanceof Int32Array ? r2t.data : Int32Array.from(r2t.data);
  }
  const f2s = maps.fullToState ?? "identity";
  if (!reqStyle && f2s !== "identity") {
    out.f2s = toIntArray("fullToState", f2s, 0, INT32_MAX) as Int32Array;
    out.f2sLen = out.f2s.length;
  }
  if (reqStyle) {
    // Request-style addressing reads no table: describe the identity so the addon uploads nothing.
    out.r2tRows = Math.floor(INT32_MAX / out.r2tStride);
    delete out.r2t;
  }
  return out;
}

function ridsOf(field: string, values: IntegerArray | undefined, batch: number): BigInt64Array {
  const rids = new BigInt64Array(batch);
  if (values === undefined) {
    for (let i = 0; i < batch; i++) rids[i] = BigInt(i);
    return rids;
  }
  const r = toIntArray(field, values, 0, Number.MAX_SAFE_INTEGER);
  if (r.length !== batch)
    throw new PlannerError("INVALID_ARGUMENT", `${field}.length`, r.length, `must equal seqLens.length ${batch}`);
  for (let i = 0; i < batch; i++) rids[i] = BigInt(r[i]!);
  return rids;
}

interface PrefillJob {
  cfg: Record<string, number>;
  seqLens: Int32Array;
  extendLens: Int32Array;
  rids: BigInt64Array;
  slots: SlotInputs;
  path: PlannerPath;
  padded: boolean;
  pad: number;
}

/** The planner package's prefill normalisation (§5.2 + §16 device-path checks), for the GPU. */
function preparePrefill(o: PrefillPlanOptions, legacy: boolean, gpuLimit: number): PrefillJob {
  // The planner package's own normalisation decides every refusal (same code, field and order as planPrefill /
  // planPrefillLegacy), in O(batch): no host plan is built. The device-path batch limit is this kernel's (16,384),
  // not upstream's 1,024, unless the caller sets a smaller deviceBatchLimit.
  const userLimit = o.deviceBatchLimit;
  const n = normalizePrefillOptions(
    { ...o, deviceBatchLimit: userLimit === undefined ? gpuLimit : Math.min(userLimit, gpuLimit) },
    { legacy },
  );
  if (!legacy) new SlotResolver(o.compressRatio, o.ringSize, o.swaPageSize, o.useReqRing ?? false, o);
  const { seqLens, extendLens, batch, numQ, path, pad } = n;
  // The host path has no device batch limit in the CPU planner, but this kernel's per-block scan does.
  if (batch > gpuLimit)
    throw new PlannerError(
      "BATCH_SIZE",
      "seqLens.length",
      batch,
      `the device planner serves at most ${gpuLimit} requests per call`,
    );
  const hostRules = path === "host" || legacy;
  const cr = o.compressRatio;
  const useReqRing = o.useReqRing ?? false;
  const slots = legacy ? slotInputs(cr, true, {}) : slotInputs(cr, useReqRing, o);
  const rids = new BigInt64Array(batch);
  for (let b = 0; b < batch; b++) rids[b] = BigInt(n.rids[b]!);
  const ring = legacy ? (cr === 4 ? 8 : 128) : o.ringSize;
  return {
    cfg: {
      batch,
      numQ,
      pad: legacy ? 0 : pad,
      tail: !legacy && cr === 4 && !useReqRing ? 1 : 0,
      hostRules: hostRules ? 1 : 0,
      cr,
      ring,
      sps: legacy ? ring : o.swaPageSize,
      reqStyle: slots.reqStyle ? 1 : 0,
      legacy: legacy ? 1 : 0,
      r2tStride: slots.r2tStride,
      r2tRows: slots.r2tRows,
      f2sLen: slots.f2sLen,
    },
    seqLens,
    extendLens,
    rids,
    slots,
    path,
    padded: path === "device" || n.useCudaGraph,
    pad,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Status record -> PlannerError (codes of native/planner/plan_kernels.cuh, PlanErr)

export interface PlanStatus {
  code: number;
  index: number;
  value: number;
  aux: number;
  numCompress: number;
  numWrite: number;
}

export function decodePlanStatus(bytes: Uint8Array): PlanStatus {
  const v = new DataView(bytes.buffer, bytes.byteOffset, PLAN_STATUS_BYTES);
  const R = PLAN_STATUS_RECORD_BYTES;
  const grid = Math.min(256, Math.max(1, v.getInt32(32, true)));
  let at = 0;
  for (let b = 0; b < grid; b++) {
    if (v.getInt32(b * R, true) !== 0) {
      at = b * R;
      break;
    }
  }
  return {
    code: v.getInt32(at, true),
    index: v.getInt32(at + 4, true),
    value: Number(v.getBigInt64(at + 8, true)),
    aux: Number(v.getBigInt64(at + 16, true)),
    numCompress: v.getInt32(24, true),
    numWrite: v.getInt32(28, true),
  };
}

/** The PlannerError a non-zero status stands for (the same code the CPU planner raises for that input). */
export function plannerErrorOf(st: PlanStatus): PlannerError {
  const { index: i, value: v, aux } = st;
  switch (st.code) {
    case 1:
      return new PlannerError("INVALID_ARGUMENT", `seqLens[${i}]`, v, `must be in [0, ${INT32_MAX}]`);
    case 2:
      return new PlannerError("EXTEND_LEN", `extendLens[${i}]`, v, "must be >= 0");
    case 3:
      return new PlannerError(
        "EXTEND_LEN",
        `extendLens[${i}]`,
        v,
        `must be <= seqLens[${i}] = ${aux} (the prefix S - E cannot be negative)`,
      );
    case 4:
      return new PlannerError(
        "EXTEND_SUM",
        "numQTokens",
        aux,
        `the sum of extendLens (${v}) must not exceed numQTokens (must equal it on the host path)`,
      );
    case 5:
      return new PlannerError("INVALID_ARGUMENT", `reqPoolIndices[${i}]`, v, "must be >= 0");
    case 6:
      return new PlannerError("INDEX_OUT_OF_RANGE", "reqPoolIndices", v, `must be < ${aux} (rows of reqToToken)`);
    case 7:
      return new PlannerError(
        "INDEX_OUT_OF_RANGE",
        `reqToToken[${i}]`,
        v,
        `position must be < ${aux} (tokens per request row)`,
      );
    case 8:
      return new PlannerError(
        "INDEX_OUT_OF_RANGE",
        `fullToState[reqToToken[${i}][${aux}]]`,
        v,
        "full-pool location must be inside fullToState",
      );
    case 9:
      return new PlannerError("INDEX_OUT_OF_RANGE", `SWA location of request ${i} position ${aux}`, v, "must be >= 0");
    case 10:
      return new PlannerError(
        "INT32_OVERFLOW",
        "reqPoolIndices",
        v,
        "the state slot rid*ringSize + p%ringSize does not fit int32",
      );
    case 11:
      return new PlannerError("INVALID_ARGUMENT", `seqLens[${i}]`, v, `must be in [1, ${INT32_MAX}]`);
    case 12:
      return new PlannerError(
        "EXTEND_LEN",
        `extendLens[${i}]`,
        v,
        "must be > 0 (every request in a prefill batch extends by at least one token)",
      );
    case 13:
      return new PlannerError(
        "INT32_OVERFLOW",
        `${aux === 1 ? "extendLens" : "seqLens"}[${i}]`,
        v,
        `must be in [${-INT32_MAX - 1}, ${INT32_MAX}] (int64 device lengths are narrowed to int32)`,
      );
    default:
      return new PlannerError("INVALID_ARGUMENT", "status", st.code, "unknown GPU planner status code");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Host-array entry points

function ctxOf(opts: GpuCallOptions | undefined): GpuContext {
  return opts?.context ?? getDefaultContext();
}

function nativeInputs(
  seqLens: Int32Array,
  extendLens: Int32Array | undefined,
  rids: BigInt64Array,
  s: SlotInputs,
): Record<string, unknown> {
  const inputs: Record<string, unknown> = { seqLens, rids };
  if (extendLens) inputs.extendLens = extendLens;
  if (s.r2t) inputs.r2t = s.r2t;
  if (s.f2s) inputs.f2s = s.f2s;
  return inputs;
}

/**
 * The host buffer a native plan call fills. The addon copies the whole device region into it (plan rows and all 256
 * status records; it refuses any other size), so it need not be zeroed: zeroing it cost the calling thread ~0.15 ms
 * at 60,000 tokens (1.45 MB). A plain Uint8Array over a non-pooled allocation, so callers see no Buffer.
 */
function hostOut(bytes: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(bytes);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function runPrefill(
  addon: NativeAddon,
  job: PrefillJob,
  opts: GpuCallOptions | undefined,
  legacy: boolean,
): PrefillPlan {
  const out = hostOut(job.cfg.numQ! * 24 + PLAN_STATUS_BYTES);
  addon.planPrefill(ctxOf(opts), job.cfg, nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots), out);
  return finishPrefill(job, out, legacy);
}

async function runPrefillAsync(
  addon: NativeAddon,
  job: PrefillJob,
  opts: GpuCallOptions | undefined,
  legacy: boolean,
): Promise<PrefillPlan> {
  const out = hostOut(job.cfg.numQ! * 24 + PLAN_STATUS_BYTES);
  await addon.planPrefillAsync(
    ctxOf(opts),
    job.cfg,
    nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots),
    out,
  );
  return finishPrefill(job, out, legacy);
}

function finishPrefill(job: PrefillJob, out: Uint8Array, legacy: boolean): PrefillPlan {
  const numQ = job.cfg.numQ!;
  const st = decodePlanStatus(out.subarray(numQ * 24));
  if (st.code !== 0) throw plannerErrorOf(st);
  const nc = st.numCompress;
  const nw = st.numWrite;
  const planC = new CompressPlanTable(out.subarray(0, (job.padded ? numQ : nc) * 16));
  const planW = new WritePlanTable(out.subarray(numQ * 16, numQ * 16 + (job.padded ? numQ : nw) * 8));
  const plan: PrefillPlan = {
    planC,
    planW,
    numCompress: nc,
    numWrite: nw,
    writePad: legacy ? 0 : job.pad,
    path: legacy ? "host" : job.path,
  };
  if (!legacy && job.path === "device") plan.devicePath = devicePathOf(job.extendLens);
  return plan;
}

/** `planPrefill` on the GPU: same options, same PrefillPlan, same bytes, same PlannerError codes. */
export function planPrefillGpu(options: PrefillPlanOptions, opts?: GpuCallOptions): PrefillPlan {
  const addon = loadNative();
  return runPrefill(addon, preparePrefill(options, false, addon.maxGpuBatch as number), opts, false);
}

/**
 * `planPrefillGpu` without blocking the event loop: the same validation (synchronous, O(batch)), then the upload,
 * the kernel, the download and the stream wait run on a libuv worker thread. Resolves to the same PrefillPlan
 * (same bytes); rejects with the same PlannerError, with KernelsCudaUnavailableError when the probe is not ok, or
 * with an ERR_DSV4KV_CUDA error. Worth it for large batches (thousands of rows): for a small plan the thread-pool
 * round trip costs more than the blocking call.
 */
export async function planPrefillGpuAsync(options: PrefillPlanOptions, opts?: GpuCallOptions): Promise<PrefillPlan> {
  const addon = loadNative();
  return runPrefillAsync(addon, preparePrefill(options, false, addon.maxGpuBatch as number), opts, false);
}

/** `planPrefillLegacy` on the GPU. */
export function planPrefillLegacyGpu(options: LegacyPrefillPlanOptions, opts?: GpuCallOptions): PrefillPlan {
  const addon = loadNative();
  const cr = options.compressRatio;
  const ring = cr === 4 ? 8 : 128;
  const job = preparePrefill(
    { ...options, ringSize: ring, swaPageSize: ring, path: "host" },
    true,
    addon.maxGpuBatch as number,
  );
  return runPrefill(addon, job, opts, true);
}

function decodeInputs(
  seqLensIn: IntegerArray,
  ridsIn: IntegerArray | undefined,
): { seqLens: Int32Array; rids: BigInt64Array; ridsNum: Int32Array | Float64Array | undefined } {
  const seqLens = toIntArray("seqLens", seqLensIn, 1, INT32_MAX) as Int32Array;
  if (seqLens.length === 0)
    throw new PlannerError("BATCH_SIZE", "seqLens.length", 0, "a decode plan needs at least one request");
  const ridsNum = ridsIn === undefined ? undefined : toIntArray("reqPoolIndices", ridsIn, 0, Number.MAX_SAFE_INTEGER);
  if (ridsNum && ridsNum.length !== seqLens.length) {
    throw new PlannerError(
      "INVALID_ARGUMENT",
      "reqPoolIndices.length",
      ridsNum.length,
      `must equal seqLens.length ${seqLens.length}`,
    );
  }
  return { seqLens, rids: ridsOf("reqPoolIndices", ridsNum, seqLens.length), ridsNum };
}

function runDecode(
  addon: NativeAddon,
  cfg: Record<string, number>,
  seqLens: Int32Array,
  rids: BigInt64Array,
  s: SlotInputs,
  opts: GpuCallOptions | undefined,
): DecodePlanTable {
  const out = hostOut(seqLens.length * 16 + PLAN_STATUS_BYTES);
  addon.planDecode(ctxOf(opts), cfg, nativeInputs(seqLens, undefined, rids, s), out);
  return finishDecode(seqLens.length, out);
}

function finishDecode(batch: number, out: Uint8Array): DecodePlanTable {
  const st = decodePlanStatus(out.subarray(batch * 16));
  if (st.code !== 0) throw plannerErrorOf(st);
  return new DecodePlanTable(out.subarray(0, batch * 16));
}

/** `planDecode` on the GPU. */
export function planDecodeGpu(options: DecodePlanOptions, opts?: GpuCallOptions): DecodePlanTable {
  const addon = loadNative();
  validateRing(options);
  const cr = options.compressRatio;
  const { seqLens, rids } = decodeInputs(options.seqLens, options.reqPoolIndices);
  const s = slotInputs(cr, options.useReqRing ?? false, options);
  const cfg = {
    batch: seqLens.length,
    cr,
    ring: options.ringSize,
    sps: options.swaPageSize,
    reqStyle: s.reqStyle ? 1 : 0,
    legacy: 0,
    r2tStride: s.r2tStride,
    r2tRows: s.r2tRows,
    f2sLen: s.f2sLen,
  };
  return runDecode(addon, cfg, seqLens, rids, s, opts);
}

/** `planDecodeGpu` without blocking the event loop (see planPrefillGpuAsync). */
export async function planDecodeGpuAsync(options: DecodePlanOptions, opts?: GpuCallOptions): Promise<DecodePlanTable> {
  const addon = loadNative();
  const { cfg, inputs } = decodeNativeJob(options);
  const batch = cfg.batch!;
  const out = hostOut(batch * 16 + PLAN_STATUS_BYTES);
  await addon.planDecodeAsync(ctxOf(opts), cfg, inputs, out);
  return finishDecode(batch, out);
}

/** `planDecodeLegacy` on the GPU. */
export function planDecodeLegacyGpu(options: LegacyDecodePlanOptions, opts?: GpuCallOptions): DecodePlanTable {
  const addon = loadNative();
  const cr = options.compressRatio;
  if (cr !== 4 && cr !== 128) throw new PlannerError("INVALID_RATIO", "compressRatio", cr, "must be 4 or 128");
  const { seqLens, rids, ridsNum } = decodeInputs(options.seqLens, options.reqPoolIndices);
  if (ridsNum) {
    for (let i = 0; i < ridsNum.length; i++) {
      if (ridsNum[i]! * 128 + 127 > INT32_MAX) {
        throw new PlannerError(
          "INT32_OVERFLOW",
          `reqPoolIndices[${i}]`,
          ridsNum[i],
          "legacy slot rid*ringSize + p%ringSize does not fit int32",
        );
      }
    }
  }
  const ring = cr === 4 ? 8 : 128;
  const s = slotInputs(cr, true, {});
  const cfg = {
    batch: seqLens.length,
    cr,
    ring,
    sps: ring,
    reqStyle: 1,
    legacy: 1,
    r2tStride: s.r2tStride,
    r2tRows: s.r2tRows,
    f2sLen: 0,
  };
  return runDecode(addon, cfg, seqLens, rids, s, opts);
}

// ---------------------------------------------------------------------------------------------------------------
// Device-resident inputs (the CUDA-graph case): nothing is copied and nothing waits.

/** Device memory (see README): `new DeviceBuffer(bytes, ctx?)`, `.upload(view)`, `.download(view)`, `.free()`. */
export interface DeviceBuffer {
  readonly byteLength: number;
  readonly freed: boolean;
  upload(view: ArrayBufferView, byteOffset?: number): DeviceBuffer;
  download<T extends ArrayBufferView>(view: T, byteOffset?: number): T;
  fill(byte: number): DeviceBuffer;
  free(): void;
}

export function createDeviceBuffer(byteLength: number, context?: GpuContext): DeviceBuffer {
  const addon = loadNative();
  return new addon.DeviceBuffer(byteLength, context) as DeviceBuffer;
}

/** Geometry of a device-resident prefill plan: the planner options without the per-request arrays. */
export interface DevicePrefillConfig {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  useReqRing?: boolean;
  batch: number;
  numQTokens: number;
  /** Identity req_to_token row length when `reqToToken` is not given; default 2048. */
  tokensPerReq?: number;
  writePadOverride?: number;
  /**
   * Element type of `seqLens` / `extendLens`: "int32" (default) or "int64" (upstream's tensors, used as they are).
   * The kernel checks that every int64 value fits int32 and reports INT32_OVERFLOW through the status otherwise.
   */
  lensDtype?: "int32" | "int64";
}

function lens64Of(dtype: unknown): number {
  if (dtype === undefined || dtype === "int32") return 0;
  if (dtype === "int64") return 1;
  throw new PlannerError("INVALID_ARGUMENT", "lensDtype", dtype, 'must be "int32" or "int64"');
}

export interface DevicePrefillBuffers {
  /** int32 [batch] (int64 with lensDtype "int64") */
  seqLens: DeviceBuffer;
  /** int32 [batch] (int64 with lensDtype "int64") */
  extendLens: DeviceBuffer;
  /** int64 [batch]; default 0..batch-1 */
  reqPoolIndices?: DeviceBuffer;
  /** int32 [rows * stride] (paged c4 only) */
  reqToToken?: { buffer: DeviceBuffer; stride: number };
  /** int32 [n] (paged c4 only) */
  fullToState?: DeviceBuffer;
  /** numQTokens * 16 bytes */
  planC: DeviceBuffer;
  /** numQTokens * 8 bytes */
  planW: DeviceBuffer;
  /** PLAN_STATUS_BYTES: per-block status records (error flag + counts); read with readPlanStatus after the stream */
  status: DeviceBuffer;
}

function deviceSlotCfg(
  cfg: { compressRatio: number; ringSize: number; swaPageSize: number; useReqRing?: boolean; tokensPerReq?: number },
  bufs: { reqToToken?: { buffer: DeviceBuffer; stride: number }; fullToState?: DeviceBuffer },
): Record<string, number> & { _r2t?: DeviceBuffer; _f2s?: DeviceBuffer } {
  validateRing(cfg);
  const reqStyle = cfg.compressRatio === 128 || (cfg.useReqRing ?? false);
  const out: Record<string, number> & { _r2t?: DeviceBuffer; _f2s?: DeviceBuffer } = {
    cr: cfg.compressRatio,
    ring: cfg.ringSize,
    sps: cfg.swaPageSize,
    reqStyle: reqStyle ? 1 : 0,
    legacy: 0,
    f2sLen: 0,
    r2tStride: 0,
    r2tRows: 0,
  };
  if (bufs.reqToToken && !reqStyle) {
    const stride = requireInteger("reqToToken.stride", bufs.reqToToken.stride, 1, INT32_MAX);
    const n = bufs.reqToToken.buffer.byteLength / 4;
    if (!Number.isInteger(n) || n % stride !== 0)
      throw new PlannerError(
        "INVALID_ARGUMENT",
        "reqToToken.buffer.byteLength",
        bufs.reqToToken.buffer.byteLength,
        `must hold a whole number of int32 rows of ${stride}`,
      );
    out.r2tStride = stride;
    out.r2tRows = n / stride;
    out._r2t = bufs.reqToToken.buffer;
  } else {
    const t = requireInteger("tokensPerReq", cfg.tokensPerReq ?? DEFAULT_IDENTITY_TOKENS_PER_REQ, 1, INT32_MAX);
    out.r2tStride = t;
    out.r2tRows = Math.floor(INT32_MAX / t);
  }
  if (bufs.fullToState && !reqStyle) {
    out.f2sLen = Math.floor(bufs.fullToState.byteLength / 4);
    out._f2s = bufs.fullToState;
  }
  return out;
}

/**
 * Enqueues a prefill plan on `context`'s stream from device-resident inputs (graph-capturable: no host sync, no
 * allocation). The kernel validates the per-request values and writes a PlanStatus; read it with
 * `readPlanStatus(bufs.status)` (which throws the PlannerError) once the stream is done. Path: the device contract
 * (numQTokens rows each, E == 0 allowed, sum(E) <= numQTokens).
 */
export function enqueuePrefillPlan(
  config: DevicePrefillConfig,
  bufs: DevicePrefillBuffers,
  opts?: GpuCallOptions,
): void {
  const addon = loadNative();
  const s = deviceSlotCfg(config, bufs);
  const batch = requireInteger("batch", config.batch, 1, addon.maxGpuBatch as number);
  const numQ = requireInteger("numQTokens", config.numQTokens, batch, MAX_NUM_Q_TOKENS);
  const pad =
    config.writePadOverride === undefined
      ? derivedWritePad(config.compressRatio, config.ringSize)
      : requireInteger("writePadOverride", config.writePadOverride, 0, INT32_MAX);
  const { _r2t, _f2s, ...slot } = s;
  const cfg = {
    ...slot,
    batch,
    numQ,
    pad,
    tail: config.compressRatio === 4 && !config.useReqRing ? 1 : 0,
    hostRules: 0,
    lens64: lens64Of(config.lensDtype),
  };
  addon.planPrefillDevice(ctxOf(opts), cfg, {
    seqLens: bufs.seqLens,
    extendLens: bufs.extendLens,
    rids: bufs.reqPoolIndices,
    r2t: _r2t,
    f2s: _f2s,
    planC: bufs.planC,
    planW: bufs.planW,
    status: bufs.status,
  });
}

export interface DeviceDecodeBuffers {
  /** int32 [batch] (int64 with lensDtype "int64") */
  seqLens: DeviceBuffer;
  reqPoolIndices?: DeviceBuffer;
  reqToToken?: { buffer: DeviceBuffer; stride: number };
  fullToState?: DeviceBuffer;
  /** batch * 16 bytes */
  planD: DeviceBuffer;
  status: DeviceBuffer;
}

/** Enqueues a decode plan from device-resident inputs (graph-capturable). */
export function enqueueDecodePlan(
  config: Omit<DevicePrefillConfig, "numQTokens" | "writePadOverride">,
  bufs: DeviceDecodeBuffers,
  opts?: GpuCallOptions,
): void {
  const addon = loadNative();
  const s = deviceSlotCfg(config, bufs);
  const batch = requireInteger("batch", config.batch, 1, 1 << 24);
  const { _r2t, _f2s, ...slot } = s;
  addon.planDecodeDevice(
    ctxOf(opts),
    { ...slot, batch, lens64: lens64Of(config.lensDtype) },
    { seqLens: bufs.seqLens, rids: bufs.reqPoolIndices, r2t: _r2t, f2s: _f2s, planD: bufs.planD, status: bufs.status },
  );
}

/** Reads a PlanStatus buffer (synchronous copy); throws the PlannerError when the kernel refused its input. */
export function readPlanStatus(status: DeviceBuffer): PlanStatus {
  const bytes = new Uint8Array(PLAN_STATUS_BYTES);
  status.download(bytes);
  const st = decodePlanStatus(bytes);
  if (st.code !== 0) throw plannerErrorOf(st);
  return st;
}

/** Exposed for the bench script: the validated native configuration of a prefill call. */
export function prefillNativeJob(options: PrefillPlanOptions): {
  cfg: Record<string, number>;
  inputs: Record<string, unknown>;
} {
  const addon = loadNative();
  const job = preparePrefill(options, false, addon.maxGpuBatch as number);
  return { cfg: job.cfg, inputs: nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots) };
}

export function decodeNativeJob(options: DecodePlanOptions): {
  cfg: Record<string, number>;
  inputs: Record<string, unknown>;
} {
  validateRing(options);
  const { seqLens, rids } = decodeInputs(options.seqLens, options.reqPoolIndices);
  const s = slotInputs(options.compressRatio, options.useReqRing ?? false, options);
  const cfg = {
    batch: seqLens.length,
    cr: options.compressRatio,
    ring: options.ringSize,
    sps: options.swaPageSize,
    reqStyle: s.reqStyle ? 1 : 0,
    legacy: 0,
    r2tStride: s.r2tStride,
    r2tRows: s.r2tRows,
    f2sLen: s.f2sLen,
  };
  return { cfg, inputs: nativeInputs(seqLens, undefined, rids, s) };
}

export { UPSTREAM_DEVICE_BATCH_LIMIT };
