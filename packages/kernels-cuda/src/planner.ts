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
  type SlotMaps,
} from "@dsv4-kv/planner";
import {
  devicePathOf,
  INT32_MAX,
  normalizePrefillOptions,
  reqToTokenInt32,
  requireInteger,
  requireOptionKeys,
  slotMapGeometry,
  validateDecodeInputs,
  validateLegacyDecode,
} from "@dsv4-kv/planner/internal";
import type {
  DecodePlanConfig,
  DecodePlanInputs,
  DeviceBuffer,
  Flag,
  GpuContext,
  PlanSlotConfig,
  PrefillPlanConfig,
  PrefillPlanInputs,
} from "./addon-types.js";
import { KernelsCudaError } from "./errors.js";
import { loadNative, type NativeAddon } from "./native.js";
import {
  decodePlanStatus,
  PLAN_STATUS_BYTES,
  plannerErrorOf,
  type PlanStatus,
  type StatusGeometry,
} from "./plan-status.js";
export type { DeviceBuffer, GpuContext } from "./addon-types.js";

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
  return new addon.Context(device);
}

/** Most requests one GPU prefill plan serves (upstream's single-block kernel: 1,024). */
export function maxGpuBatch(): number {
  return loadNative().maxGpuBatch;
}

// ---------------------------------------------------------------------------------------------------------------
// Validation (the planner package's rules, in its order, with its codes)

interface SlotInputs {
  reqStyle: boolean;
  r2t?: Int32Array;
  r2tStride: number;
  r2tRows: number;
  f2s?: Int32Array;
  f2sLen: number;
}

/** The planner's slot-map validation (slotMapGeometry), as the addon takes it: int32 tables, identity sizes. */
function slotInputs(cr: number, useReqRing: boolean, maps: SlotMaps): SlotInputs {
  const g = slotMapGeometry(cr, useReqRing, maps);
  const out: SlotInputs = {
    reqStyle: g.requestStyle,
    r2tStride: g.stride,
    r2tRows: g.rows,
    f2sLen: g.fullToStateLength,
  };
  if (g.reqToToken) out.r2t = reqToTokenInt32(g.reqToToken);
  if (g.fullToState) out.f2s = g.fullToState;
  return out;
}

/** Pool indices the planner's validation accepted, as the addon takes them (int64). */
function bigIntRids(rids: ArrayLike<number>): BigInt64Array {
  const out = new BigInt64Array(rids.length);
  for (let i = 0; i < rids.length; i++) out[i] = BigInt(rids[i]!);
  return out;
}

interface PrefillJob {
  cfg: PrefillPlanConfig;
  seqLens: Int32Array;
  extendLens: Int32Array;
  rids: BigInt64Array;
  slots: SlotInputs;
  path: PlannerPath;
  padded: boolean;
  pad: number;
}

/**
 * The planner package's prefill normalisation (docs/reference/planner.md §5.2 and §12.2, device-path checks), for the
 * GPU.
 */
function preparePrefill(o: PrefillPlanOptions, legacy: boolean, gpuLimit: number): PrefillJob {
  // The planner package's own normalisation decides every refusal (same code, field and order as planPrefill /
  // planPrefillLegacy), in O(batch): no host plan is built. The device-path batch limit is this kernel's (16,384),
  // not upstream's 1,024, unless the caller sets a smaller deviceBatchLimit.
  const userLimit = o.deviceBatchLimit;
  const n = normalizePrefillOptions(
    { ...o, deviceBatchLimit: userLimit === undefined ? gpuLimit : Math.min(userLimit, gpuLimit) },
    { legacy },
  );
  const cr = o.compressRatio;
  const useReqRing = o.useReqRing ?? false;
  const slots = legacy ? slotInputs(cr, true, {}) : slotInputs(cr, useReqRing, o);
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
  const rids = bigIntRids(n.rids);
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
// Host-array entry points

function ctxOf(opts: GpuCallOptions | undefined): GpuContext {
  return opts?.context ?? getDefaultContext();
}

function nativeInputs(
  seqLens: Int32Array,
  extendLens: Int32Array,
  rids: BigInt64Array,
  s: SlotInputs,
): PrefillPlanInputs;
function nativeInputs(seqLens: Int32Array, extendLens: undefined, rids: BigInt64Array, s: SlotInputs): DecodePlanInputs;
function nativeInputs(
  seqLens: Int32Array,
  extendLens: Int32Array | undefined,
  rids: BigInt64Array,
  s: SlotInputs,
): DecodePlanInputs | PrefillPlanInputs {
  const inputs: DecodePlanInputs & { extendLens?: Int32Array } = { seqLens, rids };
  if (extendLens) inputs.extendLens = extendLens;
  if (s.r2t) inputs.r2t = s.r2t;
  if (s.f2s) inputs.f2s = s.f2s;
  return inputs;
}

/**
 * The host buffer a native plan call fills. The addon copies the whole device region into it (plan rows and all 256
 * status records; it refuses any other size), so it is not zeroed (docs/decisions.md, "unzeroed plan output"). A
 * plain Uint8Array over a non-pooled allocation, so callers see no Buffer.
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
  const out = hostOut(job.cfg.numQ * 24 + PLAN_STATUS_BYTES);
  addon.planPrefill(ctxOf(opts), job.cfg, nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots), out);
  return finishPrefill(job, out, legacy);
}

async function runPrefillAsync(
  addon: NativeAddon,
  job: PrefillJob,
  opts: GpuCallOptions | undefined,
  legacy: boolean,
): Promise<PrefillPlan> {
  const out = hostOut(job.cfg.numQ * 24 + PLAN_STATUS_BYTES);
  await addon.planPrefillAsync(
    ctxOf(opts),
    job.cfg,
    nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots),
    out,
  );
  return finishPrefill(job, out, legacy);
}

function finishPrefill(job: PrefillJob, out: Uint8Array, legacy: boolean): PrefillPlan {
  const numQ = job.cfg.numQ;
  const st = decodePlanStatus(out.subarray(numQ * 24));
  if (st.code !== 0) throw plannerErrorOf(st, geometryOf(job.cfg));
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
  requireOptionKeys(options, "prefill");
  return runPrefill(addon, preparePrefill(options, false, addon.maxGpuBatch), opts, false);
}

/**
 * `planPrefillGpu` without blocking the event loop: the same validation (synchronous, O(batch)), then the upload,
 * the kernel, the download and the stream wait run on a libuv worker thread. Resolves to the same PrefillPlan
 * (same bytes); rejects with the same PlannerError, with KernelsCudaUnavailableError when the probe is not ok, or
 * with a KernelsCudaError (code NATIVE) for a CUDA failure. Worth it for large batches (thousands of rows): for a
 * small plan the thread-pool round trip costs more than the blocking call.
 */
export async function planPrefillGpuAsync(options: PrefillPlanOptions, opts?: GpuCallOptions): Promise<PrefillPlan> {
  const addon = loadNative();
  requireOptionKeys(options, "prefill");
  return runPrefillAsync(addon, preparePrefill(options, false, addon.maxGpuBatch), opts, false);
}

/** `planPrefillLegacy` on the GPU. */
export function planPrefillLegacyGpu(options: LegacyPrefillPlanOptions, opts?: GpuCallOptions): PrefillPlan {
  const addon = loadNative();
  requireOptionKeys(options, "prefill-legacy");
  const cr = options.compressRatio;
  const ring = cr === 4 ? 8 : 128;
  const job = preparePrefill({ ...options, ringSize: ring, swaPageSize: ring, path: "host" }, true, addon.maxGpuBatch);
  return runPrefill(addon, job, opts, true);
}

function decodeInputs(seqLensIn: IntegerArray, ridsIn: IntegerArray | undefined) {
  const { seqLens, rids } = validateDecodeInputs(seqLensIn, ridsIn);
  return { seqLens, rids: bigIntRids(rids) };
}

/** A validated native plan call: the addon's configuration and inputs. */
interface NativeJob<Cfg, Inputs> {
  cfg: Cfg;
  inputs: Inputs;
}

function decodeJob(
  cr: number,
  ring: { ringSize: number; swaPageSize: number; legacy: boolean },
  seqLens: Int32Array,
  rids: BigInt64Array,
  s: SlotInputs,
): NativeJob<DecodePlanConfig, DecodePlanInputs> {
  const cfg: DecodePlanConfig = {
    batch: seqLens.length,
    cr,
    ring: ring.ringSize,
    sps: ring.swaPageSize,
    reqStyle: s.reqStyle ? 1 : 0,
    legacy: ring.legacy ? 1 : 0,
    r2tStride: s.r2tStride,
    r2tRows: s.r2tRows,
    f2sLen: s.f2sLen,
  };
  return { cfg, inputs: nativeInputs(seqLens, undefined, rids, s) };
}

/** The native decode call of `planDecode` options (the planner's validation, in its order). */
export function decodeNativeJob(options: DecodePlanOptions): NativeJob<DecodePlanConfig, DecodePlanInputs> {
  requireOptionKeys(options, "decode");
  validateRing(options);
  const cr = options.compressRatio;
  const { seqLens, rids } = decodeInputs(options.seqLens, options.reqPoolIndices);
  const s = slotInputs(cr, options.useReqRing ?? false, options);
  return decodeJob(
    cr,
    { ringSize: options.ringSize, swaPageSize: options.swaPageSize, legacy: false },
    seqLens,
    rids,
    s,
  );
}

/** The facts a status rule names that its record does not carry. */
function geometryOf(cfg: PlanSlotConfig): StatusGeometry {
  return { ringSize: cfg.ring, fullToStateLength: cfg.f2sLen, legacy: cfg.legacy === 1 };
}

function finishDecode(cfg: DecodePlanConfig, out: Uint8Array): DecodePlanTable {
  const batch = cfg.batch;
  const st = decodePlanStatus(out.subarray(batch * 16));
  if (st.code !== 0) throw plannerErrorOf(st, geometryOf(cfg));
  return new DecodePlanTable(out.subarray(0, batch * 16));
}

function runDecode(
  addon: NativeAddon,
  job: NativeJob<DecodePlanConfig, DecodePlanInputs>,
  opts: GpuCallOptions | undefined,
): DecodePlanTable {
  const out = hostOut(job.cfg.batch * 16 + PLAN_STATUS_BYTES);
  addon.planDecode(ctxOf(opts), job.cfg, job.inputs, out);
  return finishDecode(job.cfg, out);
}

/** `planDecode` on the GPU. */
export function planDecodeGpu(options: DecodePlanOptions, opts?: GpuCallOptions): DecodePlanTable {
  const addon = loadNative();
  return runDecode(addon, decodeNativeJob(options), opts);
}

/** `planDecodeGpu` without blocking the event loop (see planPrefillGpuAsync). */
export async function planDecodeGpuAsync(options: DecodePlanOptions, opts?: GpuCallOptions): Promise<DecodePlanTable> {
  const addon = loadNative();
  const job = decodeNativeJob(options);
  const out = hostOut(job.cfg.batch * 16 + PLAN_STATUS_BYTES);
  await addon.planDecodeAsync(ctxOf(opts), job.cfg, job.inputs, out);
  return finishDecode(job.cfg, out);
}

/** `planDecodeLegacy` on the GPU. */
export function planDecodeLegacyGpu(options: LegacyDecodePlanOptions, opts?: GpuCallOptions): DecodePlanTable {
  const addon = loadNative();
  const { cr, seqLens, rids } = validateLegacyDecode(options);
  const ring = cr === 4 ? 8 : 128;
  const job = decodeJob(
    cr,
    { ringSize: ring, swaPageSize: ring, legacy: true },
    seqLens,
    bigIntRids(rids),
    slotInputs(cr, true, {}),
  );
  return runDecode(addon, job, opts);
}

// ---------------------------------------------------------------------------------------------------------------
// Device-resident inputs (the CUDA-graph case): nothing is copied and nothing waits.

export function createDeviceBuffer(byteLength: number, context?: GpuContext): DeviceBuffer {
  const addon = loadNative();
  return new addon.DeviceBuffer(byteLength, context);
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

function lens64Of(dtype: unknown): Flag {
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
): PlanSlotConfig & { _r2t?: DeviceBuffer; _f2s?: DeviceBuffer } {
  validateRing(cfg);
  const reqStyle = cfg.compressRatio === 128 || (cfg.useReqRing ?? false);
  const out: PlanSlotConfig & { _r2t?: DeviceBuffer; _f2s?: DeviceBuffer } = {
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
  const batch = requireInteger("batch", config.batch, 1, addon.maxGpuBatch);
  const numQ = requireInteger("numQTokens", config.numQTokens, batch, MAX_NUM_Q_TOKENS);
  const pad =
    config.writePadOverride === undefined
      ? derivedWritePad(config.compressRatio, config.ringSize)
      : requireInteger("writePadOverride", config.writePadOverride, 0, INT32_MAX);
  const { _r2t, _f2s, ...slot } = s;
  const cfg: PrefillPlanConfig = {
    ...slot,
    batch,
    numQ,
    pad,
    tail: config.compressRatio === 4 && !config.useReqRing ? 1 : 0,
    hostRules: 0,
    lens64: lens64Of(config.lensDtype),
  };
  statusGeometry.set(bufs.status, geometryOf(cfg));
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
  const cfg: DecodePlanConfig = { ...slot, batch, lens64: lens64Of(config.lensDtype) };
  statusGeometry.set(bufs.status, geometryOf(cfg));
  addon.planDecodeDevice(ctxOf(opts), cfg, {
    seqLens: bufs.seqLens,
    rids: bufs.reqPoolIndices,
    r2t: _r2t,
    f2s: _f2s,
    planD: bufs.planD,
    status: bufs.status,
  });
}

/** The geometry of the last plan enqueued on each status buffer, for the rules readPlanStatus reports. */
const statusGeometry = new WeakMap<DeviceBuffer, StatusGeometry>();

/** Reads a PlanStatus buffer (synchronous copy); throws the PlannerError when the kernel refused its input. */
export function readPlanStatus(status: DeviceBuffer): PlanStatus {
  const buffer = status as Partial<DeviceBuffer> | null;
  if (typeof buffer !== "object" || buffer === null || typeof buffer.download !== "function")
    throw new KernelsCudaError("INVALID_TYPE", "status", status, "must be the DeviceBuffer passed as a plan's status");
  if (buffer.freed) throw new KernelsCudaError("DEVICE_BUFFER", "status", "freed", "was freed (DeviceBuffer.free())");
  if (typeof buffer.byteLength !== "number" || buffer.byteLength < PLAN_STATUS_BYTES)
    throw new KernelsCudaError(
      "DEVICE_BUFFER",
      "status.byteLength",
      buffer.byteLength,
      `must be at least PLAN_STATUS_BYTES = ${PLAN_STATUS_BYTES}`,
    );
  const bytes = new Uint8Array(PLAN_STATUS_BYTES);
  status.download(bytes);
  const st = decodePlanStatus(bytes);
  const geometry = statusGeometry.get(status) ?? { ringSize: 1, fullToStateLength: 0, legacy: false };
  if (st.code !== 0) throw plannerErrorOf(st, geometry);
  return st;
}

/** The validated native call of `planPrefill` options (the bench times the kernel on it). */
export function prefillNativeJob(options: PrefillPlanOptions): NativeJob<PrefillPlanConfig, PrefillPlanInputs> {
  const addon = loadNative();
  requireOptionKeys(options, "prefill");
  const job = preparePrefill(options, false, addon.maxGpuBatch);
  return { cfg: job.cfg, inputs: nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots) };
}
