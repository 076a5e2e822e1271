/**
 * The `check --compare-engines` part of the `--json` report: one SGLang deployment, the equivalent vLLM input, both
 * engines' capacity and memory per cache kind, and every difference in bytes per token as a named cause with its
 * size. docs/reference/engines-compared.md derives the figures and says how the deployment is mapped.
 */
import { z } from "zod";

const count = z.int().nonnegative();
const bytes = z.number().describe("bytes");
const perToken = z.number().describe("bytes per token of context (a double)");

/** The cache kinds both engines store, named once. */
export const ENGINE_CACHE_KINDS = [
  "swa",
  "c4-main",
  "c4-indexer",
  "c4-attention-state",
  "c4-indexer-state",
  "c128-main",
  "c128-state",
  "draft",
] as const;
export type EngineCacheKind = (typeof ENGINE_CACHE_KINDS)[number];

/** The named causes of a difference, in the order reports list them. */
export const ENGINE_CAUSE_IDS = [
  "page-layout",
  "layer-count",
  "window-vs-pool",
  "sliding-in-flight",
  "block-rounding",
  "sglang-page-rounding",
  "page-stride",
  "unused-budget",
] as const;
export type EngineCauseId = (typeof ENGINE_CAUSE_IDS)[number];

const KindSchema = z.enum(ENGINE_CACHE_KINDS).describe("the cache kind");

const EngineKindSchema = z.strictObject({
  layers: count.describe("layers (caches) of this kind; 0 when the engine stores none"),
  bytes: bytes.describe("bytes of this kind: SGLang's pools; vLLM's blocks at full load (concurrency × per request)"),
  bytesPerToken: perToken.describe("bytes of this kind per token of capacity"),
  bytesPerHeldToken: z
    .number()
    .nullable()
    .describe("bytes per token (or state row) one layer's cache holds: page bytes / tokens per page; null if none"),
  heldTokensPerToken: z
    .number()
    .nullable()
    .describe("tokens (or rows) one layer holds per token of capacity, averaged over layers; null if none"),
});

const KindComparisonSchema = z.strictObject({
  kind: KindSchema,
  sglang: EngineKindSchema,
  vllm: EngineKindSchema,
  deltaBytesPerToken: perToken.describe("vLLM − SGLang"),
});

const CauseSchema = z.strictObject({
  id: z.enum(ENGINE_CAUSE_IDS).describe("what makes the engines differ (docs/reference/engines-compared.md)"),
  kind: KindSchema.nullable().describe("the cache kind it concerns; null for the pool as a whole"),
  bytesPerToken: perToken.describe("its share of vLLM − SGLang bytes per token (negative: vLLM spends less)"),
  text: z.string().describe("the cause in words, with the figures of both engines"),
});

const MappingSchema = z.strictObject({
  model: z.string().describe("the model both engines serve"),
  tpSize: count.describe("tensor-parallel size; both engines replicate the one KV head on every rank"),
  contextLength: count.describe("SGLang --context-length = vLLM --max-model-len"),
  blockSize: count.describe("SGLang --page-size (resolved) = vLLM --block-size"),
  kvCacheDtype: z
    .strictObject({
      sglang: z.string().describe("SGLang's resolved --kv-cache-dtype"),
      vllm: z.string().describe("the cache layout vLLM uses for it"),
    })
    .describe("the KV dtype on each engine"),
  fp4IndexerCache: z.boolean().describe("SGLang's FP4 indexer = vLLM's use_fp4_indexer_cache"),
  pipelineParallelSize: count.describe("SGLang --pp-size = vLLM --pipeline-parallel-size"),
  maxNumBatchedTokens: count.describe("vLLM --max-num-batched-tokens (--compare-max-num-batched-tokens)"),
  speculative: z
    .strictObject({
      sglang: z.string().describe("SGLang's algorithm and draft tokens"),
      vllm: z
        .strictObject({
          method: z.enum(["mtp", "dspark"]).describe("the speculative-config method"),
          numSpeculativeTokens: count.describe("num_speculative_tokens: SGLang's draft tokens − 1"),
        })
        .nullable()
        .describe("vLLM --speculative-config, null without speculation"),
    })
    .describe("EAGLE maps to MTP, DSPARK to dspark; num_speculative_tokens = SGLang's draft tokens − 1"),
  budget: z
    .strictObject({
      rule: z
        .enum(["same-kv-bytes", "gpu-memory-utilization"])
        .describe("same-kv-bytes: vLLM gets SGLang's KV budget; gpu-memory-utilization: vLLM's own arithmetic"),
      sglangBytes: bytes.describe("SGLang's KV budget per worker"),
      vllmBytes: bytes.describe("vLLM's available KV cache memory"),
      gpuMemoryUtilization: z.number().nullable().describe("vLLM --gpu-memory-utilization, null under same-kv-bytes"),
      overheadBytes: bytes
        .nullable()
        .describe("activations, CUDA graphs, non-torch memory vLLM subtracts; null if n/a"),
      text: z.string().describe("how the budget was equated, in words"),
    })
    .describe("mem-fraction-static and gpu-memory-utilization are different budgets: how they were equated"),
});

const SglangSideSchema = z.strictObject({
  tokens: count.describe("full tokens (max_total_num_tokens)"),
  requestsAtContextLength: z.number().describe("min(max running requests, tokens / context length)"),
  maxRunningRequests: count.describe("SGLang's max running requests per worker"),
  availableBytes: bytes.describe("SGLang's KV budget per worker"),
  unusedBytes: bytes.describe("the budget less what the pools allocate"),
  bytesPerToken: perToken.describe("the budget / tokens"),
});

const VllmSideSchema = z.strictObject({
  tokens: count.describe('"GPU KV cache size": int(concurrency × max_model_len)'),
  maxConcurrency: z.number().describe("num_gpu_blocks / blocks per request (a double)"),
  numGpuBlocks: count.describe("blocks of the one pool: available // stride"),
  blocksPerRequest: count.describe("blocks one request of max_model_len takes, over every group"),
  blockStrideBytes: bytes.describe("the largest group's bytes per block: every block's size"),
  groups: count.describe("KV cache groups sharing the one pool"),
  poolBytes: bytes.describe("num_gpu_blocks × stride"),
  availableBytes: bytes.describe("vLLM's available KV cache memory"),
  startupCheckPasses: z.boolean().describe("vLLM's start-up check that one request of max_model_len fits"),
  printed: z.array(z.string()).describe("the lines vLLM prints at start-up, as it prints them"),
  bytesPerToken: perToken.nullable().describe("the budget / (concurrency × max_model_len); null with no block"),
});

export const EnginesComparisonSchema = z.strictObject({
  mapping: MappingSchema.describe("the SGLang deployment's inputs and their vLLM equivalents"),
  sglang: SglangSideSchema,
  vllm: VllmSideSchema,
  kinds: z.array(KindComparisonSchema).describe("memory per cache kind on both engines"),
  stridePaddingBytes: bytes.describe("vLLM: bytes of blocks that smaller groups leave unused at full load"),
  causes: z.array(CauseSchema).describe("every difference in bytes per token, each with its size"),
  deltaBytesPerToken: perToken
    .nullable()
    .describe("vLLM − SGLang bytes per token: the sum of the causes; null when vLLM holds no block"),
});

export type EnginesComparison = z.output<typeof EnginesComparisonSchema>;
