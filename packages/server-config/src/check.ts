/**
 * The whole pre-start check: resolve the arguments, size the pools for a budget, run the planner's residency
 * checker on the resolved rings, and advise a ring when the draft count exceeds one. Every error and warning is
 * collected into one report (what `dsv4-kv check` prints).
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import { GIB, minimumViableMemFraction } from "@dsv4-kv/memory-pool/internal";
import {
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
import { PlannerError, residencyProofStatus, runResidencyScenario } from "@dsv4-kv/planner";
import { requireBudget } from "./budget.js";
import type { z } from "zod";
import { type ModelPreset, requireModelPreset } from "./presets.js";
import type {
  BudgetReportSchema,
  CheckReportSchema,
  OverriddenSettingSchema,
  ResidencyCheckSchema,
} from "./report-schema.js";
import { type ConfigNote, type DerivedValues, resolveServerConfig } from "./resolve.js";
import { type ConfigIssue, RULES, type RuleId, evaluateSizedRules, makeIssue } from "./rules.js";
import { withRingAdvice } from "./rules/pools.js";
import { type ServerArgs, requireServerArgs } from "./schema.js";

/** The KV budget per worker: given in bytes, or from device memory (docs/reference/pools-and-sizing.md §7.1). */
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

/** The budget part of the report (its JSON contract: report-schema.ts). */
export type BudgetReport = z.output<typeof BudgetReportSchema>;

/** One ring's residency simulation and proof (its JSON contract: report-schema.ts). */
export type ResidencyCheck = z.output<typeof ResidencyCheckSchema>;

export interface CheckOptions {
  sizing?: SizingMode;
  /** Batches per residency run (default 300). */
  residencySteps?: number;
  residencySeed?: number;
  /**
   * How a refused budget input is named: the CLI passes `flagName` so that `--weights-gib` is named as typed.
   * Default: the camelCase field (`weightsGiB`).
   */
  fieldName?: (field: string) => string;
  /** How the caller resolved the model (the CLI's `--model` source), shown as `model.resolvedAs`. */
  modelResolvedAs?: string;
  /** Settings the caller accepted and did not read, listed in the report as `ignored`. */
  ignored?: CheckReport["ignored"];
  /** Settings given more than once that SGLang's loader accepts, and which one won (`overridden`, when any). */
  overridden?: OverriddenSetting[];
}

/** A setting given more than once, and which one SGLang's loader takes (docs/reference/config-file-duplicates.md). */
export type OverriddenSetting = z.output<typeof OverriddenSettingSchema>;

/** What `checkServerConfig` returns: `dsv4-kv check --json` is this plus `schemaVersion` (report-schema.ts). */
export type CheckReport = z.output<typeof CheckReportSchema>;

export const DEFAULT_MEM_FRACTION_STATIC = 0.85;

export function checkServerConfig(
  args: ServerArgs,
  model: ModelPreset,
  budgetInput: BudgetInput,
  options: CheckOptions = {},
): CheckReport {
  args = requireServerArgs(args);
  requireModelPreset(model);
  requireBudget(budgetInput, args.memFractionStatic, options.fieldName ?? ((field) => field));
  const resolved = resolveServerConfig(args, model);
  const { derived, notes } = resolved;
  const issues: ConfigIssue[] = [...resolved.issues];
  const sizingMode = options.sizing ?? "exact";

  const memFractionStatic = args.memFractionStatic ?? DEFAULT_MEM_FRACTION_STATIC;
  const budget = budgetReport(args, budgetInput, notes, issues);
  // V-M2 names the fraction only when the budget came from it.
  const fraction = budgetInput.kind === "gpu" ? memFractionStatic : null;
  const sizing = sizePools(resolved, budget, sizingMode, fraction, issues);
  // The rules that read the sized pools (V-C2, V-C3; rules.ts).
  if (sizing) issues.push(...evaluateSizedRules({ args, model: resolved.model, derived, sizing }));
  const advice = adviseRings(issues, resolved, budget, sizingMode, sizing);
  const residency = runResidency(derived, options);
  issues.push(...residencyIssues(residency));

  const errors = issues.filter((i) => i.severity === "error");
  return {
    ok: errors.length === 0,
    model: {
      name: model.name,
      resolvedAs: options.modelResolvedAs ?? model.name,
      layers: derived.layers,
      compressRatios: [...model.compressRatios],
    },
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
    ignored: [...(options.ignored ?? [])],
    ...(options.overridden?.length ? { overridden: [...options.overridden] } : {}),
  };
}

/** The KV budget (docs/reference/pools-and-sizing.md §7.1, V-M1): given in bytes, or the GPU's less the weights. */
function budgetReport(
  args: ServerArgs,
  budgetInput: BudgetInput,
  notes: ConfigNote[],
  issues: ConfigIssue[],
): BudgetReport {
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
      minimumViableMemFraction: minimumViableMemFraction(preFreeGiB, postFreeGiB).exact,
      assumption: budgetInput.assumption ?? null,
    });
    try {
      const b = kvBudgetFromGpu({ preFreeGiB, postFreeGiB, memFractionStatic });
      budget.restGiB = b.restGiB;
      budget.availableBytes = b.availableBytes;
    } catch (e) {
      if (!MemoryPoolError.isInstance(e) || e.code !== "NO_MEMORY") throw e;
      budget.restGiB = (e as MemoryPoolError).params.restGiB as number;
      issues.push(noMemoryIssue(e as MemoryPoolError));
    }
  }

  return budget;
}

/** The pools sized for the budget (docs/reference/pools-and-sizing.md §8.5; V-P*, V-M2, V-K1, V-W1). */
function sizePools(
  resolved: ReturnType<typeof resolveServerConfig>,
  budget: BudgetReport,
  sizingMode: SizingMode,
  fraction: number | null,
  issues: ConfigIssue[],
): SizingResult | null {
  let sizing: SizingResult | null = null;
  if (budget.availableBytes != null) {
    try {
      sizing = sizeKvCache({ ...resolved.sizing, mode: sizingMode }, budget.availableBytes);
      for (const text of sizing.warnings) {
        const field = "maxRunningRequests";
        issues.push(
          makeIssue({ rule: "V-W1", severity: "warning", code: "CAPACITY_WARNING", field, value: null, text }),
        );
      }
      if (sizing.unusedBytes < 0) {
        const overBytes = -sizing.unusedBytes;
        issues.push(
          makeIssue({
            rule: "V-W1",
            severity: "warning",
            code: "CAPACITY_WARNING",
            field: "sizing",
            value: sizing.unusedBytes,
            text:
              `the pools allocate ${fmtBytes(overBytes)} more than the KV budget (upstream's estimate misses page ` +
              "padding and the draft pool); it comes out of the (1 − mem_fraction_static) slack. Use --sizing exact " +
              "to size what is allocated.",
            params: { overBytes },
          }),
        );
      }
    } catch (e) {
      const errors = MemoryPoolCapacityErrors.isInstance(e)
        ? (e as MemoryPoolCapacityErrors).errors
        : MemoryPoolError.isInstance(e)
          ? [e as MemoryPoolError]
          : null;
      if (!errors) throw e;
      for (const err of errors) issues.push(sizingIssue(err, fraction));
    }
  }
  return sizing;
}

/** The advisor for V-S8: the ring that would serve the requested count, and its cost, added to each V-S8 issue. */
function adviseRings(
  issues: ConfigIssue[],
  resolved: ReturnType<typeof resolveServerConfig>,
  budget: BudgetReport,
  sizingMode: SizingMode,
  sizing: SizingResult | null,
): RingAdvice[] {
  const { derived } = resolved;
  let advice: RingAdvice[] = [];
  const exceeds = issues.filter((i) => i.rule === "V-S8");
  if (exceeds.length > 0) {
    const D = derived.maxDraftTokens;
    advice =
      budget.availableBytes != null
        ? adviseRingSizes({ ...resolved.sizing, mode: sizingMode }, budget.availableBytes, D, { baseSizing: sizing })
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
      const a = advice.find((x) => x.ratio === issue.params.ratio);
      if (!a) continue;
      issues[issues.indexOf(issue)] = withRingAdvice(issue, adviceText(a));
    }
  }

  return advice;
}

/** R1: a residency run that loses committed positions is an error. */
function residencyIssues(residency: readonly ResidencyCheck[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const r of residency) {
    if (r.violations > 0) {
      const { ratio, ringSize, draftTokens, violations, steps } = r;
      issues.push(
        makeIssue({
          rule: "R1",
          severity: "error",
          code: "RESIDENCY",
          field: "speculativeNumDraftTokens",
          value: draftTokens,
          text:
            `residency check: c${ratio} ring ${ringSize} with ${draftTokens} draft tokens loses committed positions ` +
            `(${violations} violations in ${steps} batches); first: ${r.firstViolation}`,
          params: { ratio, ringSize, draftTokens, violations, steps },
        }),
      );
    }
  }

  return issues;
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
      draftTokens: derived.maxDraftTokens,
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
        draftTokens: derived.maxDraftTokens,
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
        proof: residencyProofStatus(
          { compressRatio: ratio, ringSize, swaPageSize: base.swaPageSize },
          base.draftTokens,
        ),
      });
    } catch (e) {
      if (!PlannerError.isInstance(e)) throw e;
      out.push({ ...base, skipped: `the planner refuses this ring: ${e.message}` });
    }
  }
  return out;
}

/** The advisor's words for a V-S8 issue: the ring that would serve the draft count, and its cost. */
function adviceText(a: RingAdvice): string {
  if (a.ringSize == null) return a.reason ?? "";
  const cost =
    a.stateBytesAdvised != null &&
    a.stateBytesCurrent != null &&
    a.capacityTokensAdvised != null &&
    a.capacityTokensCurrent != null
      ? `: c${a.ratio} state ${fmtBytes(a.stateBytesCurrent)} → ${fmtBytes(a.stateBytesAdvised)}, capacity ` +
        `${a.capacityTokensCurrent.toLocaleString("en-US")} → ${a.capacityTokensAdvised.toLocaleString("en-US")} tokens`
      : "";
  return (
    `a c${a.ratio} ring of ${a.ringSize} (write pad ${a.writePad}) would serve ${a.draftTokens} draft tokens${cost} ` +
    "(upstream has no ring-size option)"
  );
}

/** V-M1 in upstream's words, from the memory pool's NO_MEMORY params. */
function noMemoryIssue(e: MemoryPoolError): ConfigIssue {
  const p = e.params as Record<string, number>;
  const gib = (v: number) => `${Number(v.toFixed(4))} GiB`;
  const fraction = p.memFractionStatic!;
  const raise =
    e.params.weightsExceedDevice === true
      ? "The weights alone exceed the device memory: no --mem-fraction-static can fit them; shard the weights " +
        "(more tensor/pipeline parallel ranks) or use a larger device."
      : `Raise --mem-fraction-static above ${p.minimumViableFractionRoundedUp} (minimum viable = 1 − available/pre = ` +
        `1 − ${gib(p.postFreeGiB!)}/${gib(p.preFreeGiB!)} = ${p.minimumViableFraction!.toFixed(5)}).`;
  const text =
    `Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=${fraction} (rest = ` +
    `${gib(p.postFreeGiB!)} − ${gib(p.preFreeGiB!)}·(1 − ${fraction}) = ${p.restGiB!.toFixed(2)} GiB). ${raise} ` +
    "If using speculative decoding, draft weights are now counted.";
  return makeIssue({
    rule: "V-M1",
    severity: "error",
    code: "NO_MEMORY",
    field: e.field,
    value: e.value,
    text,
    params: { ...e.params },
  });
}

/** A sizing error as a start-up issue: the rule from the code and params, upstream's words for V-M2 and V-P4. */
function sizingIssue(e: MemoryPoolError, memFractionStatic: number | null): ConfigIssue {
  const rule = ruleOf(e);
  const params = { ...e.params };
  let text = e.message;
  if (rule === "V-M2") {
    const current = memFractionStatic === null ? "" : ` Current value: mem_fraction_static=${memFractionStatic}`;
    text = `Not enough memory. Please try to increase --mem-fraction-static.${current}`;
  } else if (rule === "V-P4") {
    const p = e.params as Record<string, number>;
    text =
      `SWA pool (${p.swaTokens} tokens) cannot hold even one request: the prefill admission floor is ` +
      `sliding_window_size (${p.slidingWindow}) + page_size (${p.pageSize}). Need at least ${p.minimumSwaTokens} SWA ` +
      `tokens: increase --swa-full-tokens-ratio (now ${p.swaFullTokensRatio}) or the total KV budget.`;
  }
  return makeIssue({
    rule,
    severity: "error",
    code: e.code as ErrorCode,
    field: e.field,
    value: e.value,
    text,
    params,
  });
}

/** The start-up rule a sizing refusal is: the memory pool names it (`startupRule`); the pool shape's otherwise. */
function ruleOf(e: MemoryPoolError): RuleId {
  return e.startupRule !== null && Object.hasOwn(RULES, e.startupRule) ? (e.startupRule as RuleId) : "V-K1";
}

export function fmtBytes(bytes: number): string {
  return `${Math.round(bytes).toLocaleString("en-US")} B (${(bytes / GIB).toFixed(3)} GiB)`;
}
