/**
 * The inputs of the vLLM KV model and their checks: each refusal is a ServerConfigError naming the field, the value
 * and the rule. Defaults are stated here once (docs/reference/vllm-kv-cache.md §8 says where each comes from).
 */
import type { VllmBudgetInput } from "./budget.js";
import { check, checkBoolean, checkInt, checkKeys, checkNumber, checkObject, checkOneOf } from "./checks.js";
import type { VllmSpecModel } from "./layer-specs.js";

export type VllmSpeculativeMethod = "mtp" | "dspark";

export interface VllmKvInput {
  /** The model (a ModelPreset fits): layers, head dims, window, compress_ratios, MTP layers. */
  model: VllmSpecModel & { mtpLayers: number };
  /** `--max-model-len` (L). */
  maxModelLen: number;
  /** `--block-size`, default 256. */
  blockSize?: number;
  /** `--kv-cache-dtype`: any fp8 spelling becomes fp8_ds_mla; the only layout modelled. Default "fp8". */
  kvCacheDtype?: string;
  /** `--attention-config.use_fp4_indexer_cache`, default false. */
  fp4IndexerCache?: boolean;
  /** `--max-num-batched-tokens` (T), default 8192. */
  maxNumBatchedTokens?: number;
  /** Async scheduling, default true. */
  asyncScheduling?: boolean;
  /** `--pipeline-parallel-size`, default 1. */
  pipelineParallelSize?: number;
  /** The V2 model runner (VLLM_USE_V2_MODEL_RUNNER), default false: it keeps PP + 1 batches in flight when async. */
  modelRunnerV2?: boolean;
  /** `--speculative-config` method and `num_speculative_tokens`, or null (default). */
  speculative?: { method: VllmSpeculativeMethod; numSpeculativeTokens: number } | null;
  /**
   * Which tokens in flight every sliding group reserves (vllm/versions.ts): `concurrentBatches` (default, 0.27 and
   * later) or `batchedTokens` (the older sizing: max_num_batched_tokens alone).
   */
  inFlightRule?: "concurrentBatches" | "batchedTokens";
  /** `--num-gpu-blocks-override`, default null. */
  numGpuBlocksOverride?: number | null;
  budget: VllmBudgetInput;
}

export const VLLM_DEFAULTS = {
  blockSize: 256,
  kvCacheDtype: "fp8",
  fp4IndexerCache: false,
  maxNumBatchedTokens: 8192,
  asyncScheduling: true,
  pipelineParallelSize: 1,
  modelRunnerV2: false,
} as const;

const KEYS = [
  "model",
  "maxModelLen",
  "blockSize",
  "kvCacheDtype",
  "fp4IndexerCache",
  "maxNumBatchedTokens",
  "asyncScheduling",
  "pipelineParallelSize",
  "modelRunnerV2",
  "speculative",
  "inFlightRule",
  "numGpuBlocksOverride",
  "budget",
] as const;
const BUDGET_KEYS = {
  kvCacheMemoryBytes: ["kind", "bytes"],
  availableBytes: ["kind", "bytes"],
  gpu: [
    "kind",
    "totalDeviceBytes",
    "gpuMemoryUtilization",
    "weightsBytes",
    "activationPeakBytes",
    "nonTorchBytes",
    "cudaGraphBytes",
  ],
} as const;
const MAX_BYTES = Number.MAX_SAFE_INTEGER;
const MAX_TOKENS = 2 ** 31 - 1;
/** The largest multiple of 128 the flag table takes (a 16-bit block size). */
const MAX_BLOCK_TOKENS = 65_408;

function checkBytes(value: unknown, field: string, min: number): void {
  checkInt(value, min, MAX_BYTES, field, `must be a whole number of bytes >= ${min}`);
}

function checkBudget(budget: unknown): void {
  checkObject(budget, "budget");
  checkOneOf(budget.kind, Object.keys(BUDGET_KEYS) as (keyof typeof BUDGET_KEYS)[], "budget.kind");
  checkKeys(budget, BUDGET_KEYS[budget.kind as keyof typeof BUDGET_KEYS], "budget");
  if (budget.kind !== "gpu") {
    checkBytes(budget.bytes, "budget.bytes", 0);
    return;
  }
  checkBytes(budget.totalDeviceBytes, "budget.totalDeviceBytes", 1);
  checkBytes(budget.weightsBytes, "budget.weightsBytes", 0);
  for (const f of ["activationPeakBytes", "nonTorchBytes", "cudaGraphBytes"] as const) {
    if (budget[f] !== undefined) checkBytes(budget[f], `budget.${f}`, 0);
  }
  const util: unknown = budget.gpuMemoryUtilization;
  if (util === undefined) return;
  checkNumber(util, "budget.gpuMemoryUtilization");
  const ok = Number.isFinite(util) && util > 0 && util <= 1;
  check(ok, "INVALID_ARGUMENT", "budget.gpuMemoryUtilization", util, "must be in (0, 1]", { min: 0, max: 1 });
}

function checkModel(model: unknown): void {
  checkObject(model, "model");
  checkInt(model.numHiddenLayers, 1, 10_000, "model.numHiddenLayers");
  for (const f of ["qkNopeHeadDim", "qkRopeHeadDim", "indexHeadDim", "slidingWindow"] as const) {
    checkInt(model[f], 1, 1 << 20, `model.${f}`);
  }
  checkInt(model.mtpLayers, 0, 64, "model.mtpLayers");
  const ratios: unknown = model.compressRatios;
  check(Array.isArray(ratios), "INVALID_TYPE", "model.compressRatios", ratios, "must be an array of ratios");
  const layers = model.numHiddenLayers as number;
  check(
    ratios.length >= layers,
    "INVALID_ARGUMENT",
    "model.compressRatios",
    ratios.length,
    `must have at least numHiddenLayers (${layers}) entries`,
    { min: layers },
  );
  for (const [i, r] of (ratios as unknown[]).entries()) checkOneOf(r, [0, 1, 4, 128], `model.compressRatios[${i}]`);
}

function checkSpeculative(spec: unknown, mtpLayers: number): void {
  if (spec === null || spec === undefined) return;
  checkObject(spec, "speculative");
  checkKeys(spec, ["method", "numSpeculativeTokens"], "speculative");
  checkOneOf(spec.method, ["mtp", "dspark"] as const, "speculative.method");
  checkInt(spec.numSpeculativeTokens, 1, 64, "speculative.numSpeculativeTokens");
  const ok = spec.method !== "mtp" || mtpLayers > 0;
  check(
    ok,
    "INVALID_ARGUMENT",
    "speculative.method",
    spec.method,
    "needs a checkpoint with MTP layers (mtpLayers > 0)",
  );
}

/** Checks `input` (throws ServerConfigError) and returns it with every default filled in. */
export function resolveVllmKvInput(input: unknown): Required<VllmKvInput> {
  checkObject(input, "input");
  checkKeys(input, KEYS, "");
  checkModel(input.model);
  // An explicit `undefined` takes the default, as an absent key does.
  const given = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  // inFlightRule's default is the current vLLM's (0.26 and later); older sizing is chosen by version (versions.ts).
  const v = {
    ...VLLM_DEFAULTS,
    inFlightRule: "concurrentBatches",
    speculative: null,
    numGpuBlocksOverride: null,
    ...given,
  } as Required<VllmKvInput>;
  checkInt(v.maxModelLen, 1, MAX_TOKENS, "maxModelLen");
  // Any block whose compressed pages hold whole entries (B / 128 whole); vLLM itself refuses those 256 does not divide.
  checkInt(v.blockSize, 128, MAX_BLOCK_TOKENS, "blockSize");
  check(v.blockSize % 128 === 0, "INVALID_ARGUMENT", "blockSize", v.blockSize, "must be a multiple of 128", {
    multipleOf: 128,
  });
  checkOneOf(v.kvCacheDtype, ["fp8", "fp8_e4m3", "fp8_ds_mla"], "kvCacheDtype");
  checkBoolean(v.fp4IndexerCache, "fp4IndexerCache");
  checkInt(v.maxNumBatchedTokens, 1, MAX_TOKENS, "maxNumBatchedTokens");
  checkBoolean(v.asyncScheduling, "asyncScheduling");
  checkInt(v.pipelineParallelSize, 1, 64, "pipelineParallelSize");
  checkBoolean(v.modelRunnerV2, "modelRunnerV2");
  checkSpeculative(v.speculative, v.model.mtpLayers);
  checkOneOf(v.inFlightRule, ["concurrentBatches", "batchedTokens"] as const, "inFlightRule");
  if (v.numGpuBlocksOverride !== null) checkInt(v.numGpuBlocksOverride, 1, MAX_TOKENS, "numGpuBlocksOverride");
  checkBudget(v.budget);
  return v;
}
