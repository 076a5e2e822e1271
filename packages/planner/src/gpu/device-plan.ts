/**
 * The GPU planner on device-resident inputs (the CUDA-graph case): nothing is copied and nothing waits. The kernel
 * validates the per-request values and writes a PlanStatus that `readPlanStatus` turns into the PlannerError.
 */
import { contextOf, type DeviceBuffer, type GpuCallOptions, KernelsCudaError } from "@dsv4-kv/kernels-cuda";
import {
  type DecodePlanConfig,
  decodePlanStatus,
  type Flag,
  loadNative,
  PLAN_STATUS_BYTES,
  type PlanSlotConfig,
  type PlanStatus,
  type PrefillPlanConfig,
} from "@dsv4-kv/kernels-cuda/internal";
import {
  DEFAULT_IDENTITY_TOKENS_PER_REQ,
  MAX_NUM_Q_TOKENS,
  PlannerError,
  validateRing,
  writePad as derivedWritePad,
} from "../index.js";
import { INT32_MAX, requireInteger } from "../internal.js";
import { geometryOf } from "./jobs.js";
import { plannerErrorOf, type StatusGeometry } from "./plan-status.js";

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
  addon.planPrefillDevice(contextOf(opts), cfg, {
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
  addon.planDecodeDevice(contextOf(opts), cfg, {
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
