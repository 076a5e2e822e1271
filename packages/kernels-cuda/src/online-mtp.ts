/**
 * Typed access to the online c128 MTP kernels of the addon (native/online_mtp). The controller package
 * (@dsv4-kv/online-mtp-controller) wraps these in its GPU backend and validates every call with the same rules as
 * its CPU backend first; the native side re-checks every size before a launch (a KernelsCudaError naming the field).
 */
import type { OnlineMtpNative } from "./addon-types.js";
import { KernelsCudaUnavailableError } from "./errors.js";
import { loadNative, probe, type ProbeResult } from "./native.js";

export type {
  CommitPendingArgs,
  MarkPendingArgs,
  OnlineDecodeArgs,
  OnlineMtpNative,
  OnlinePrefillArgs,
  ResetSlotsArgs,
  WritePrefixArgs,
} from "./addon-types.js";

/** State element type as the kernels take it. */
export const ONLINE_MTP_STATE_TYPE = { fp32: 0, bf16: 1 } as const;

/**
 * Kernel shapes of `writePrefix` / `decode` (`variant`; all compute the same function within fp32 rounding). Only the
 * defaults are in a normal build: writePrefix `scalar` (one thread per channel, `split` blocks per request, D a
 * compile-time constant, fast math) and decode `scalar` (writePrefix's D = 1 shape, expf and IEEE division). A build
 * with the CMake option DSV4KV_BENCH_VARIANTS adds the benchmark-only shapes (docs/decisions.md D23): writePrefix
 * `legacy` (the first kernel), `vec` (4 channels per thread, 16-byte accesses) and `vecAccurate`; decode `legacy` (one
 * 512-thread block per request) and `vec`. Asking a normal build for one of those is refused (INVALID_ARGUMENT on
 * `variant`).
 */
export const WRITE_PREFIX_VARIANT = { legacy: 0, vec: 1, vecAccurate: 2, scalar: 3 } as const;
/**
 * Kernel shapes of `commitPending` (`variant`): `regs` (the default and the only one in a normal build: loads before
 * stores in registers); with DSV4KV_BENCH_VARIANTS also `legacy` and `wide` (1 vector per thread).
 */
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
  // A usable probe means loadNative() returns the addon; an older build (DSV4KV_ADDON_PATH) may lack the bindings.
  if (!loadNative().onlineMtp)
    return { ...p, ok: false, reason: "the loaded addon has no onlineMtp bindings (rebuild it)" };
  return p;
}

/** The bindings; throws KernelsCudaUnavailableError without a usable GPU or when the addon lacks them. */
export function onlineMtpNative(): OnlineMtpNative {
  const p = probeOnlineMtp();
  if (!p.ok) throw new KernelsCudaUnavailableError(p);
  return loadNative().onlineMtp;
}
