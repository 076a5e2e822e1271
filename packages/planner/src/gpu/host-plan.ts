/**
 * The compress planner on the GPU, host arrays in and out. Same options objects as the CPU planner, same tables,
 * same bytes, same PlannerError codes: inputs are validated with the planner's rules before anything is launched
 * (jobs.ts), and what only the device can see comes back through a status record (plan-status.ts).
 *
 * Rows come out in the host loop's order (batch-major, positions ascending) on both paths, so the bytes equal
 * `planPrefill(options)` exactly; the GPU kernel is deterministic (no shared-memory atomics).
 */
import { contextOf, type GpuCallOptions } from "@dsv4-kv/kernels-cuda";
import {
  type DecodePlanConfig,
  type DecodePlanInputs,
  decodePlanStatus,
  hostOut,
  loadNative,
  type NativeAddon,
  PLAN_STATUS_BYTES,
} from "@dsv4-kv/kernels-cuda/internal";
import {
  CompressPlanTable,
  type DecodePlanOptions,
  DecodePlanTable,
  type LegacyDecodePlanOptions,
  type LegacyPrefillPlanOptions,
  type PrefillPlan,
  type PrefillPlanOptions,
  WritePlanTable,
} from "../index.js";
import { devicePathOf, requireOptionKeys, validateLegacyDecode } from "../internal.js";
import {
  bigIntRids,
  decodeJob,
  decodeNativeJob,
  geometryOf,
  type NativeJob,
  nativeInputs,
  type PrefillJob,
  preparePrefill,
  slotInputs,
} from "./jobs.js";
import { plannerErrorOf } from "./plan-status.js";

/** Most requests one GPU prefill plan serves (upstream's single-block kernel: 1,024). */
export function maxGpuBatch(): number {
  return loadNative().maxGpuBatch;
}

function runPrefill(
  addon: NativeAddon,
  job: PrefillJob,
  opts: GpuCallOptions | undefined,
  legacy: boolean,
): PrefillPlan {
  const out = hostOut(job.cfg.numQ * 24 + PLAN_STATUS_BYTES);
  addon.planPrefill(contextOf(opts), job.cfg, nativeInputs(job.seqLens, job.extendLens, job.rids, job.slots), out);
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
    contextOf(opts),
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
  addon.planDecode(contextOf(opts), job.cfg, job.inputs, out);
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
  await addon.planDecodeAsync(contextOf(opts), job.cfg, job.inputs, out);
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
