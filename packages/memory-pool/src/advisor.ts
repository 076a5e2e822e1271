/**
 * Ring-sizing advisor (what upstream left open): for a target draft count D, the smallest ring per ratio that
 * serves D, and what it costs. A ring is valid when the planner accepts it (`validateRing`: a multiple of the
 * ratio that divides the SWA page size) and its write pad (planner `writePad`) is >= D.
 */
import { PlannerError, validateRing, writePad } from "@dsv4-kv/planner";
import {
  MemoryPoolCapacityErrors,
  MemoryPoolError,
  requireInt,
  requireKnownKeys,
  requireObject,
  requireOneOf,
} from "./errors.js";
import type { PoolId } from "./pools.js";
import { sizeKvCache, stageFacts, type SizingConfig, type SizingResult } from "./sizing.js";

export interface RingChoice {
  ratio: 4 | 128;
  draftTokens: number;
  /** Smallest valid ring with pad >= draftTokens, or null when none divides the SWA page size. */
  ringSize: number | null;
  writePad: number | null;
  /** The next smaller valid ring (which serves fewer than draftTokens), or null. */
  nextSmallerRingSize: number | null;
  /** Why no ring exists (null when one does). */
  reason: string | null;
}

/** Every ring the planner accepts for this ratio and SWA page size, ascending. */
export function validRingSizes(ratio: 4 | 128, swaPageSize: number): number[] {
  requireOneOf("ratio", ratio, [4, 128]);
  // The loop below walks every multiple of the ratio up to the page: bound it.
  requireInt("swaPageSize", swaPageSize, 1, 2 ** 20);
  const rings: number[] = [];
  for (let ring = ratio; ring <= swaPageSize; ring += ratio) {
    try {
      validateRing({ compressRatio: ratio, ringSize: ring, swaPageSize });
      rings.push(ring);
    } catch (error) {
      if (!PlannerError.isInstance(error)) throw error;
    }
  }
  return rings;
}

/** The smallest valid ring serving `draftTokens` (pure ring arithmetic, no sizing). */
export function smallestRingForDraftTokens(ratio: 4 | 128, draftTokens: number, swaPageSize: number): RingChoice {
  requireInt("draftTokens", draftTokens, 0);
  const rings = validRingSizes(ratio, swaPageSize);
  const index = rings.findIndex((ring) => writePad(ratio, ring) >= draftTokens);
  if (index < 0) {
    const largest = rings[rings.length - 1];
    return {
      ratio,
      draftTokens,
      ringSize: null,
      writePad: null,
      nextSmallerRingSize: largest ?? null,
      reason: `no c${ratio} ring that divides the SWA page size ${swaPageSize} serves ${draftTokens} draft tokens (the largest, ${largest}, serves ${largest === undefined ? 0 : writePad(ratio, largest)})`,
    };
  }
  const ring = rings[index]!;
  return {
    ratio,
    draftTokens,
    ringSize: ring,
    writePad: writePad(ratio, ring),
    nextSmallerRingSize: index > 0 ? rings[index - 1]! : null,
    reason: null,
  };
}

export interface RingAdvice extends RingChoice {
  currentRingSize: number;
  currentWritePad: number;
  /** Whether the current ring already serves draftTokens. */
  currentServes: boolean;
  /** Bytes of this ratio's state pools per worker with the current ring and with the advised one (same budget). */
  stateBytesCurrent: number | null;
  stateBytesAdvised: number | null;
  /** Capacity (tokens) at the budget with the current ring and with the advised one. */
  capacityTokensCurrent: number | null;
  capacityTokensAdvised: number | null;
}

export interface AdviseRingSizesOptions {
  /**
   * `sizeKvCache(config, availableBytes)` as the caller already computed it (null: it threw a sizing error), so the
   * current rings are not sized twice. It must be for this budget and this config's sizing mode.
   */
  baseSizing?: SizingResult | null;
}

/**
 * Advice per ratio with layers: the smallest serving ring and its cost at `availableBytes` (a what-if sizing with
 * the advised rings; other settings unchanged). Costs are null when the budget cannot be sized at all.
 */
export function adviseRingSizes(
  config: SizingConfig,
  availableBytes: number,
  draftTokens: number,
  options: AdviseRingSizesOptions = {},
): RingAdvice[] {
  requireInt("availableBytes", availableBytes, 0);
  requireInt("draftTokens", draftTokens, 0);
  requireKnownKeys("", options, ["baseSizing"]);
  const all = stageFacts(config);
  const stage = all[0]!;
  const advice: RingAdvice[] = [];
  const base =
    options.baseSizing === undefined
      ? trySize(config, availableBytes)
      : requireBaseSizing(options.baseSizing, config, availableBytes);
  for (const ratio of [4, 128] as const) {
    const layers = all.reduce((s, f) => s + (ratio === 4 ? f.layersC4 : f.layersC128), 0);
    if (layers === 0 || (ratio === 128 && config.onlineC128)) continue;
    const currentRingSize = ratio === 4 ? stage.ringSizeC4 : stage.ringSizeC128;
    const currentWritePad = writePad(ratio, currentRingSize);
    const choice = smallestRingForDraftTokens(ratio, draftTokens, config.pageSize);
    const advised =
      choice.ringSize == null
        ? null
        : trySize(
            { ...config, ringSizeOverrides: { ...config.ringSizeOverrides, [ratio]: choice.ringSize } },
            availableBytes,
          );
    advice.push({
      ...choice,
      currentRingSize,
      currentWritePad,
      currentServes: draftTokens <= currentWritePad,
      stateBytesCurrent: base ? stateBytes(base, ratio) : null,
      stateBytesAdvised: advised ? stateBytes(advised, ratio) : null,
      capacityTokensCurrent: base?.sizes.maxTotalNumTokens ?? null,
      capacityTokensAdvised: advised?.sizes.maxTotalNumTokens ?? null,
    });
  }
  return advice;
}

/** The caller's base sizing, refused when it was sized for another budget or mode. */
function requireBaseSizing(
  base: SizingResult | null,
  config: SizingConfig,
  availableBytes: number,
): SizingResult | null {
  if (base === null) return null;
  requireObject("baseSizing", base);
  const mode = config.mode ?? "exact";
  if (base.mode !== mode || base.availableBytes !== availableBytes) {
    throw new MemoryPoolError(
      "INVALID_ARGUMENT",
      "baseSizing",
      { mode: base.mode, availableBytes: base.availableBytes },
      `must be sizeKvCache(config, availableBytes) for this budget (${availableBytes} bytes) and mode (${mode})`,
      {
        mode: base.mode,
        expectedMode: mode,
        availableBytes: base.availableBytes,
        expectedAvailableBytes: availableBytes,
      },
    );
  }
  return base;
}

function trySize(config: SizingConfig, availableBytes: number): SizingResult | null {
  try {
    return sizeKvCache(config, availableBytes);
  } catch (error) {
    if (MemoryPoolError.isInstance(error) || MemoryPoolCapacityErrors.isInstance(error)) return null;
    throw error;
  }
}

const STATE_POOLS: Readonly<Record<4 | 128, readonly PoolId[]>> = {
  4: ["c4-attention-state", "c4-indexer-state"],
  128: ["c128-attention-state", "c128-online-state"],
};

function stateBytes(result: SizingResult, ratio: 4 | 128): number {
  const ids = STATE_POOLS[ratio];
  return result.stages[0]!.pools.filter((p) => ids.includes(p.id)).reduce((s, p) => s + p.totalBytes, 0);
}
