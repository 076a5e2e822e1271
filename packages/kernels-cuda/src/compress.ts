/**
 * Typed access to the ring compress kernels of the addon (native/compress): prefill compress + write over the
 * planner's CompressPlan / WritePlan rows and decode over DecodePlan rows (docs/reference/planner.md §8). The compress
 * package (@dsv4-kv/compress, `./gpu`) wraps these in its GPU backend and validates every batch with the same host
 * validator as its CPU backend first; the native side re-checks every size before a launch (a KernelsCudaError naming
 * the field) and the kernels re-check every plan row, recording a bad one in the error word.
 */
import type { CompressNative } from "./addon-types.js";
import { KernelsCudaUnavailableError } from "./errors.js";
import { loadNative, probe, type ProbeResult } from "./native.js";

export type {
  CompressDecodeArgs,
  CompressNative,
  CompressPrefillArgs,
} from "./addon-types.js";

/** State element type as the kernels take it (`stateType`). */
export const COMPRESS_STATE_TYPE = { fp32: 0, bf16: 1 } as const;

/**
 * Codes of the device error word (`err`, int32[4] = [code, plan row, value, kernel]; the first error wins), mirrors of
 * `ErrCode` in native/compress/compress_kernels.cuh (test/compress-enums.test.ts holds them equal). `value` is the
 * offending field's value: seqLen, bufferLen, raggedId, the page (readPage0 / readPage1), writeLoc.
 */
export const COMPRESS_ERR = {
  /** No error. */
  none: 0,
  /** CompressPlan seqLen 0 or not a multiple of cr; DecodePlan seqLen 0. */
  seqLen: 1,
  /** CompressPlan bufferLen > window. */
  bufferLen: 2,
  /** A ragged input row the compression reads is outside [0, inputRows). */
  raggedRow: 3,
  /** A state row the compression reads is outside [0, stateRows). */
  ringRow: 4,
  /** WritePlan / DecodePlan writeLoc outside [0, stateRows). */
  writeLoc: 5,
  /** WritePlan raggedId outside [0, inputRows). */
  writeRagged: 6,
} as const;

/** Kernel ids in word 3 of the error word (`KernelId`). */
export const COMPRESS_KERNEL = { prefillCompress: 0, prefillWrite: 1, decode: 2 } as const;

/** Whether the compress kernels can run here (the addon's probe, plus the export check). Never throws. */
export function probeCompress(): ProbeResult {
  const p = probe();
  if (!p.ok) return p;
  // A usable probe means loadNative() returns the addon; an older build (DSV4KV_ADDON_PATH) may lack the bindings.
  if (!loadNative().compress)
    return { ...p, ok: false, reason: "the loaded addon has no compress bindings (rebuild it)" };
  return p;
}

/** The bindings; throws KernelsCudaUnavailableError without a usable GPU or when the addon lacks them. */
export function compressNative(): CompressNative {
  const p = probeCompress();
  if (!p.ok) throw new KernelsCudaUnavailableError(p);
  return loadNative().compress;
}
