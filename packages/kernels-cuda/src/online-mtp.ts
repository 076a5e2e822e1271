/**
 * Typed access to the online c128 MTP kernels of the addon (native/online_mtp). The controller package
 * (@dsv4-kv/online-mtp-controller) wraps these in its GPU backend and validates every call with the same rules as
 * its CPU backend first; the native side re-checks every size before a launch (a KernelsCudaError naming the field).
 */
import type { OnlineMtpNative } from "./addon-types.js";
import { loadNative, probe, type ProbeResult } from "./native.js";

export type {
  CommitPendingArgs,
  MarkPendingArgs,
  OnlineDecodeArgs,
  OnlineMtpBenchArgs,
  OnlineMtpBenchResult,
  OnlineMtpNative,
  OnlinePrefillArgs,
  ResetSlotsArgs,
  WritePrefixArgs,
} from "./addon-types.js";

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
  return loadNative().onlineMtp;
}
