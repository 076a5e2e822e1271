/**
 * Ring sizes of the compress-state pools (docs/reference/pools-and-sizing.md §4). The write pad is @dsv4-kv/planner's
 * `writePad`, never restated.
 */
import { NON_SPECULATIVE_RING_SIZE, SPECULATIVE_RING_SIZE, writePad } from "@dsv4-kv/planner";
import { ONLINE_C128_RING_SIZE } from "./banks.js";
import { MemoryPoolError, optional, requireBoolean, requireInt, requireKnownKeys } from "./errors.js";

/**
 * Compress ratios with a compress-state ring. Ratio 2 exists only in DeepSeek-V4.1 (Gen C,
 * docs/reference/pools-and-sizing.md §4.1).
 */
export type StateRatio = 2 | 4 | 128;

export interface RingSizeOptions {
  /** Any speculative algorithm configured. */
  isSpeculative: boolean;
  /** Verify width; only ratio 2's speculative ring depends on it. */
  draftTokens?: number;
  /** `SGLANG_OPT_USE_ONLINE_COMPRESS` as effective on this platform (the caller forces it off on HIP). */
  onlineC128?: boolean;
  /** `SGLANG_EXPERIMENTAL_ONLINE_C128_MTP`. */
  onlineC128Mtp?: boolean;
}

/** Number of bits of a positive integer (Python's int.bit_length). */
function bitLength(value: number): number {
  return value <= 0 ? 0 : Math.floor(Math.log2(value)) + 1;
}

/**
 * `getCompressStateRingSize` (docs/reference/pools-and-sizing.md §4.1): c4 8/16, c128 128/256 (non-speculative /
 * speculative), online c128 1. Ratio 2: 2 without speculation; with it the smallest power of two >= 2 + draftTokens,
 * `1 << bitLength(D + 1)`. Throws ONLINE_C128_MTP (V-S9) for online c128 with speculation unless the experimental MTP
 * switch is on.
 */
export function compressStateRingSize(ratio: number, options: RingSizeOptions): number {
  requireRingSizeOptions(options);
  const { isSpeculative } = options;
  if (ratio === 128 && options.onlineC128) {
    if (isSpeculative && !options.onlineC128Mtp) {
      throw new MemoryPoolError(
        "ONLINE_C128_MTP",
        "onlineC128",
        true,
        "online c128 does not support MTP: online compress (SGLANG_OPT_USE_ONLINE_COMPRESS) with a speculative " +
          "algorithm requires SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1; turn online compress off or set the switch",
      );
    }
    return ONLINE_C128_RING_SIZE;
  }
  if (ratio === 4 || ratio === 128) {
    return isSpeculative ? SPECULATIVE_RING_SIZE[ratio] : NON_SPECULATIVE_RING_SIZE[ratio];
  }
  if (ratio === 2) {
    if (!isSpeculative) return 2;
    const draftTokens = options.draftTokens ?? 0;
    return 1 << bitLength(draftTokens + 1);
  }
  throw new MemoryPoolError(
    "INVALID_RATIO",
    "ratio",
    ratio,
    "compress-state rings exist for ratios 2, 4 and 128 only",
    {
      allowed: [2, 4, 128],
    },
  );
}

const RING_SIZE_OPTIONS = ["isSpeculative", "draftTokens", "onlineC128", "onlineC128Mtp"];

function requireRingSizeOptions(options: RingSizeOptions): void {
  requireKnownKeys("options", options, RING_SIZE_OPTIONS);
  requireBoolean("isSpeculative", options.isSpeculative);
  optional("draftTokens", options.draftTokens, (f, v) => requireInt(f, v, 0, 65535));
  optional("onlineC128", options.onlineC128, requireBoolean);
  optional("onlineC128Mtp", options.onlineC128Mtp, requireBoolean);
}

/**
 * Write pad of a ring, `getCompressStateWritePad` (docs/reference/pools-and-sizing.md §4.2), delegated to the planner.
 */
export function compressStateWritePad(ratio: number, ringSize: number): number {
  return writePad(ratio, ringSize);
}

/**
 * SWA ring of the unified-KV layout (docs/reference/pools-and-sizing.md §4.3):
 * `window + (speculative ? draftTokens - 1 : 0)`.
 */
export function swaRingSize(window: number, isSpeculative: boolean, draftTokens = 0): number {
  requireInt("window", window, 1);
  requireBoolean("isSpeculative", isSpeculative);
  if (!isSpeculative) return window;
  requireInt("draftTokens", draftTokens, 1);
  return window + draftTokens - 1;
}
