/**
 * The KV budget from device memory (docs/reference/pools-and-sizing.md §7.1) and the V-M1 error. Units: GiB in, bytes
 * out.
 */
import { GIB } from "./bytes.js";
import { MemoryPoolError, requireKnownKeys, requireNumber } from "./errors.js";

export interface GpuBudgetInput {
  /** Free device memory before model load (GiB). */
  preFreeGiB: number;
  /** Free device memory after weights and runtime are loaded (GiB). */
  postFreeGiB: number;
  /** --mem-fraction-static, in (0, 1]. */
  memFractionStatic: number;
}

export interface GpuBudget {
  /** postFree − preFree·(1 − memFractionStatic), GiB. */
  restGiB: number;
  /** int(restGiB · 2^30). */
  availableBytes: number;
  /** 1 − postFree/preFree: the smallest fraction that leaves any KV memory. */
  minimumViableFraction: number;
}

/** `1 − postFree/preFree` and its 3-decimal ceiling, as the V-M1 message prints them. */
export function minimumViableMemFraction(
  preFreeGiB: number,
  postFreeGiB: number,
): { exact: number; roundedUp: number } {
  requireFreeMemory(preFreeGiB, postFreeGiB);
  const exact = 1 - postFreeGiB / preFreeGiB;
  return { exact, roundedUp: Math.ceil(exact * 1000) / 1000 };
}

/** restGiB and availableBytes; throws V-M1 (code NO_MEMORY, every number in `params`) when restGiB <= 0. */
export function kvBudgetFromGpu(input: GpuBudgetInput): GpuBudget {
  requireKnownKeys("", input, ["preFreeGiB", "postFreeGiB", "memFractionStatic"]);
  const { preFreeGiB, postFreeGiB, memFractionStatic } = input;
  requireNumber("memFractionStatic", memFractionStatic, 0, true, 1);
  const { exact, roundedUp } = minimumViableMemFraction(preFreeGiB, postFreeGiB);
  const restGiB = postFreeGiB - preFreeGiB * (1 - memFractionStatic);
  if (restGiB <= 0) {
    const params = {
      memFractionStatic,
      preFreeGiB,
      postFreeGiB,
      restGiB,
      minimumViableFraction: exact,
      minimumViableFractionRoundedUp: roundedUp,
      weightsExceedDevice: exact >= 1,
    };
    const raise =
      exact >= 1
        ? "no fraction can fit the weights alone: shard them (more tensor/pipeline parallel ranks) or use a larger " +
          "device"
        : `raise it above ${roundedUp} (minimum viable 1 − postFree/preFree = ${exact.toFixed(5)})`;
    const rest = `rest = postFree − preFree·(1 − fraction) = ${restGiB.toFixed(2)} GiB`;
    const rule = `must leave GPU memory for the KV cache: ${rest}; ${raise}`;
    throw new MemoryPoolError("NO_MEMORY", "memFractionStatic", memFractionStatic, rule, params);
  }
  return { restGiB, availableBytes: Math.trunc(restGiB * GIB), minimumViableFraction: exact };
}

/** Free memory before load must be positive; after load it is at most that (loading never frees memory). */
function requireFreeMemory(preFreeGiB: number, postFreeGiB: number): void {
  requireNumber("preFreeGiB", preFreeGiB, 0, true);
  requireNumber("postFreeGiB", postFreeGiB, Number.NEGATIVE_INFINITY, false, preFreeGiB);
}
