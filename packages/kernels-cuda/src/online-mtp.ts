/**
 * Typed access to the online c128 MTP kernels of the addon (native/online_mtp). The controller package
 * (@dsv4-kv/online-mtp-controller) wraps these in its GPU backend and validates every call with the same rules as
 * its CPU backend first; the native side re-checks every size before a launch (errors: code ERR_DSV4KV_ONLINE_MTP).
 */
import { loadNative, probe, type ProbeResult } from "./native.js";
import type { DeviceBuffer, GpuContext } from "./planner.js";

/** State element type as the kernels take it. */
export const ONLINE_MTP_STATE_TYPE = { fp32: 0, bf16: 1 } as const;

export interface OnlineMtpBenchArgs {
  op: "writePrefix" | "mark" | "markUpstream" | "commit" | "commitMark" | "decode" | "empty" | "copy";
  batch: number;
  numVerify: number;
  stateType: 0 | 1;
  /** 1: time a CUDA graph of `iters` calls replayed; 0: `iters` eager launches back to back. */
  graph: 0 | 1;
  /** Buffer sets cycled through call by call (1: the same buffers every call, L2-resident). */
  rotate: number;
  iters: number;
  reps: number;
  copyBytes?: number;
}

export interface OnlineMtpBenchResult {
  /** Median over `reps` of (elapsed / iters), microseconds per call. */
  usPerCall: number;
  minUs: number;
  maxUs: number;
}

/** The raw bindings (see native/online_mtp/binding.cpp for the argument objects). */
export interface OnlineMtpNative {
  writePrefix(ctx: GpuContext, args: Record<string, DeviceBuffer | number>): void;
  markPending(ctx: GpuContext, args: Record<string, DeviceBuffer | number>): void;
  commitPending(ctx: GpuContext, args: Record<string, DeviceBuffer | number | null>): void;
  resetSlots(ctx: GpuContext, args: Record<string, DeviceBuffer | number | null>): void;
  decode(ctx: GpuContext, args: Record<string, DeviceBuffer | number>): void;
  prefill(ctx: GpuContext, args: Record<string, DeviceBuffer | number>): void;
  bench(ctx: GpuContext, args: OnlineMtpBenchArgs): OnlineMtpBenchResult;
  readonly headDim: number;
  readonly maxVerifyTokens: number;
}

/** Whether the online MTP kernels can run here (the addon's probe, plus the export check). Never throws. */
export function probeOnlineMtp(): ProbeResult {
  const p = probe();
  if (!p.ok) return p;
  try {
    if (!loadNative().onlineMtp) return { ...p, ok: false, reason: "the loaded addon has no onlineMtp bindings (rebuild it)" };
  } catch (e) {
    return { ...p, ok: false, reason: (e as Error).message };
  }
  return p;
}

/** The bindings; throws KernelsCudaUnavailableError without a usable GPU. */
export function onlineMtpNative(): OnlineMtpNative {
  return loadNative().onlineMtp as OnlineMtpNative;
}
