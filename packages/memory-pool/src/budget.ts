/** The KV budget from device memory (spec §6.1) and the V-M1 error. Units: GiB in, bytes out. */
import { GIB } from "./bytes.js";
import { MemoryPoolError, requireNumber } from "./errors.js";

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
  const exact = 1 - postFreeGiB / preFreeGiB;
  return { exact, roundedUp: Math.ceil(exact * 1000) / 1000 };
}

/** restGiB and availableBytes; throws V-M1 (code NO_MEMORY) when restGiB <= 0. */
export function kvBudgetFromGpu(input: GpuBudgetInput): GpuBudget {
  requireNumber("preFreeGiB", input.preFreeGiB, 0, true);
  requireNumber("postFreeGiB", input.postFreeGiB, Number.NEGATIVE_INFINITY);
  requireNumber("memFractionStatic", input.memFractionStatic, 0, true);
  if (input.memFractionStatic > 1)
    throw new MemoryPoolError("INVALID_ARGUMENT", "memFractionStatic", input.memFractionStatic, "must be in (0, 1]");
  const restGiB = input.postFreeGiB - input.preFreeGiB * (1 - input.memFractionStatic);
  const { exact, roundedUp } = minimumViableMemFraction(input.preFreeGiB, input.postFreeGiB);
  if (restGiB <= 0) {
    const raise =
      exact >= 1
        ? "The weights alone exceed the device memory: no --mem-fraction-static can fit them; shard the weights (more tensor/pipeline parallel ranks) or use a larger device."
        : `Raise --mem-fraction-static above ${roundedUp} (minimum viable = 1 − available/pre = 1 − ${fmt(input.postFreeGiB)}/${fmt(input.preFreeGiB)} = ${exact.toFixed(5)}).`;
    throw new MemoryPoolError(
      "NO_MEMORY",
      "memFractionStatic",
      input.memFractionStatic,
      `must leave KV memory: above ${roundedUp}`,
      `Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=${input.memFractionStatic} (rest = ${fmt(input.postFreeGiB)} − ${fmt(input.preFreeGiB)}·(1 − ${input.memFractionStatic}) = ${restGiB.toFixed(2)} GiB). ${raise} If using speculative decoding, draft weights are now counted.`,
    );
  }
  return { restGiB, availableBytes: Math.trunc(restGiB * GIB), minimumViableFraction: exact };
}

function fmt(gib: number): string {
  return `${Number(gib.toFixed(4))} GiB`;
}
