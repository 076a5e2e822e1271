/**
 * The native call of a plan: the planner's own validation (same codes, fields and order as the CPU planner, in
 * O(batch), no host plan built), turned into the configuration and inputs the addon's planner binding takes.
 */
import type {
  DecodePlanConfig,
  DecodePlanInputs,
  PlanSlotConfig,
  PrefillPlanConfig,
  PrefillPlanInputs,
} from "@dsv4-kv/kernels-cuda/internal";
import { loadNative } from "@dsv4-kv/kernels-cuda/internal";
import {
  type DecodePlanOptions,
  type IntegerArray,
  PlannerError,
  type PlannerPath,
  type PrefillPlanOptions,
  type SlotMaps,
  validateRing,
} from "../index.js";
import {
  normalizePrefillOptions,
  reqToTokenInt32,
  requireOptionKeys,
  slotMapGeometry,
  validateDecodeInputs,
} from "../internal.js";
import type { StatusGeometry } from "./plan-status.js";

export interface SlotInputs {
  reqStyle: boolean;
  r2t?: Int32Array;
  r2tStride: number;
  r2tRows: number;
  f2s?: Int32Array;
  f2sLen: number;
}

/** The planner's slot-map validation (slotMapGeometry), as the addon takes it: int32 tables, identity sizes. */
export function slotInputs(cr: number, useReqRing: boolean, maps: SlotMaps): SlotInputs {
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
export function bigIntRids(rids: ArrayLike<number>): BigInt64Array {
  const out = new BigInt64Array(rids.length);
  for (let i = 0; i < rids.length; i++) out[i] = BigInt(rids[i]!);
  return out;
}

export interface PrefillJob {
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
export function preparePrefill(o: PrefillPlanOptions, legacy: boolean, gpuLimit: number): PrefillJob {
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

export function nativeInputs(
  seqLens: Int32Array,
  extendLens: Int32Array,
  rids: BigInt64Array,
  s: SlotInputs,
): PrefillPlanInputs;
export function nativeInputs(
  seqLens: Int32Array,
  extendLens: undefined,
  rids: BigInt64Array,
  s: SlotInputs,
): DecodePlanInputs;
export function nativeInputs(
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

/** Decode inputs the planner's validation accepted, as the addon takes them. */
function decodeInputs(seqLensIn: IntegerArray, ridsIn: IntegerArray | undefined) {
  const { seqLens, rids } = validateDecodeInputs(seqLensIn, ridsIn);
  return { seqLens, rids: bigIntRids(rids) };
}

/** A validated native plan call: the addon's configuration and inputs. */
export interface NativeJob<Cfg, Inputs> {
  cfg: Cfg;
  inputs: Inputs;
}

export function decodeJob(
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
export function geometryOf(cfg: PlanSlotConfig): StatusGeometry {
  return { ringSize: cfg.ring, fullToStateLength: cfg.f2sLen, legacy: cfg.legacy === 1 };
}
/** The validated native call of `planPrefill` options (the bench times the kernel on it). */
export function prefillNativeJob(options: PrefillPlanOptions): NativeJob<PrefillPlanConfig, PrefillPlanInputs> {
  const addon = loadNative();
  requireOptionKeys(options, "prefill");
  const job = preparePrefill(options, false, addon.maxGpuBatch);
  return { cfg: job.cfg, inputs: nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots) };
}
