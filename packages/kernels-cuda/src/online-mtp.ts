/**
 * Typed access to the online c128 MTP kernels of the addon (native/online_mtp). The controller package
 * (@dsv4-kv/online-mtp-controller) wraps these in its GPU backend and validates every call with the same rules as
 * its CPU backend first; the native side re-checks every size before a launch (a KernelsCudaError naming the field).
 */
import { loadNative, probe, type ProbeResult } from "./native.js";
import type { DeviceBuffer, GpuContext } from "./planner.js";

/** State element type as the kernels take it. */
export const ONLINE_MTP_STATE_TYPE = { fp32: 0, bf16: 1 } as const;

/**
 * Kernel shapes of `writePrefix` / `decode` (`variant`; all compute the same function within fp32 rounding):
 * `legacy` one thread per channel, one 512-thread block per request, expf and IEEE division (the first version);
 * `vec` 4 channels per thread with 16-byte accesses, `split` blocks per request, input rows loaded before the index
 * loads resolve, unnormalised accumulator with fast exp; `vecAccurate` the `vec` shape with the first version's
 * math; `scalar` one thread per channel in `split` blocks per request, every load issued before the first use, fast
 * math. writePrefix without `variant` picks `scalar`, or `vec` when the batch exceeds the SM count and D <= 4 (the
 * fastest on the H200 sweep). Decode takes `legacy` (default), `vec` (accurate math) or `scalar` (fast math).
 */
export const WRITE_PREFIX_VARIANT = { legacy: 0, vec: 1, vecAccurate: 2, scalar: 3 } as const;
/** Kernel shapes of `commitPending` (`variant`): loads before stores in registers (`regs`, default), 1 vector/thread (`wide`). */
export const COMMIT_VARIANT = { legacy: 0, regs: 1, wide: 2 } as const;

/**
 * Device error word codes (`err`, int32[4] = [code, index, value, kernel]). A request / slot index >= numReqSlots
 * is recorded (and its row skipped) when an `err` buffer is passed; without one it is skipped silently.
 */
export const ONLINE_MTP_ERR = {
  none: 0,
  segLen: 1,
  segLastRow: 2,
  segLoadRow: 3,
  segStoreRow: 4,
  reqIndex: 5,
  slotIndex: 6,
} as const;
/** Kernel ids in word 3 of the error word. */
export const ONLINE_MTP_KERNEL = { prefill: 0, writePrefix: 1, commitPending: 2, decode: 3, resetSlots: 4 } as const;

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
  /** Kernel variant (WRITE_PREFIX_VARIANT for writePrefix / decode, COMMIT_VARIANT for commit ops); default per op. */
  variant?: number;
  /** Blocks per request (not `legacy`): 1, 2, 4, 8, 16, or 0 / absent = 4 when batch <= SM count, else 1. */
  split?: number;
}

export interface OnlineMtpBenchResult {
  /** Median over `reps` of (elapsed / iters), microseconds per call. */
  usPerCall: number;
  minUs: number;
  maxUs: number;
  /** The variant and split that ran (-1: the op's default variant). */
  variant: number;
  split: number;
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
  /** Host → device copy ordered on ctx's stream (after the work queued before it); the view may be reused at once. */
  copyToDevice(ctx: GpuContext, buf: DeviceBuffer, view: ArrayBufferView, byteOffset?: number): void;
  /** Device → host copy ordered on ctx's stream; returns once the bytes are in `view`. */
  copyToHost<V extends ArrayBufferView>(ctx: GpuContext, buf: DeviceBuffer, view: V, byteOffset?: number): V;
  /** Sets every byte of `buf` to `byte`, ordered on ctx's stream. */
  fill(ctx: GpuContext, buf: DeviceBuffer, byte: number): DeviceBuffer;
  readonly headDim: number;
  readonly maxVerifyTokens: number;
}

/** Whether the online MTP kernels can run here (the addon's probe, plus the export check). Never throws. */
export function probeOnlineMtp(): ProbeResult {
  const p = probe();
  if (!p.ok) return p;
  try {
    if (!loadNative().onlineMtp)
      return { ...p, ok: false, reason: "the loaded addon has no onlineMtp bindings (rebuild it)" };
  } catch (e) {
    return { ...p, ok: false, reason: (e as Error).message };
  }
  return p;
}

/** The bindings; throws KernelsCudaUnavailableError without a usable GPU. */
export function onlineMtpNative(): OnlineMtpNative {
  return loadNative().onlineMtp as OnlineMtpNative;
}
