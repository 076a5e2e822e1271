/**
 * `check --compare-engines`: one SGLang deployment (the check's resolved report) mapped onto the equivalent vLLM
 * input, both engines' capacity, memory per cache kind, and every difference in bytes per token split into named
 * causes (docs/reference/engines-compared.md). Every figure comes from the two models: SGLang's pools from the
 * check's report, vLLM's groups and blocks from `planVllmKvCache`. Browser-safe: the HTML page reruns it.
 */
import {
  type CheckReport,
  ENGINE_CACHE_KINDS,
  type EngineCacheKind,
  type EnginesComparison,
  type ModelPreset,
  type VllmKvInput,
  type VllmKvPlan,
  planVllmKvCache,
} from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";
import { type KindFigures, engineCauses, sglangKinds, vllmKinds } from "./compare-engines-kinds.js";
import type { Values } from "./launch.js";

const GIB = 2 ** 30;
const n = (v: number): string => v.toLocaleString("en-US");

/** The check flags that set the comparison's own inputs (each needs --compare-engines). */
export const COMPARE_FLAGS = [
  "compare-gpu-memory-utilization",
  "compare-vllm-overhead-gib",
  "compare-max-num-batched-tokens",
] as const;

/** The comparison, or null when `--compare-engines` is not given; refuses its inputs without it. */
export function enginesComparisonOf(values: Values, report: CheckReport, model: ModelPreset): EnginesComparison | null {
  if (values["compare-engines"] !== true) {
    const stray = COMPARE_FLAGS.find((f) => values[f] !== undefined);
    if (stray) throw new UsageError(`--${stray}`, values[stray], "sets an input of --compare-engines: give it too");
    return null;
  }
  return compareEngines(report, model, {
    gpuMemoryUtilization: values["compare-gpu-memory-utilization"] as number | undefined,
    vllmOverheadGiB: values["compare-vllm-overhead-gib"] as number | undefined,
    maxNumBatchedTokens: values["compare-max-num-batched-tokens"] as number | undefined,
  });
}

export interface CompareOptions {
  /** vLLM --gpu-memory-utilization; absent: vLLM gets SGLang's KV budget (same-kv-bytes). */
  gpuMemoryUtilization?: number | undefined;
  /** With a utilization: what vLLM's profile run takes besides the weights, in GiB (default 0). */
  vllmOverheadGiB?: number | undefined;
  /** vLLM --max-num-batched-tokens (default vLLM's). */
  maxNumBatchedTokens?: number | undefined;
}

type Budget = EnginesComparison["mapping"]["budget"];

/** How SGLang's budget becomes vLLM's (the two fractions price different things: docs say how). */
function budgetMapping(report: CheckReport, options: CompareOptions): { budget: Budget; input: VllmKvInput["budget"] } {
  const sglangBytes = report.budget.availableBytes as number;
  const util = options.gpuMemoryUtilization;
  if (util === undefined) {
    if (options.vllmOverheadGiB !== undefined)
      throw new UsageError(
        "--compare-vllm-overhead-gib",
        options.vllmOverheadGiB,
        "needs --compare-gpu-memory-utilization",
      );
    const text = `vLLM's available KV cache memory = SGLang's KV budget (${n(sglangBytes)} B)`;
    const budget = { rule: "same-kv-bytes", sglangBytes, vllmBytes: sglangBytes, gpuMemoryUtilization: null };
    return {
      budget: { ...budget, overheadBytes: null, text } as Budget,
      input: { kind: "availableBytes", bytes: sglangBytes },
    };
  }
  const b = report.budget;
  if (b.kind !== "gpu" || b.preFreeGiB === null || b.postFreeGiB === null)
    throw new UsageError("--compare-gpu-memory-utilization", util, "needs the GPU budget (not --kv-budget-bytes)");
  const totalDeviceBytes = Math.round(b.preFreeGiB * GIB);
  const weightsBytes = Math.round((b.preFreeGiB - b.postFreeGiB) * GIB);
  const overheadBytes = Math.round((options.vllmOverheadGiB ?? 0) * GIB);
  const input = { kind: "gpu", totalDeviceBytes, gpuMemoryUtilization: util, weightsBytes, activationPeakBytes: 0 };
  const vllmBytes = Math.ceil(totalDeviceBytes * util) - weightsBytes - overheadBytes;
  const text =
    `vLLM: ceil(${n(totalDeviceBytes)} B × ${util}) − weights ${n(weightsBytes)} B − overhead ${n(overheadBytes)} B ` +
    `(--gpu-memory-utilization covers activations and CUDA graphs; SGLang's mem-fraction-static does not)`;
  return {
    budget: { rule: "gpu-memory-utilization", sglangBytes, vllmBytes, gpuMemoryUtilization: util, overheadBytes, text },
    input: { ...input, activationPeakBytes: overheadBytes } as VllmKvInput["budget"],
  };
}

/** The vLLM input equivalent to the check's SGLang deployment. */
function vllmInputOf(report: CheckReport, model: ModelPreset, options: CompareOptions, budget: VllmKvInput["budget"]) {
  const d = report.derived;
  // SGLang's draft tokens include the verified root token; vLLM's num_speculative_tokens does not.
  const k = d.draftTokens - 1;
  const method = d.speculativeAlgorithm === "DSPARK" ? "dspark" : "mtp";
  const speculative = d.isSpeculative && k > 0 ? { method, numSpeculativeTokens: k } : null;
  const input: VllmKvInput = {
    model,
    maxModelLen: d.contextLen,
    blockSize: d.effectivePageSize,
    // vLLM's fp8 spellings all become fp8_ds_mla; SGLang's fp8_e4m3 is one of them. Any other is refused there.
    kvCacheDtype: d.kvCacheDtype,
    fp4IndexerCache: report.args.enableDeepseekV4Fp4Indexer === true,
    pipelineParallelSize: report.args.ppSize,
    speculative: speculative as VllmKvInput["speculative"],
    budget,
  };
  if (options.maxNumBatchedTokens !== undefined) input.maxNumBatchedTokens = options.maxNumBatchedTokens;
  return input;
}

function speculativeText(report: CheckReport): string {
  const d = report.derived;
  if (!d.isSpeculative) return "none";
  const steps = d.speculativeAlgorithm === "EAGLE" ? `, ${d.speculativeNumSteps} steps` : "";
  return `${d.speculativeAlgorithm}${steps}, ${d.draftTokens} draft tokens`;
}

/** The comparison of the checked deployment on both engines (throws UsageError / ServerConfigError on bad input). */
export function compareEngines(report: CheckReport, model: ModelPreset, options: CompareOptions = {}) {
  const sizing = report.sizing;
  if (!sizing || sizing.sizes.maxTotalNumTokens === 0)
    throw new UsageError("--compare-engines", true, "needs a sized SGLang deployment (the budget sizes no pool)");
  // SGLang splits layers over pipeline stages and vLLM's model here does not: one stage is compared.
  if (report.args.ppSize !== 1)
    throw new UsageError("--pp-size", report.args.ppSize, "must be 1 with --compare-engines (one pipeline stage)");
  const { budget, input: budgetInput } = budgetMapping(report, options);
  const plan = planVllmKvCache(vllmInputOf(report, model, options, budgetInput));
  const L = plan.input.maxModelLen;
  const s = sglangKinds(report);
  const v = vllmKinds(plan, model.numHiddenLayers);
  const tokensS = sizing.sizes.maxTotalNumTokens;
  const tokensV = (plan.numGpuBlocks * L) / plan.blocksPerRequest.total;
  const kinds = ENGINE_CACHE_KINDS.filter((k) => s.has(k) || v.has(k)).map((k) =>
    kindRow(k, s.get(k), v.get(k), tokensS, tokensV),
  );
  const strideBytesPerToken = strideBytesPerTokenOf(plan);
  const unusedV = plan.numGpuBlocks > 0 ? (plan.budget.availableBytes - plan.poolBytes) / tokensV : null;
  const causes = engineCauses({ rows: kinds, s, v, plan, tokensS, strideBytesPerToken, unusedV, report });
  const sum = causes.reduce((a, c) => a + c.bytesPerToken, 0);
  return {
    mapping: mappingOf(report, plan, budget),
    sglang: {
      tokens: tokensS,
      requestsAtContextLength: Math.min(sizing.maxRunningRequests, tokensS / L),
      maxRunningRequests: sizing.maxRunningRequests,
      availableBytes: sizing.availableBytes,
      unusedBytes: sizing.unusedBytes,
      bytesPerToken: sizing.availableBytes / tokensS,
    },
    vllm: vllmSide(plan, tokensV),
    kinds,
    stridePaddingBytes: strideBytesPerToken * tokensV,
    causes,
    deltaBytesPerToken: unusedV === null ? null : sum,
  } satisfies EnginesComparison;
}

function mappingOf(report: CheckReport, plan: VllmKvPlan, budget: Budget): EnginesComparison["mapping"] {
  const i = plan.input;
  return {
    model: report.model.name,
    tpSize: report.args.tpSize,
    contextLength: i.maxModelLen,
    blockSize: i.blockSize,
    kvCacheDtype: { sglang: report.derived.kvCacheDtype, vllm: "fp8_ds_mla" },
    fp4IndexerCache: i.fp4IndexerCache,
    pipelineParallelSize: i.pipelineParallelSize,
    maxNumBatchedTokens: i.maxNumBatchedTokens,
    speculative: { sglang: speculativeText(report), vllm: i.speculative },
    budget,
  };
}

function vllmSide(plan: VllmKvPlan, tokensV: number): EnginesComparison["vllm"] {
  return {
    tokens: plan.printed.kvCacheSizeTokens,
    maxConcurrency: plan.printed.maxConcurrency,
    numGpuBlocks: plan.numGpuBlocks,
    blocksPerRequest: plan.blocksPerRequest.total,
    blockStrideBytes: plan.grouping.blockStrideBytes,
    groups: plan.grouping.groups.length,
    poolBytes: plan.poolBytes,
    availableBytes: plan.budget.availableBytes,
    startupCheckPasses: plan.admission.passes,
    printed: [plan.printed.kvCacheSizeLine, plan.printed.maxConcurrencyLine],
    bytesPerToken: plan.numGpuBlocks > 0 ? plan.budget.availableBytes / tokensV : null,
  };
}

/** Bytes per token of context that smaller groups leave unused in their stride-sized blocks. */
function strideBytesPerTokenOf(plan: VllmKvPlan): number {
  const stride = plan.grouping.blockStrideBytes;
  const wasted = plan.grouping.groups.reduce(
    (sum, g, i) => sum + (plan.blocksPerRequest.perGroup[i] as number) * (stride - g.bytesPerBlock),
    0,
  );
  return wasted / plan.input.maxModelLen;
}

function side(f: KindFigures | undefined, tokens: number): EnginesComparison["kinds"][number]["sglang"] {
  if (!f || f.layers === 0 || tokens === 0)
    return { layers: f?.layers ?? 0, bytes: 0, bytesPerToken: 0, bytesPerHeldToken: null, heldTokensPerToken: null };
  return {
    layers: f.layers,
    bytes: f.bytesPerToken * tokens,
    bytesPerToken: f.bytesPerToken,
    bytesPerHeldToken: f.bytesPerHeldToken,
    heldTokensPerToken: f.heldTokensPerToken,
  };
}

function kindRow(
  kind: EngineCacheKind,
  s: KindFigures | undefined,
  v: KindFigures | undefined,
  tokensS: number,
  tokensV: number,
): EnginesComparison["kinds"][number] {
  const sglang = side(s, tokensS);
  // vLLM's per-token figures are per request / max_model_len: they hold with no block too.
  const vllm = { ...side(v, 1), bytes: (v?.bytesPerToken ?? 0) * tokensV };
  return { kind, sglang, vllm, deltaBytesPerToken: vllm.bytesPerToken - sglang.bytesPerToken };
}
