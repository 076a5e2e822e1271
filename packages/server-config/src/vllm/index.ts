// vLLM's KV cache for DeepSeek-V4 (docs/reference/vllm-kv-cache.md). The root entry exports planVllmKvCache and its
// input and result types; the parts stay unexported until `check --engine vllm` settles them.
export { type VllmCacheKind, type VllmLayerSpec, type VllmSpecModel, vllmLayerSpecs } from "./layer-specs.js";
export { type VllmKvGroup, type VllmGrouping, approximateGcd, vllmKvGroups } from "./groups.js";
export { type VllmRequestShape, blocksPerRequest, groupBlocksPerRequest } from "./blocks-per-request.js";
export { type VllmBudgetInput, type VllmBudget, DEFAULT_GPU_MEMORY_UTILIZATION, vllmBudget } from "./budget.js";
export { admissionBytesPerBlock, admissionBytesNeeded, estimatedMaxModelLen } from "./admission.js";
export { type VllmPrintedFigures, printedFigures, pythonFixed2, pythonRound2, thousands } from "./printed.js";
export { type VllmKvInput, type VllmSpeculativeMethod, VLLM_DEFAULTS, resolveVllmKvInput } from "./inputs.js";
export {
  type VllmDerivedMaxLen,
  type VllmDerivedMaxLenModel,
  VLLM_UNSCALED_ROPE_TYPES,
  vllmDerivedMaxModelLen,
} from "./derived-max-len.js";
export { type VllmKvPlan, maxConcurrentBatches, planVllmKvCache } from "./model.js";
export {
  type VllmArgSource,
  type VllmArgValues,
  type VllmResolvedArg,
  type VllmResolvedArgs,
  type VllmSpeculative,
  readFp4IndexerCache,
  readSpeculativeConfig,
  resolveVllmArgs,
} from "./args.js";
export {
  type VllmInFlightRule,
  type VllmVersionBehaviour,
  DEFAULT_VLLM_VERSION,
  VLLM_VERSION_BEHAVIOURS,
  vllmVersionBehaviour,
} from "./versions.js";
export {
  type VllmCost,
  type VllmIssue,
  type VllmRuleContext,
  type VllmRuleId,
  VLLM_RULES,
  vllmIssues,
} from "./rules.js";
export {
  type VllmBudgetReport,
  type VllmCheckBudget,
  type VllmCheckInput,
  type VllmCheckReport,
  H200_TOTAL_BYTES,
  checkVllmDeployment,
} from "./check.js";
