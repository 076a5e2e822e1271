/**
 * `check --engine vllm` in the library: vLLM's arguments for one DeepSeek-V4 deployment resolved, the budget built
 * from the GPU's memory (or given), the KV cache planned as vLLM plans it (planVllmKvCache), the two printed figures
 * in the version's layout, and every vLLM rule (rules.ts). Per rank: TP ranks each hold a whole cache.
 */
import type { ModelPreset } from "../presets.js";
import { type VllmArgValues, type VllmResolvedArgs, resolveVllmArgs } from "./args.js";
import type { VllmBudgetInput } from "./budget.js";
import type { VllmKvInput } from "./inputs.js";
import { type VllmKvPlan, planVllmKvCache } from "./model.js";
import { type VllmIssue, type VllmRuleContext, vllmIssues } from "./rules.js";
import { DEFAULT_VLLM_VERSION, type VllmVersionBehaviour, vllmVersionBehaviour } from "./versions.js";

const GIB = 2 ** 30;
/** An H200's total device memory (what vLLM's utilization multiplies). */
export const H200_TOTAL_BYTES = 150_109_880_320;

export interface VllmCheckBudget {
  /** A known "Available KV cache memory" per rank (instead of the GPU arithmetic). */
  kvBudgetBytes?: number;
  /** Total device memory, GiB. Default: an H200's 150,109,880,320 B. */
  gpuMemoryGiB?: number;
  /** Weights this rank loads, GiB. Default: the checkpoint / (TP × PP). */
  weightsGiB?: number;
  /** Other memory the profile run measures (activation peak, memory outside torch, CUDA graphs), GiB. Default 0. */
  runtimeGiB?: number;
}

export interface VllmCheckInput {
  model: ModelPreset;
  given: VllmArgValues;
  /** As vLLM prints it (`0.27.1`) or `main`; default DEFAULT_VLLM_VERSION. */
  vllmVersion?: string;
  budget?: VllmCheckBudget;
}

export interface VllmBudgetReport {
  input: VllmBudgetInput;
  /** What the weights figure is: given, or the checkpoint split over the ranks. */
  weightsAssumption: string | null;
}

export interface VllmCheckReport {
  ok: boolean;
  vllmVersion: string;
  behaviour: VllmVersionBehaviour;
  resolved: VllmResolvedArgs;
  budget: VllmBudgetReport;
  /** Null when a start-up refusal leaves nothing to size. */
  plan: VllmKvPlan | null;
  /** The lines vLLM prints, in the version's layout. */
  printedLines: string[] | null;
  /** `--max-model-len -1`: the length vLLM fits (null otherwise). */
  autoFitMaxModelLen: number | null;
  errors: VllmIssue[];
  warnings: VllmIssue[];
}

function budgetOf(input: VllmCheckInput, resolved: VllmResolvedArgs): VllmBudgetReport {
  const given = input.given;
  if (typeof given.kvCacheMemoryBytes === "number")
    return { input: { kind: "kvCacheMemoryBytes", bytes: given.kvCacheMemoryBytes }, weightsAssumption: null };
  const b = input.budget ?? {};
  if (b.kvBudgetBytes !== undefined)
    return { input: { kind: "availableBytes", bytes: b.kvBudgetBytes }, weightsAssumption: null };
  const ranks =
    Number(resolvedValue(resolved, "tensorParallelSize")) * Number(resolvedValue(resolved, "pipelineParallelSize"));
  const weightsGiB = b.weightsGiB ?? input.model.checkpointGiB / ranks;
  const assumption =
    b.weightsGiB !== undefined
      ? "given (--weights-gib)"
      : `the checkpoint's ${input.model.checkpointGiB.toFixed(2)} GiB / ${ranks} ranks`;
  return {
    input: {
      kind: "gpu",
      totalDeviceBytes: b.gpuMemoryGiB !== undefined ? Math.round(b.gpuMemoryGiB * GIB) : H200_TOTAL_BYTES,
      gpuMemoryUtilization: resolvedValue(resolved, "gpuMemoryUtilization") as number,
      weightsBytes: Math.round(weightsGiB * GIB),
      nonTorchBytes: Math.round((b.runtimeGiB ?? 0) * GIB),
    },
    weightsAssumption: assumption,
  };
}

function resolvedValue(resolved: VllmResolvedArgs, field: string) {
  return resolved.args.find((a) => a.field === field)!.value;
}

function kvInput(
  input: VllmCheckInput,
  r: VllmResolvedArgs,
  budget: VllmBudgetInput,
  maxModelLen: number,
): VllmKvInput {
  const behaviour = vllmVersionBehaviour(input.vllmVersion ?? DEFAULT_VLLM_VERSION);
  return {
    model: input.model,
    maxModelLen,
    blockSize: r.blockSize,
    kvCacheDtype: "fp8_ds_mla",
    fp4IndexerCache: r.fp4IndexerCache,
    maxNumBatchedTokens: r.maxNumBatchedTokens,
    asyncScheduling: r.asyncScheduling,
    pipelineParallelSize: resolvedValue(r, "pipelineParallelSize") as number,
    modelRunnerV2: resolvedValue(r, "useV2ModelRunner") === true,
    speculative: r.speculative,
    inFlightRule: behaviour.inFlight,
    numGpuBlocksOverride: (resolvedValue(r, "numGpuBlocksOverride") as number | null) ?? null,
    budget,
  };
}

/** Plans at the given length, or (auto-fit) at the longest length vLLM's start-up check lets through. */
function planFor(base: VllmKvInput, autoFit: boolean): { plan: VllmKvPlan; autoFit: number | null } {
  const plan = planVllmKvCache(base);
  if (!autoFit || plan.admission.passes) return { plan, autoFit: autoFit ? plan.input.maxModelLen : null };
  const fitted = plan.admission.estimatedMaxModelLen ?? 0;
  if (fitted < 1) return { plan, autoFit: 0 };
  return { plan: planVllmKvCache({ ...base, maxModelLen: fitted }), autoFit: fitted };
}

export function checkVllmDeployment(input: VllmCheckInput): VllmCheckReport {
  const vllmVersion = input.vllmVersion ?? DEFAULT_VLLM_VERSION;
  const behaviour = vllmVersionBehaviour(vllmVersion, "vllmVersion");
  const resolved = resolveVllmArgs(input.given, input.model);
  const budget = budgetOf(input, resolved);
  const base = kvInput(input, resolved, budget.input, resolved.maxModelLen);
  const ctx: VllmRuleContext = {
    given: input.given,
    args: resolved,
    model: input.model,
    version: behaviour,
    plan: null,
    replan: (change) =>
      planVllmKvCache({ ...base, maxModelLen: ctx.plan?.input.maxModelLen ?? base.maxModelLen, ...change }),
  };
  const issues = vllmIssues(ctx, "config");
  let autoFit: number | null = null;
  if (!issues.some((i) => i.severity === "error")) {
    const planned = planFor(base, resolved.autoFitMaxModelLen);
    ctx.plan = planned.plan;
    autoFit = planned.autoFit;
    issues.push(...vllmIssues(ctx, "sized"));
  }
  const plan = ctx.plan;
  const printed = plan?.printed;
  const printedLines = !printed
    ? null
    : behaviour.printFormat === "one-line"
      ? [`${printed.kvCacheSizeLine}, ${printed.maxConcurrencyLine}`]
      : [printed.kvCacheSizeLine, printed.maxConcurrencyLine];
  const errors = issues.filter((i) => i.severity === "error");
  return {
    ok: errors.length === 0,
    vllmVersion,
    behaviour,
    resolved,
    budget,
    plan,
    printedLines,
    autoFitMaxModelLen: autoFit,
    errors,
    warnings: issues.filter((i) => i.severity === "warning"),
  };
}
