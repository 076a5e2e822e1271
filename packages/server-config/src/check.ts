/**
 * The whole pre-start check: resolve the arguments, size the pools for a budget, run the planner's residency
 * checker on the resolved rings, and advise a ring when the draft count exceeds one. Every error and warning is
 * collected into one report (what `dsv4-kv check` prints).
 */
import {
  GIB,
  MemoryPoolCapacityErrors,
  MemoryPoolError,
  adviseRingSizes,
  kvBudgetFromGpu,
  sizeKvCache,
  smallestRingForDraftTokens,
  type RingAdvice,
  type SizingMode,
  type SizingResult,
} from "@dsv4-kv/memory-pool";
import { PlannerError, runResidencyScenario } from "@dsv4-kv/planner";
import type { ModelPreset } from "./presets.js";
import { resolveServerConfig, type ConfigIssue, type ConfigNote, type DerivedValues } from "./resolve.js";
import type { ServerArgs } from "./schema.js";

/** The KV budget per worker: given in bytes, or from device memory (§6.1). */
export type BudgetInput =
  | { kind: "bytes"; kvBudgetBytes: number }
  | {
      kind: "gpu";
      /** Device memory free before load (GiB). */
      gpuMemoryGiB: number;
      /** Weights this rank loads (GiB). */
      weightsGiB: number;
      /** CUDA context, activations, graphs (GiB) taken before the KV budget; default 0. */
      runtimeGiB?: number;
      /** Why the weights are what they are (stated in the report). */
      assumption?: string;
    };

export interface BudgetReport {
  kind: "bytes" | "gpu";
  memFractionStatic: number | null;
  preFreeGiB: number | null;
  postFreeGiB: number | null;
  restGiB: number | null;
  availableBytes: number | null;
  minimumViableMemFraction: number | null;
  assumption: string | null;
}

export interface ResidencyCheck {
  ratio: 4 | 128;
  ringSize: number;
  swaPageSize: number;
  draftTokens: number;
  adaptive: boolean;
  steps: number;
  verifies: number;
  violations: number;
  firstViolation: string | null;
  skipped: string | null;
}

export interface CheckOptions {
  sizing?: SizingMode;
  /** Batches per residency run (default 300). */
  residencySteps?: number;
  residencySeed?: number;
}

export interface CheckReport {
  ok: boolean;
  model: { name: string; layers: DerivedValues["layers"]; compressRatios: number[] };
  args: ServerArgs;
  derived: DerivedValues;
  notes: ConfigNote[];
  budget: BudgetReport;
  sizingMode: SizingMode;
  sizing: SizingResult | null;
  residency: ResidencyCheck[];
  advice: RingAdvice[];
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
}

export const DEFAULT_MEM_FRACTION_STATIC = 0.85;

export function checkServerConfig(
  args: ServerArgs,
  model: ModelPreset,
  budgetInput: BudgetInput,
  options: CheckOptions = {},
): CheckReport {
  const resolved = resolveServerConfig(args, model);
  const { derived, notes } = resolved;
  const issues: ConfigIssue[] = [...resolved.issues];
  const sizingMode = options.sizing ?? "exact";

  // Budget (§6.1, V-M1).
  const memFractionStatic = args.memFractionStatic ?? DEFAULT_MEM_FRACTION_STATIC;
  const budget: BudgetReport = {
    kind: budgetInput.kind,
    memFractionStatic: null,
    preFreeGiB: null,
    postFreeGiB: null,
    restGiB: null,
    availableBytes: null,
    minimumViableMemFraction: null,
    assumption: null,
  };
  if (budgetInput.kind === "bytes") {
    budget.availableBytes = budgetInput.kvBudgetBytes;
    budget.assumption = "KV budget given directly (--kv-budget-bytes)";
  } else {
    if (args.memFractionStatic == null)
      notes.push({
        field: "memFractionStatic",
        kind: "defaulted",
        from: null,
        to: memFractionStatic,
        reason: "check's default when no KV budget is given",
      });
    const preFreeGiB = budgetInput.gpuMemoryGiB;
    const postFreeGiB = budgetInput.gpuMemoryGiB - budgetInput.weightsGiB - (budgetInput.runtimeGiB ?? 0);
    Object.assign(budget, {
      memFractionStatic,
      preFreeGiB,
      postFreeGiB,
      minimumViableMemFraction: 1 - postFreeGiB / preFreeGiB,
      assumption: budgetInput.assumption ?? null,
    });
    try {
      const b = kvBudgetFromGpu({ preFreeGiB, postFreeGiB, memFractionStatic });
      budget.restGiB = b.restGiB;
      budget.availableBytes = b.availableBytes;
    } catch (e) {
      if (!(e instanceof MemoryPoolError)) throw e;
      budget.restGiB = postFreeGiB - preFreeGiB * (1 - memFractionStatic);
      issues.push({ rule: "V-M1", severity: "error", field: e.field, value: e.value, message: e.message });
    }
  }

  // Sizing (§6.6; V-P*, V-M2, V-K1, V-W1).
  let sizing: SizingResult | null = null;
  if (budget.availableBytes != null) {
    try {
      sizing = sizeKvCache({ ...resolved.sizing, mode: sizingMode }, budget.availableBytes);
      for (const w of sizing.warnings)
        issues.push({ rule: "V-W1", severity: "warning", field: "maxRunningRequests", value: null, message: w });
      if (sizing.unusedBytes < 0) {
        issues.push({
          rule: "V-W1",
          severity: "warning",
          field: "sizing",
          value: sizing.unusedBytes,
          message: `the pools allocate ${fmtBytes(-sizing.unusedBytes)} more than the KV budget (upstream's estimate misses page padding and the draft pool); it comes out of the (1 − mem_fraction_static) slack. Use --sizing exact to size what is allocated.`,
        });
      }
    } catch (e) {
      const errors = e instanceof MemoryPoolCapacityErrors ? e.errors : e instanceof MemoryPoolError ? [e] : null;
      if (!errors) throw e;
      for (const err of errors)
        issues.push({
          rule: ruleOf(err),
          severity: "error",
          field: err.field,
          value: err.value,
          message: withFraction(err, memFractionStatic, budgetInput.kind),
        });
    }
  }

  // Advisor for V-S8 (the ring that would serve the requested count, and its cost).
  let advice: RingAdvice[] = [];
  const exceeds = issues.filter((i) => i.rule === "V-S8");
  if (exceeds.length > 0) {
    const D = derived.maxSpeculativeNumDraftTokens;
    advice =
      budget.availableBytes != null
        ? adviseRingSizes({ ...resolved.sizing, mode: sizingMode }, budget.availableBytes, D)
        : (["c4", "c128"] as const)
            .filter((k) => derived.ringSizes[k] != null && !(k === "c128" && derived.onlineC128))
            .map((k) => {
              const ratio = k === "c4" ? 4 : 128;
              const choice = smallestRingForDraftTokens(ratio, D, derived.effectivePageSize);
              const current = derived.ringSizes[k]!;
              return {
                ...choice,
                currentRingSize: current,
                currentWritePad: derived.writePads[k]!,
                currentServes: D <= derived.writePads[k]!,
                stateBytesCurrent: null,
                stateBytesAdvised: null,
                capacityTokensCurrent: null,
                capacityTokensAdvised: null,
              };
            });
    for (const issue of exceeds) {
      const a = advice.find((x) => issue.message.includes(`c${x.ratio} compress`));
      if (!a) continue;
      if (a.ringSize == null) issue.message += `. Advisor: ${a.reason}`;
      else {
        const cost =
          a.stateBytesAdvised != null &&
          a.stateBytesCurrent != null &&
          a.capacityTokensAdvised != null &&
          a.capacityTokensCurrent != null
            ? `: c${a.ratio} state ${fmtBytes(a.stateBytesCurrent)} → ${fmtBytes(a.stateBytesAdvised)}, capacity ${a.capacityTokensCurrent.toLocaleString("en-US")} → ${a.capacityTokensAdvised.toLocaleString("en-US")} tokens`
            : "";
        issue.message += `. Advisor: a c${a.ratio} ring of ${a.ringSize} (write pad ${a.writePad}) would serve ${a.draftTokens} draft tokens${cost} (upstream has no ring-size option)`;
      }
    }
  }

  const residency = runResidency(derived, options);
  for (const r of residency) {
    if (r.violations > 0) {
      issues.push({
        rule: "R1",
        severity: "error",
        field: "speculativeNumDraftTokens",
        value: r.draftTokens,
        message: `residency check: c${r.ratio} ring ${r.ringSize} with ${r.draftTokens} draft tokens loses committed positions (${r.violations} violations in ${r.steps} batches); first: ${r.firstViolation}`,
      });
    }
  }

  const errors = issues.filter((i) => i.severity === "error");
  return {
    ok: errors.length === 0,
    model: { name: model.name, layers: derived.layers, compressRatios: [...model.compressRatios] },
    args,
    derived,
    notes,
    budget,
    sizingMode,
    sizing,
    residency,
    advice,
    errors,
    warnings: issues.filter((i) => i.severity === "warning"),
  };
}

function runResidency(derived: DerivedValues, options: CheckOptions): ResidencyCheck[] {
  const out: ResidencyCheck[] = [];
  for (const [key, ratio] of [
    ["c4", 4],
    ["c128", 128],
  ] as const) {
    const ringSize = derived.ringSizes[key];
    if (ringSize == null) continue;
    const base = {
      ratio,
      ringSize,
      swaPageSize: derived.effectivePageSize,
      draftTokens: derived.maxSpeculativeNumDraftTokens,
      adaptive: derived.adaptiveCandidates != null,
      steps: 0,
      verifies: 0,
      violations: 0,
      firstViolation: null,
    };
    if (!derived.isSpeculative || derived.speculativeAlgorithm == null) {
      out.push({ ...base, skipped: "no speculative verify: the plain (pad 0) rule applies" });
      continue;
    }
    if (ratio === 128 && derived.onlineC128) {
      out.push({ ...base, skipped: "online c128 keeps per-draft banks instead of a ring" });
      continue;
    }
    try {
      const report = runResidencyScenario({
        compressRatio: ratio,
        ringSize,
        swaPageSize: derived.effectivePageSize,
        draftTokens: derived.maxSpeculativeNumDraftTokens,
        adaptive: derived.adaptiveCandidates != null,
        steps: options.residencySteps ?? 300,
        seed: options.residencySeed ?? 1,
      });
      out.push({
        ...base,
        steps: report.steps,
        verifies: report.verifies,
        violations: report.violations,
        firstViolation: report.firstViolation?.message ?? null,
        skipped: null,
      });
    } catch (e) {
      if (!(e instanceof PlannerError)) throw e;
      out.push({ ...base, skipped: `the planner refuses this ring: ${e.message}` });
    }
  }
  return out;
}

function ruleOf(e: MemoryPoolError): string {
  switch (e.code) {
    case "SWA_FLOOR":
      return "V-P4";
    case "NOT_ENOUGH_MEMORY":
      return "V-M2";
    case "PAGE_SIZE":
      return e.message.includes("must be 256") ? "V-P3" : "V-P2";
    case "HISPARSE_RATIO":
      return "V-H1";
    default:
      return "V-K1";
  }
}

function withFraction(e: MemoryPoolError, memFractionStatic: number, kind: BudgetInput["kind"]): string {
  return e.code === "NOT_ENOUGH_MEMORY" && kind === "gpu"
    ? `${e.message} Current value: mem_fraction_static=${memFractionStatic}`
    : e.message;
}

export function fmtBytes(bytes: number): string {
  return `${Math.round(bytes).toLocaleString("en-US")} B (${(bytes / GIB).toFixed(3)} GiB)`;
}
