/**
 * The vLLM rules for DeepSeek-V4, in one table (docs/reference/vllm-kv-cache.md §14): vLLM's own start-up refusals
 * (each names the vLLM code that enforces it) and the settings vLLM accepts that waste or endanger the cache, each
 * with its cost in blocks or tokens where it has one and the fix. `config` rules run before sizing (an error there
 * leaves nothing to size); `sized` rules judge the plan.
 */
import { type ErrorCode, formatMessage } from "@dsv4-kv/errors";
import type { VllmArgValues, VllmResolvedArgs } from "./args.js";
import { blocksPerRequest } from "./blocks-per-request.js";
import { type VllmDerivedMaxLenModel, vllmDerivedMaxModelLen } from "./derived-max-len.js";
import type { VllmKvInput } from "./inputs.js";
import type { VllmKvPlan } from "./model.js";
import { printedFigures } from "./printed.js";
import type { VllmVersionBehaviour } from "./versions.js";

export type VllmSeverity = "error" | "warning";

export interface VllmRuleModel extends VllmDerivedMaxLenModel {
  mtpLayers: number;
  dsparkBlockSize: number | null;
}

export interface VllmRuleContext {
  given: VllmArgValues;
  args: VllmResolvedArgs;
  model: VllmRuleModel;
  version: VllmVersionBehaviour;
  /** Null in the `config` stage. */
  plan: VllmKvPlan | null;
  /** The plan with some inputs changed, for a cost. */
  replan: (change: Partial<VllmKvInput>) => VllmKvPlan;
}

/** What a finding costs: blocks per request, tokens of the printed "GPU KV cache size", bytes. */
export interface VllmCost {
  blocksPerRequest?: number;
  kvCacheSizeTokens?: number;
  bytes?: number;
}

export interface VllmIssue {
  rule: VllmRuleId;
  severity: VllmSeverity;
  code: ErrorCode;
  field: string;
  value: unknown;
  params: Record<string, unknown>;
  message: string;
  fix: string;
  cost: VllmCost | null;
}

type Finding = Omit<VllmIssue, "rule" | "severity" | "fix" | "message"> & { text: string };

interface VllmRuleInfo {
  severity: VllmSeverity;
  stage: "config" | "sized";
  summary: string;
  /** The vLLM code that refuses (file, function); null: vLLM starts, and dsv4-kv tells. */
  enforcedBy: string | null;
  fix: string;
  check: (ctx: VllmRuleContext) => Finding | null;
}

const KV_UTILS = "vllm/v1/core/kv_cache_utils.py, _check_enough_kv_cache_memory";
/** The one kernel block size the DeepSeek-V4 FlashMLA and indexer backends declare; a larger block is split. */
const KERNEL_BLOCK_TOKENS = 256;
const f = (
  field: string,
  value: unknown,
  code: ErrorCode,
  text: string,
  params = {},
  cost: VllmCost | null = null,
) => ({
  field,
  value,
  code,
  text,
  params,
  cost,
});

/** Tokens the printed figure would gain with `bpr` blocks per request instead of the plan's. */
function tokensWith(plan: VllmKvPlan, bpr: number): number {
  return (
    printedFigures(plan.numGpuBlocks, bpr, plan.input.maxModelLen).kvCacheSizeTokens - plan.printed.kvCacheSizeTokens
  );
}

function inFlightSlack(ctx: VllmRuleContext): Finding | null {
  const plan = ctx.plan!;
  if (plan.numGpuBlocks === 0) return null;
  const bare = blocksPerRequest(plan.grouping.groups, { ...plan.request, inFlightTokens: 0 }).total;
  const slack = plan.blocksPerRequest.total - bare;
  const context = plan.blocksPerRequest.perGroup[0] ?? 0;
  if (slack <= context) return null;
  const inFlight = plan.request.inFlightTokens;
  return f(
    "maxNumBatchedTokens",
    ctx.args.maxNumBatchedTokens,
    "NOT_APPLICABLE",
    `every sliding group reserves the ${inFlight} tokens in flight (max_concurrent_batches × --max-num-batched-tokens ` +
      `${ctx.args.maxNumBatchedTokens}): ${slack} of ${plan.blocksPerRequest.total} blocks per request, more than the ` +
      `${context} blocks of the request's context`,
    { inFlightTokens: inFlight, slackBlocks: slack, contextBlocks: context },
    { blocksPerRequest: slack, kvCacheSizeTokens: tokensWith(plan, bare) },
  );
}

function blockSize512(ctx: VllmRuleContext): Finding | null {
  const plan = ctx.plan!;
  if (ctx.args.blockSize === 256) return null;
  const at256 = ctx.replan({ blockSize: 256 });
  return f(
    "blockSize",
    ctx.args.blockSize,
    "PAGE_SIZE",
    `--block-size ${ctx.args.blockSize} makes a block of the shared pool ${plan.grouping.blockStrideBytes} B ` +
      `(${at256.grouping.blockStrideBytes} B at 256)`,
    { strideBytes: plan.grouping.blockStrideBytes, strideBytesAt256: at256.grouping.blockStrideBytes },
    { kvCacheSizeTokens: at256.printed.kvCacheSizeTokens - plan.printed.kvCacheSizeTokens },
  );
}

function multiModuleMtp(ctx: VllmRuleContext): Finding | null {
  const plan = ctx.plan!;
  const extra = plan.request.extraRetainedTokens;
  if (extra === 0) return null;
  const bare = blocksPerRequest(plan.grouping.groups, { ...plan.request, extraRetainedTokens: 0 }).total;
  return f(
    "speculativeConfig.num_speculative_tokens",
    ctx.args.speculative!.numSpeculativeTokens,
    "DRAFT_TOKENS",
    `multi-module MTP (${plan.draftLayers} draft layers) keeps ${extra} more tokens in every sliding window`,
    { extraRetainedTokens: extra, draftLayers: plan.draftLayers },
    { blocksPerRequest: plan.blocksPerRequest.total - bare, kvCacheSizeTokens: tokensWith(plan, bare) },
  );
}

function overrideOverBudget(ctx: VllmRuleContext): Finding | null {
  const plan = ctx.plan!;
  const override = plan.input.numGpuBlocksOverride;
  if (override === null || plan.poolBytes <= plan.budget.availableBytes) return null;
  const over = plan.poolBytes - plan.budget.availableBytes;
  return f(
    "numGpuBlocksOverride",
    override,
    "NOT_ENOUGH_MEMORY",
    `--num-gpu-blocks-override ${override} allocates ${plan.poolBytes} B, ${over} B more than the ` +
      `${plan.budget.availableBytes} B the budget leaves: the allocation can run out of memory`,
    { poolBytes: plan.poolBytes, availableBytes: plan.budget.availableBytes },
    { bytes: over },
  );
}

function admission(ctx: VllmRuleContext): Finding | null {
  const plan = ctx.plan!;
  if (plan.admission.passes || plan.budget.availableBytes <= 0) return null;
  const est = plan.admission.estimatedMaxModelLen;
  return f(
    "maxModelLen",
    plan.input.maxModelLen,
    "NOT_ENOUGH_MEMORY",
    `one request of --max-model-len ${plan.input.maxModelLen} needs ${plan.admission.bytesNeeded} B of KV cache at ` +
      `vLLM's start-up price, more than the ${plan.budget.availableBytes} B available; the longest that fits is ${est}`,
    { bytesNeeded: plan.admission.bytesNeeded, availableBytes: plan.budget.availableBytes, estimatedMaxModelLen: est },
    { bytes: plan.admission.bytesNeeded - plan.budget.availableBytes },
  );
}

function noMemory(ctx: VllmRuleContext): Finding | null {
  const plan = ctx.plan!;
  if (plan.budget.availableBytes > 0 || plan.input.numGpuBlocksOverride !== null) return null;
  return f(
    "budget",
    plan.budget.availableBytes,
    "NO_MEMORY",
    `the budget leaves ${plan.budget.availableBytes} B for the KV cache: vLLM refuses to start`,
    { availableBytes: plan.budget.availableBytes, nonKvBytes: plan.budget.nonKvBytes },
  );
}

function speculativeChecks(ctx: VllmRuleContext, method: "mtp" | "dspark"): VllmRuleContext["args"]["speculative"] {
  const s = ctx.args.speculative;
  return s !== null && s.method === method ? s : null;
}

const allowLong = (ctx: VllmRuleContext) => ctx.given.allowLongMaxModelLen === true;
const pastPositions = (ctx: VllmRuleContext) => ctx.args.maxModelLen > vllmDerivedMaxModelLen(ctx.model).maxTokens;

/**
 * vLLM compares a given length with the derived one strictly (equal passes); the switch makes it a warning. The
 * derived length is max_position_embeddings unless the rope scaling changes it (vllmDerivedMaxModelLen).
 */
function longMaxModelLen(ctx: VllmRuleContext): Finding {
  const derived = vllmDerivedMaxModelLen(ctx.model);
  const max = derived.maxTokens;
  const why = derived.ropeDetail === null ? "" : ` (vLLM's length from rope_scaling ${derived.ropeDetail})`;
  return f(
    "maxModelLen",
    ctx.args.maxModelLen,
    "INVALID_ARGUMENT",
    `--max-model-len ${ctx.args.maxModelLen} is more than the model's ${max} positions${why}` +
      (allowLong(ctx) ? " (VLLM_ALLOW_LONG_MAX_MODEL_LEN lets it start; vLLM warns)" : ""),
    { max, key: derived.key },
  );
}

export const VLLM_RULES = {
  "VL-R1": {
    severity: "error",
    stage: "config",
    summary: "DeepSeek-V4 runs with an fp8 KV cache (every fp8 spelling becomes fp8_ds_mla)",
    enforcedBy:
      "vllm/models/deepseek_v4/attention.py, the DeepSeek-V4 attention layer's __init__ (asserts an fp8 cache dtype)",
    fix: "pass --kv-cache-dtype fp8",
    check: (ctx) =>
      ctx.args.kvCacheDtype.startsWith("fp8")
        ? null
        : f(
            "kvCacheDtype",
            ctx.args.kvCacheDtype,
            "KV_LAYOUT",
            `--kv-cache-dtype ${ctx.args.kvCacheDtype}: DeepSeek-V4's attention layer accepts only an fp8 cache`,
          ),
  },
  "VL-R2": {
    severity: "error",
    stage: "config",
    summary: "the block size is a multiple of the 256-token kernel block DeepSeek-V4's backends share",
    enforcedBy:
      "vllm/v1/worker/utils.py, select_common_block_size (the DeepSeek-V4 FlashMLA and indexer backends list only 256)",
    fix: "pass --block-size 256 (or leave it unset); a multiple of 256 also starts, at a larger stride (VL-B2)",
    check: (ctx) =>
      ctx.args.blockSize % KERNEL_BLOCK_TOKENS === 0
        ? null
        : f(
            "blockSize",
            ctx.args.blockSize,
            "PAGE_SIZE",
            `--block-size ${ctx.args.blockSize}: DeepSeek-V4's attention and indexer kernels take ` +
              `${KERNEL_BLOCK_TOKENS}-token blocks, and ${KERNEL_BLOCK_TOKENS} does not divide it ` +
              "(vLLM: no common block size)",
            { kernelBlockSizes: [KERNEL_BLOCK_TOKENS] },
          ),
  },
  "VL-R6": {
    severity: "error",
    stage: "config",
    summary: "MTP needs a checkpoint with MTP layers",
    enforcedBy:
      "vllm/config/speculative.py, SpeculativeConfig.__post_init__ (the MTP draft's n_predict is the checkpoint's " +
      "num_nextn_predict_layers; 0 fails its divisibility check)",
    fix: "use a checkpoint with MTP layers, or another method",
    check: (ctx) =>
      speculativeChecks(ctx, "mtp") === null || ctx.model.mtpLayers > 0
        ? null
        : f("speculativeConfig.method", "mtp", "INVALID_ARGUMENT", "MTP on a checkpoint without MTP layers", {
            mtpLayers: 0,
          }),
  },
  "VL-R7": {
    severity: "error",
    stage: "config",
    summary: "MTP drafts at most the checkpoint's MTP layers, or a multiple of them (the layers are re-run in turn)",
    enforcedBy:
      "vllm/config/speculative.py, SpeculativeConfig.__post_init__ (num_speculative_tokens past n_predict must be " +
      "divisible by it)",
    fix: "num_speculative_tokens at most the checkpoint's MTP layers, or a multiple of them",
    check: (ctx) => {
      const s = speculativeChecks(ctx, "mtp");
      const layers = ctx.model.mtpLayers;
      if (s === null || layers === 0) return null;
      const k = s.numSpeculativeTokens;
      if (k <= layers || k % layers === 0) return null;
      return f(
        "speculativeConfig.num_speculative_tokens",
        k,
        "DRAFT_TOKENS",
        `MTP with ${k} speculative tokens on a checkpoint of ${layers} MTP layers: more tokens than layers must be ` +
          "a multiple of the layers",
        { mtpLayers: layers },
      );
    },
  },
  "VL-R5": {
    severity: "error",
    stage: "config",
    summary: "max_model_len is at most the model's max positions (unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set)",
    enforcedBy: "vllm/config/model.py, _get_and_verify_max_len (a given length above the derived one is refused)",
    fix: "lower --max-model-len to the model's max_position_embeddings (or its rope_scaling length, when that differs)",
    check: (ctx) => (allowLong(ctx) || !pastPositions(ctx) ? null : longMaxModelLen(ctx)),
  },
  "VL-L1": {
    severity: "warning",
    stage: "config",
    summary: "max_model_len past the model's positions, let through by VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    enforcedBy: null,
    fix:
      "lower --max-model-len to the model's max_position_embeddings, or its rope_scaling length when that differs " +
      "(the positions past it were not trained)",
    check: (ctx) => (allowLong(ctx) && pastPositions(ctx) ? longMaxModelLen(ctx) : null),
  },
  "VL-R3": {
    severity: "error",
    stage: "sized",
    summary: "the budget leaves memory for the KV cache",
    enforcedBy: `${KV_UTILS} (no memory for the cache blocks)`,
    fix: "raise --gpu-memory-utilization, shard the weights further (--tensor-parallel-size), or pass --kv-cache-memory-bytes",
    check: noMemory,
  },
  "VL-R4": {
    severity: "error",
    stage: "sized",
    summary: "one request of max_model_len fits, at vLLM's start-up price",
    enforcedBy: `${KV_UTILS} (the estimate: _estimate_max_model_len_from_groups)`,
    fix: "lower --max-model-len to the estimate (or pass -1), lower --max-num-batched-tokens, or give more memory",
    check: admission,
  },
  "VL-O1": {
    severity: "warning",
    stage: "sized",
    summary: "--num-gpu-blocks-override fits the budget",
    enforcedBy: null,
    fix: "drop --num-gpu-blocks-override, or lower it to what the budget gives",
    check: overrideOverBudget,
  },
  "VL-B1": {
    severity: "warning",
    stage: "sized",
    summary: "the tokens in flight cost the sliding groups no more than the context costs the full group",
    enforcedBy: null,
    fix: "lower --max-num-batched-tokens (each sliding group reserves it once per concurrent batch)",
    check: inFlightSlack,
  },
  "VL-B2": {
    severity: "warning",
    stage: "sized",
    summary: "--block-size 256: another size sets a larger stride for every group",
    enforcedBy: null,
    fix: "pass --block-size 256 (or leave it unset)",
    check: blockSize512,
  },
  "VL-M1": {
    severity: "warning",
    stage: "sized",
    summary: "multi-module MTP keeps K − 1 more tokens in every sliding window",
    enforcedBy: null,
    fix: "fewer speculative tokens, or accept the blocks",
    check: multiModuleMtp,
  },
  "VL-S1": {
    severity: "warning",
    stage: "config",
    summary: "MTP drafts no more tokens than the checkpoint has MTP layers",
    enforcedBy: null,
    fix: "num_speculative_tokens at most the checkpoint's MTP layers (1 for DeepSeek-V4-Flash), or measure acceptance",
    check: (ctx) => {
      const s = speculativeChecks(ctx, "mtp");
      const layers = ctx.model.mtpLayers;
      if (s === null || layers === 0 || s.numSpeculativeTokens <= layers) return null;
      return f(
        "speculativeConfig.num_speculative_tokens",
        s.numSpeculativeTokens,
        "DRAFT_TOKENS",
        `MTP with ${s.numSpeculativeTokens} speculative tokens re-runs the checkpoint's ${layers} MTP layer(s): ` +
          "later drafts are accepted less often (vLLM warns of it too)",
        { mtpLayers: layers },
      );
    },
  },
  "VL-S2": {
    severity: "warning",
    stage: "config",
    summary: "DSpark drafts as many tokens as the checkpoint's DSpark block size",
    enforcedBy: null,
    fix: "num_speculative_tokens equal to the checkpoint's dspark_block_size",
    check: (ctx) => {
      const s = speculativeChecks(ctx, "dspark");
      const gamma = ctx.model.dsparkBlockSize;
      if (s === null || gamma === null || s.numSpeculativeTokens === gamma) return null;
      return f(
        "speculativeConfig.num_speculative_tokens",
        s.numSpeculativeTokens,
        "DRAFT_TOKENS",
        `DSpark with ${s.numSpeculativeTokens} speculative tokens; the checkpoint's DSpark block size is ${gamma}: ` +
          (s.numSpeculativeTokens > gamma ? "drafts past it are never accepted" : "part of each draft block is unused"),
        { dsparkBlockSize: gamma },
      );
    },
  },
  "VL-H1": {
    severity: "warning",
    stage: "config",
    summary: "the hybrid KV cache manager is on (the figures model it)",
    enforcedBy: null,
    fix: "drop --disable-hybrid-kv-cache-manager",
    check: (ctx) =>
      ctx.given.disableHybridKvCacheManager !== true
        ? null
        : f(
            "disableHybridKvCacheManager",
            true,
            "NOT_APPLICABLE",
            "--disable-hybrid-kv-cache-manager sizes every sliding and state cache for the whole context: the " +
              "figures here (hybrid manager on) do not describe that server, which holds far fewer tokens",
          ),
  },
  "VL-P1": {
    severity: "warning",
    stage: "config",
    summary: "--kv-cache-memory-bytes and --gpu-memory-utilization are not both given",
    enforcedBy: null,
    fix: "drop --gpu-memory-utilization (vLLM ignores it when --kv-cache-memory-bytes is given)",
    check: (ctx) =>
      ctx.given.kvCacheMemoryBytes == null || ctx.given.gpuMemoryUtilization == null
        ? null
        : f(
            "gpuMemoryUtilization",
            ctx.given.gpuMemoryUtilization,
            "NOT_APPLICABLE",
            "--gpu-memory-utilization has no effect with --kv-cache-memory-bytes: the cache takes the bytes given",
          ),
  },
  "VL-D1": {
    severity: "warning",
    stage: "config",
    summary: "decode context parallelism is 1 (the sizing modelled)",
    enforcedBy: null,
    fix: "leave --decode-context-parallel-size at 1, or read the figures as those of DCP 1",
    check: (ctx) =>
      (ctx.given.decodeContextParallelSize ?? 1) === 1
        ? null
        : f(
            "decodeContextParallelSize",
            ctx.given.decodeContextParallelSize,
            "NOT_APPLICABLE",
            "decode context parallelism splits the full group's context over ranks; dsv4-kv sizes DCP 1",
          ),
  },
  "VL-V1": {
    severity: "warning",
    stage: "config",
    summary: "the vLLM version's sizing is confirmed by a public log",
    enforcedBy: null,
    fix: "read the figures as an estimate, or reconcile a start-up log of this version",
    check: (ctx) =>
      ctx.version.confirmed
        ? null
        : f("vllmVersion", ctx.version.id, "NOT_APPLICABLE", `vLLM ${ctx.version.id}: ${ctx.version.evidence}`),
  },
} as const satisfies Record<string, VllmRuleInfo>;

export type VllmRuleId = keyof typeof VLLM_RULES;

/** The rules of `stage`, in table order, as issues. */
export function vllmIssues(ctx: VllmRuleContext, stage: "config" | "sized"): VllmIssue[] {
  const out: VllmIssue[] = [];
  for (const [rule, info] of Object.entries(VLLM_RULES) as Array<[VllmRuleId, VllmRuleInfo]>) {
    if (info.stage !== stage) continue;
    const found = info.check(ctx);
    if (found === null) continue;
    const { text, ...rest } = found;
    const message = formatMessage({ field: "", value: found.value, rule: text, params: found.params });
    out.push({ rule, severity: info.severity, fix: info.fix, message, ...rest });
  }
  return out;
}
