/**
 * vLLM's KV cache for one DeepSeek-V4 rank, end to end (docs/reference/vllm-kv-cache.md): layer specs, groups,
 * page stride, blocks per request, the budget, num_gpu_blocks, the start-up check and the two printed figures.
 */
import { admissionBytesNeeded, admissionBytesPerBlock, estimatedMaxModelLen } from "./admission.js";
import { blocksPerRequest, type VllmRequestShape } from "./blocks-per-request.js";
import { type VllmBudget, vllmBudget } from "./budget.js";
import { type VllmGrouping, vllmKvGroups } from "./groups.js";
import { resolveVllmKvInput, type VllmKvInput } from "./inputs.js";
import { type VllmLayerSpec, vllmLayerSpecs } from "./layer-specs.js";
import { printedFigures, type VllmPrintedFigures } from "./printed.js";

export interface VllmKvPlan {
  input: Required<VllmKvInput>;
  /** Draft layers registered in the target's cache (MTP: min(mtpLayers, K); DSpark: 0). */
  draftLayers: number;
  request: VllmRequestShape;
  specs: VllmLayerSpec[];
  grouping: VllmGrouping;
  blocksPerRequest: { perGroup: number[]; total: number };
  budget: VllmBudget;
  /** available // stride, or the override. */
  numGpuBlocks: number;
  /** The scheduler's block size after start-up: the smallest group block size (4 for DSV4). */
  schedulerBlockSize: number;
  /** Bytes the packed pool allocates: numGpuBlocks × stride. */
  poolBytes: number;
  admission: { bytesPerBlock: number; bytesNeeded: number; passes: boolean; estimatedMaxModelLen: number | null };
  printed: VllmPrintedFigures;
}

/**
 * Draft layers that join the target's cache. vLLM forces every MTP layer to ratio 1 (SWA only); one MTP module is
 * re-run for K > its layers. DSpark's draft keeps its own KV outside these groups (the 0.27.1 log with DSpark k=5
 * reproduces with none, docs/reference/vllm-kv-cache.md §9).
 */
function draftLayersOf(input: Required<VllmKvInput>): number {
  const spec = input.speculative;
  if (spec === null || spec.method !== "mtp") return 0;
  return Math.min(input.model.mtpLayers, spec.numSpeculativeTokens);
}

/** vLLM's max_concurrent_batches: PP batches fill the pipeline; async scheduling overlaps one more step. */
export function maxConcurrentBatches(input: Required<VllmKvInput>): number {
  const pp = input.pipelineParallelSize;
  if (!input.asyncScheduling) return pp;
  if (input.modelRunnerV2) return pp + 1;
  // The V1 runner does not overlap steps under PP.
  return pp <= 1 ? 2 : pp;
}

function requestShape(input: Required<VllmKvInput>, draftLayers: number): VllmRequestShape {
  const batches = maxConcurrentBatches(input);
  const k = input.speculative?.numSpeculativeTokens ?? 0;
  // Multi-module MTP re-prefills K − 1 tokens, so sliding groups keep them (vLLM's extra_retained_tokens).
  const extraRetainedTokens = draftLayers > 1 ? k - 1 : 0;
  return {
    maxModelLen: input.maxModelLen,
    inFlightTokens: (input.inFlightRule === "batchedTokens" ? 1 : batches) * input.maxNumBatchedTokens,
    extraRetainedTokens,
  };
}

export function planVllmKvCache(raw: VllmKvInput): VllmKvPlan {
  const input = resolveVllmKvInput(raw);
  const draftLayers = draftLayersOf(input);
  const specs = vllmLayerSpecs(input.model, {
    blockSizeTokens: input.blockSize,
    fp4IndexerCache: input.fp4IndexerCache,
    draftLayers,
  });
  const grouping = vllmKvGroups(specs);
  const request = requestShape(input, draftLayers);
  const bpr = blocksPerRequest(grouping.groups, request);
  const budget = vllmBudget(input.budget);
  const fromBudget = Math.max(0, Math.floor(budget.availableBytes / grouping.blockStrideBytes));
  const numGpuBlocks = input.numGpuBlocksOverride ?? fromBudget;
  const bytesNeeded = admissionBytesNeeded(grouping, request);
  const passes = bytesNeeded <= budget.availableBytes;
  return {
    input,
    draftLayers,
    request,
    specs,
    grouping,
    blocksPerRequest: bpr,
    budget,
    numGpuBlocks,
    schedulerBlockSize: Math.min(...grouping.groups.map((g) => g.blockSizeTokens)),
    poolBytes: numGpuBlocks * grouping.blockStrideBytes,
    admission: {
      bytesPerBlock: admissionBytesPerBlock(grouping),
      bytesNeeded,
      passes,
      estimatedMaxModelLen: passes ? null : estimatedMaxModelLen(grouping, request, budget.availableBytes),
    },
    printed: printedFigures(numGpuBlocks, bpr.total, input.maxModelLen),
  };
}
