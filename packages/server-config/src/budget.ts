/**
 * The KV budget inputs of `checkServerConfig`, refused when they make no sense: a negative weights estimate used
 * to add memory (`--weights-gib -100` gave 29.3M tokens). Each refusal is a ServerConfigError naming the field
 * as `fieldName` renders it (the CLI renders flags: `--weights-gib`).
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import type { BudgetInput } from "./check.js";
import { ServerConfigError } from "./errors.js";

const KEYS = {
  bytes: ["kind", "kvBudgetBytes"],
  gpu: ["kind", "gpuMemoryGiB", "weightsGiB", "runtimeGiB", "assumption"],
} as const;

export function requireBudget(
  budget: BudgetInput,
  memFractionStatic: number | null,
  fieldName: (field: string) => string,
): void {
  const fail = (field: string, value: unknown, rule: string, params?: Record<string, unknown>) =>
    new ServerConfigError(
      typeof value === "number" || value === undefined ? "INVALID_ARGUMENT" : "INVALID_TYPE",
      fieldName(field),
      value,
      rule,
      params,
    );
  const kind = (budget as { kind?: unknown } | null)?.kind;
  if (kind !== "bytes" && kind !== "gpu")
    throw new ServerConfigError("INVALID_ARGUMENT", "budget.kind", kind, 'must be "bytes" or "gpu"');
  const known: readonly string[] = KEYS[budget.kind];
  for (const key of Object.keys(budget)) {
    if (known.includes(key)) continue;
    const suggestion = closestMatch(key, known);
    const params = suggestion === null ? { known } : { known, suggestion };
    throw new ServerConfigError("UNKNOWN_KEY", `budget.${key}`, key, `is not a ${budget.kind} budget field`, params);
  }
  const number = (field: string, value: unknown, min: number, minIncluded: boolean, what: string) => {
    const ok = typeof value === "number" && Number.isFinite(value) && (minIncluded ? value >= min : value > min);
    if (!ok) throw fail(field, value, `must be a finite number ${minIncluded ? ">=" : ">"} ${min} (${what})`, { min });
  };
  if (budget.kind === "bytes") {
    const v = budget.kvBudgetBytes;
    if (!(typeof v === "number" && Number.isSafeInteger(v) && v >= 0))
      throw fail("kvBudgetBytes", v, "must be a whole number of bytes >= 0", { min: 0 });
  } else {
    number("gpuMemoryGiB", budget.gpuMemoryGiB, 0, false, "free device memory before load, GiB");
    number("weightsGiB", budget.weightsGiB, 0, true, "weights this rank loads, GiB");
    if (budget.runtimeGiB !== undefined) number("runtimeGiB", budget.runtimeGiB, 0, true, "runtime overhead, GiB");
    if (budget.assumption !== undefined && typeof budget.assumption !== "string")
      throw fail("assumption", budget.assumption, "must be a string (why the weights are what they are)");
  }
  if (memFractionStatic !== null) {
    const v = memFractionStatic;
    if (!(typeof v === "number" && Number.isFinite(v) && v > 0 && v <= 1))
      throw fail("memFractionStatic", v, "must be in (0, 1] (the fraction of device memory SGLang reserves)", {
        min: 0,
        max: 1,
      });
  }
}
