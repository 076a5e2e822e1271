/**
 * vLLM's server arguments that dsv4-kv reads for DeepSeek-V4, beside SGLang's table (server-flags.ts) and with the
 * same entry type: the value's type and range, the default, the help, what the setting touches, plus vLLM's
 * spellings (`--tensor-parallel-size`, `-tp`), the key vLLM stores it under (its EngineArgs field, the key of a
 * start-up log's `non-default args: {...}` dict) and how the value is written. Then the flags `vllm serve` accepts
 * that do not change the KV cache (listed as ignored) or that may change it in ways not modelled.
 *
 * Followed: the files of VLLM_FLAGS_SOURCE (docs/reference/vllm-flags.md is generated from this table and lists
 * them). Written from the declarations; no help text is copied.
 */
import { FLAG_ENTRY, type ServerFlag } from "./server-flags.js";

/** The vLLM code this table follows: each file, the commit read, and what it decides. */
export const VLLM_FLAGS_SOURCE = {
  repository: "vllm-project/vllm",
  files: [
    {
      path: "vllm/engine/arg_utils.py",
      commit: "99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b",
      decides:
        "`EngineArgs` and `add_cli_args`: a field's flag is its name in kebab-case; a bool field is a " +
        "BooleanOptionalAction, so `--no-NAME` exists; `max_model_len`, `max_num_batched_tokens` and " +
        "`kv_cache_memory_bytes` take human-readable integers",
    },
    {
      path: "vllm/utils/argparse_utils.py",
      commit: "c836a6feca5511c326b4369f6fd11cf72090665b",
      decides:
        "`FlexibleArgumentParser`: `_` and `-` are the same in a flag name; `--json-arg.key value` sets one key " +
        "of a JSON argument",
    },
  ],
} as const;

const { int, num, str, optBool } = FLAG_ENTRY;
const INT32_MAX = 2 ** 31 - 1;
const U16_MAX = 65535;

/**
 * How vLLM reads the value: `bool` is a BooleanOptionalAction (`--NAME`, `--no-NAME`, no value); `humanInt` an
 * integer that may carry a size suffix (`128k`); `json` one word of JSON, or its keys one by one (`--NAME.key v`).
 */
export type VllmValueForm = "bool" | "int" | "humanInt" | "float" | "str" | "json" | "list";

/** `kv`: read into the field. `unmodelled`: vLLM may change the KV cache with it; dsv4-kv does not model it. */
export type VllmFlagEffect = "kv" | "unmodelled" | "ignored";

export interface VllmServerFlag extends ServerFlag {
  /** vLLM's spellings as typed, the primary first (`--tensor-parallel-size`, `-tp`); none for an env switch. */
  spellings: readonly string[];
  /** vLLM's key: the EngineArgs field (`max_model_len`), or the environment variable of an env switch. */
  dest: string;
  form: VllmValueForm;
}

/** A `vllm serve` flag dsv4-kv accepts and does not read. */
export interface VllmOtherFlag {
  spellings: readonly string[];
  dest: string;
  form: VllmValueForm;
  effect: Exclude<VllmFlagEffect, "kv">;
}

function v<F extends ServerFlag>(flag: F, dest: string, form: VllmValueForm, spellings: readonly string[]) {
  return { ...flag, dest, form, spellings } as F & VllmServerFlag;
}

const flag = (dest: string) => `--${dest.replace(/_/g, "-")}`;

/**
 * The vLLM arguments the model reads, in the report's order. The field is ours (camelCase of vLLM's dest); the
 * spellings are vLLM's. Defaults are vLLM's, null where vLLM decides at start-up (the resolution says what it
 * picked and why).
 */
export const VLLM_SERVER_ARGS = {
  model: v(
    str("DeepSeek-V4-Flash", {
      nonEmpty: true,
      help: "the model (the positional MODEL of `vllm serve`): a preset, a Hugging Face id or a checkpoint folder",
      arg: "MODEL",
      touches: ["model", "pools", "capacity"],
    }),
    "model",
    "str",
    ["--model"],
  ),
  tensorParallelSize: v(
    int(1, U16_MAX, 1, {
      help: "tensor-parallel ranks (the latent KV head is replicated: each rank holds a whole cache)",
      touches: ["parallel", "budget"],
    }),
    "tensor_parallel_size",
    "int",
    ["--tensor-parallel-size", "-tp"],
  ),
  pipelineParallelSize: v(
    int(1, U16_MAX, 1, {
      help: "pipeline stages (each keeps a batch in flight: more tokens reserved per sliding group)",
      touches: ["parallel", "budget", "capacity"],
    }),
    "pipeline_parallel_size",
    "int",
    ["--pipeline-parallel-size", "-pp"],
  ),
  dataParallelSize: v(
    int(1, U16_MAX, 1, { help: "data-parallel replicas (each sizes its own cache)", touches: ["parallel"] }),
    "data_parallel_size",
    "int",
    ["--data-parallel-size", "-dp"],
  ),
  decodeContextParallelSize: v(
    int(1, U16_MAX, 1, {
      help: "decode context parallelism (DeepSeek-V4's sliding caches need 1)",
      touches: ["rules"],
    }),
    "decode_context_parallel_size",
    "int",
    ["--decode-context-parallel-size", "-dcp"],
  ),
  gpuMemoryUtilization: v(
    num(0, 1, true, 0.92, {
      help: "fraction of the device's total memory vLLM may use (weights, activations and the KV cache)",
      touches: ["budget", "capacity"],
    }),
    "gpu_memory_utilization",
    "float",
    [flag("gpu_memory_utilization")],
  ),
  kvCacheMemoryBytes: v(
    int(0, Number.MAX_SAFE_INTEGER, null, {
      help: "KV cache bytes per rank, used as given (no profiling, no utilization arithmetic)",
      arg: "BYTES",
      touches: ["budget", "capacity"],
    }),
    "kv_cache_memory_bytes",
    "humanInt",
    [flag("kv_cache_memory_bytes")],
  ),
  maxModelLen: v(
    int(-1, INT32_MAX, null, {
      help: "tokens one request may hold (default: the model's max positions; -1: the longest that fits)",
      touches: ["capacity", "rules"],
    }),
    "max_model_len",
    "humanInt",
    [flag("max_model_len")],
  ),
  maxNumSeqs: v(
    int(1, INT32_MAX, null, { help: "requests scheduled at once", touches: ["rules"] }),
    "max_num_seqs",
    "int",
    [flag("max_num_seqs")],
  ),
  maxNumBatchedTokens: v(
    int(1, INT32_MAX, null, {
      help: "tokens one scheduler step may hold (default 8192; every sliding group reserves the in-flight steps)",
      touches: ["capacity", "rules"],
    }),
    "max_num_batched_tokens",
    "humanInt",
    [flag("max_num_batched_tokens")],
  ),
  blockSize: v(
    int(1, U16_MAX, null, {
      help: "tokens per block of the full (MLA) group (DeepSeek-V4's backend picks 256)",
      touches: ["pools", "capacity", "rules"],
    }),
    "block_size",
    "int",
    [flag("block_size")],
  ),
  kvCacheDtype: v(
    str("auto", {
      help: "KV cache dtype: an fp8 spelling (fp8, fp8_e4m3, fp8_ds_mla) becomes fp8_ds_mla; auto fails for DSV4",
      touches: ["pools", "rules"],
    }),
    "kv_cache_dtype",
    "str",
    [flag("kv_cache_dtype")],
  ),
  speculativeConfig: v(
    str(null, {
      help: 'speculative decoding as JSON ({"method":"mtp","num_speculative_tokens":3}) or by key (--speculative-config.method mtp)',
      arg: "JSON",
      touches: ["speculative", "pools", "capacity", "rules"],
    }),
    "speculative_config",
    "json",
    [flag("speculative_config")],
  ),
  attentionConfig: v(
    str(null, {
      help: "attention options as JSON or by key; dsv4-kv reads use_fp4_indexer_cache (68 B indexer keys)",
      arg: "JSON",
      touches: ["pools", "capacity"],
    }),
    "attention_config",
    "json",
    [flag("attention_config")],
  ),
  enablePrefixCaching: v(
    optBool(null, { help: "prefix caching (hash granularity only; the sizing is the same)", touches: ["rules"] }),
    "enable_prefix_caching",
    "bool",
    [flag("enable_prefix_caching")],
  ),
  disableHybridKvCacheManager: v(
    optBool(false, {
      help: "one group per layer at full length: DeepSeek-V4's sliding and state caches stop being windows",
      touches: ["pools", "capacity", "rules"],
    }),
    "disable_hybrid_kv_cache_manager",
    "bool",
    [flag("disable_hybrid_kv_cache_manager")],
  ),
  asyncScheduling: v(
    optBool(null, {
      help: "overlap scheduling with execution (default on: one more step of tokens in flight)",
      touches: ["capacity"],
    }),
    "async_scheduling",
    "bool",
    [flag("async_scheduling")],
  ),
  enforceEager: v(
    optBool(false, { help: "no CUDA graphs (their memory estimate leaves the budget)", touches: ["budget"] }),
    "enforce_eager",
    "bool",
    [flag("enforce_eager")],
  ),
  numGpuBlocksOverride: v(
    int(1, INT32_MAX, null, { help: "the block count, replacing the one the budget gives", touches: ["capacity"] }),
    "num_gpu_blocks_override",
    "int",
    [flag("num_gpu_blocks_override")],
  ),
  useV2ModelRunner: v(
    optBool(false, {
      help: "env VLLM_USE_V2_MODEL_RUNNER: the V2 runner keeps PP + 1 batches in flight under async scheduling",
      env: "VLLM_USE_V2_MODEL_RUNNER",
      touches: ["capacity"],
    }),
    "VLLM_USE_V2_MODEL_RUNNER",
    "bool",
    [],
  ),
  allowLongMaxModelLen: v(
    optBool(false, {
      help:
        "env VLLM_ALLOW_LONG_MAX_MODEL_LEN: --max-model-len past the model's positions starts with a warning " +
        "instead of the refusal",
      env: "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
      touches: ["rules"],
    }),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "bool",
    [],
  ),
} as const;

export type VllmArgField = keyof typeof VLLM_SERVER_ARGS;

/** The vLLM fields in table order, as [field, entry] pairs. */
export const VLLM_ARG_ENTRIES: ReadonlyArray<readonly [VllmArgField, VllmServerFlag]> = Object.entries(
  VLLM_SERVER_ARGS,
) as Array<[VllmArgField, VllmServerFlag]>;

const o = (dest: string, form: VllmValueForm, effect: VllmOtherFlag["effect"] = "ignored", ...alias: string[]) => ({
  spellings: [flag(dest), ...alias],
  dest,
  form,
  effect,
});

/**
 * `vllm serve` flags accepted and not read. `unmodelled`: they can change the KV cache or its budget (offloading,
 * KV transfer, quantised weights of another size), which the report then says it left out.
 */
export const VLLM_OTHER_FLAGS: readonly VllmOtherFlag[] = [
  o("served_model_name", "list"),
  o("tokenizer", "str"),
  o("tokenizer_mode", "str"),
  o("tokenizer_revision", "str"),
  o("revision", "str"),
  o("code_revision", "str"),
  o("trust_remote_code", "bool"),
  o("dtype", "str"),
  o("seed", "int"),
  o("hf_config_path", "str"),
  o("hf_token", "str"),
  o("hf_overrides", "json", "unmodelled"),
  o("config_format", "str"),
  o("load_format", "str"),
  o("download_dir", "str"),
  o("safetensors_load_strategy", "str"),
  o("model_loader_extra_config", "json"),
  o("ignore_patterns", "list"),
  o("quantization", "str", "unmodelled", "-q"),
  o("max_logprobs", "int"),
  o("logprobs_mode", "str"),
  o("disable_sliding_window", "bool", "unmodelled"),
  o("disable_cascade_attn", "bool"),
  o("skip_tokenizer_init", "bool"),
  o("enable_prompt_embeds", "bool"),
  o("generation_config", "str"),
  o("override_generation_config", "json"),
  o("enable_sleep_mode", "bool"),
  o("model_impl", "str"),
  o("distributed_executor_backend", "str"),
  o("data_parallel_rank", "int", "ignored", "-dpn"),
  o("data_parallel_start_rank", "int", "ignored", "-dpr"),
  o("data_parallel_size_local", "int", "ignored", "-dpl"),
  o("data_parallel_address", "str", "ignored", "-dpa"),
  o("data_parallel_rpc_port", "int", "ignored", "-dpp"),
  o("data_parallel_backend", "str", "ignored", "-dpb"),
  o("data_parallel_hybrid_lb", "bool"),
  o("enable_expert_parallel", "bool"),
  o("all2all_backend", "str"),
  o("enable_dbo", "bool"),
  o("enable_eplb", "bool"),
  o("eplb_config", "json"),
  o("expert_placement_strategy", "str"),
  o("max_parallel_loading_workers", "int"),
  o("disable_custom_all_reduce", "bool"),
  o("worker_cls", "str"),
  o("worker_extension_cls", "str"),
  o("swap_space", "float"),
  o("cpu_offload_gb", "float", "unmodelled"),
  o("prefix_caching_hash_algo", "str"),
  o("calculate_kv_scales", "bool"),
  o("kv_sharing_fast_prefill", "bool", "unmodelled"),
  o("limit_mm_per_prompt", "json"),
  o("mm_processor_kwargs", "json"),
  o("mm_processor_cache_gb", "float"),
  o("language_model_only", "bool"),
  o("enable_lora", "bool", "unmodelled"),
  o("max_loras", "int"),
  o("max_lora_rank", "int"),
  o("otlp_traces_endpoint", "str"),
  o("collect_detailed_traces", "str"),
  o("max_num_partial_prefills", "int"),
  o("max_long_partial_prefills", "int"),
  o("long_prefill_token_threshold", "int"),
  o("scheduling_policy", "str"),
  o("enable_chunked_prefill", "bool"),
  o("disable_chunked_mm_input", "bool"),
  o("scheduler_cls", "str"),
  o("cudagraph_capture_sizes", "list"),
  o("cuda_graph_sizes", "list"),
  o("max_cudagraph_capture_size", "int"),
  o("compilation_config", "json", "ignored", "-O"),
  o("optimization_level", "str"),
  o("kv_transfer_config", "json", "unmodelled"),
  o("kv_events_config", "json"),
  o("kv_offloading_size", "float", "unmodelled"),
  o("kv_offloading_backend", "str", "unmodelled"),
  o("additional_config", "json"),
  o("structured_outputs_config", "json"),
  o("reasoning_parser", "str"),
  o("disable_log_stats", "bool"),
  o("aggregate_engine_logging", "bool"),
  o("enable_log_requests", "bool"),
  o("disable_log_requests", "bool"),
  o("attention_backend", "str"),
  o("moe_backend", "str"),
  o("mamba_cache_dtype", "str"),
  // The API server's own flags (vllm/entrypoints/openai/cli_args.py).
  o("host", "str"),
  o("port", "int"),
  o("uds", "str"),
  o("api_key", "str"),
  o("headless", "bool"),
  o("api_server_count", "int", "ignored", "-asc"),
  o("uvicorn_log_level", "str"),
  o("allowed_origins", "json"),
  o("chat_template", "str"),
  o("chat_template_content_format", "str"),
  o("default_chat_template_kwargs", "json"),
  o("enable_auto_tool_choice", "bool"),
  o("tool_call_parser", "str"),
  o("tool_parser_plugin", "str"),
  o("enable_prompt_tokens_details", "bool"),
  o("enable_force_include_usage", "bool"),
  o("enable_server_load_tracking", "bool"),
  o("response_role", "str"),
  o("ssl_keyfile", "str"),
  o("ssl_certfile", "str"),
  o("root_path", "str"),
  o("middleware", "list"),
  o("return_tokens_as_token_ids", "bool"),
  o("disable_frontend_multiprocessing", "bool"),
  o("disable_fastapi_docs", "bool"),
  o("enable_request_id_headers", "bool"),
  o("max_log_len", "int"),
  o("config", "str", "unmodelled"),
  // Multi-node and backend flags seen in DeepSeek-V4 recipes (packages/cli/test/fixtures/vllm-launch).
  o("nnodes", "int"),
  o("node_rank", "int"),
  o("master_addr", "str"),
  o("master_port", "int"),
  o("enable_flashinfer_autotune", "bool"),
  o("enable_ep_weight_filter", "bool"),
  o("gdn_prefill_backend", "str"),
  o("reasoning_config", "json"),
];

/** Every vLLM spelling dsv4-kv knows → its entry: a KV field's, or another flag's. */
export type VllmFlagLookup =
  | { kind: "kv"; field: VllmArgField; entry: VllmServerFlag }
  | { kind: "other"; entry: VllmOtherFlag };

const LOOKUP: ReadonlyMap<string, VllmFlagLookup> = new Map<string, VllmFlagLookup>([
  ...VLLM_ARG_ENTRIES.flatMap(([field, entry]) =>
    entry.spellings.map((s): [string, VllmFlagLookup] => [s, { kind: "kv", field, entry }]),
  ),
  ...VLLM_OTHER_FLAGS.flatMap((entry) =>
    entry.spellings.map((s): [string, VllmFlagLookup] => [s, { kind: "other", entry }]),
  ),
]);
if (
  LOOKUP.size !==
  VLLM_ARG_ENTRIES.reduce((n, [, e]) => n + e.spellings.length, 0) +
    VLLM_OTHER_FLAGS.reduce((n, e) => n + e.spellings.length, 0)
)
  throw new Error("vllm-flags: a spelling is listed twice");

/** Every spelling, as typed with its dashes (`--max-model-len`, `-tp`). */
export const VLLM_FLAG_SPELLINGS: readonly string[] = [...LOOKUP.keys()];

/**
 * The entry a spelling names, as vLLM's parser reads it: `_` and `-` are the same after the leading dashes. Exact
 * spellings only; `vllmFlagByPrefix` does argparse's abbreviations.
 */
export function vllmFlag(spelling: string): VllmFlagLookup | null {
  const lead = spelling.startsWith("--") ? "--" : "-";
  return LOOKUP.get(lead + spelling.slice(lead.length).replace(/_/g, "-")) ?? null;
}

/**
 * argparse (allow_abbrev, on in vLLM's parser) takes an unambiguous prefix of a long flag: `--kv-cache-memory`
 * names `--kv-cache-memory-bytes`. Returns the one match, every candidate when several match, or none.
 */
export function vllmFlagByPrefix(spelling: string): { match: VllmFlagLookup | null; candidates: string[] } {
  const exact = vllmFlag(spelling);
  if (exact) return { match: exact, candidates: [] };
  if (!spelling.startsWith("--")) return { match: null, candidates: [] };
  const typed = `--${spelling.slice(2).replace(/_/g, "-")}`;
  const candidates = VLLM_FLAG_SPELLINGS.filter((s) => s.startsWith("--") && s.startsWith(typed));
  return { match: candidates.length === 1 ? LOOKUP.get(candidates[0]!)! : null, candidates };
}

/** Environment variables vLLM reads a modelled switch from → the field. */
export const VLLM_ENV_SWITCHES: Readonly<Record<string, VllmArgField>> = Object.fromEntries(
  VLLM_ARG_ENTRIES.filter(([, f]) => f.env !== undefined).map(([field, f]) => [f.env!, field]),
);
