/**
 * The flags of `dsv4-kv check`: server arguments in upstream kebab-case, environment switches, the budget and
 * the output. This table drives the command-line parser, the config-file keys, every value's type and range, and
 * the help text. Values outside a range are refused here, by the flag's name, before server-config sees them.
 */
import { type FlagSpec, type FlagTable, choice } from "../commands/flags.js";

const INT32_MAX = 2 ** 31 - 1;
/** Draft tokens, steps and block sizes: ragged ids are 16 bits. */
const U16_MAX = 65535;
/** Any GiB figure above a PiB is a typo. */
const GIB_MAX = 2 ** 20;

const str = (help: string, arg = "S"): FlagSpec => ({ type: "string", help, arg });
const bool = (help: string): FlagSpec => ({ type: "bool", help });
const int = (min: number, max: number, help: string): FlagSpec => ({ type: "int", min, max, help });
const num = (min: number, max: number, help: string, minExclusive = false): FlagSpec => ({
  type: "number",
  min,
  max,
  minExclusive,
  help,
});

export const SERVER_FLAGS: FlagTable = {
  model: str(
    "the model: a preset (DeepSeek-V4-Flash (default), DeepSeek-V4-Flash-0731, DeepSeek-V4-Pro, any case), a " +
      "Hugging Face id (deepseek-ai/DeepSeek-V4-Flash, with -FP8/-NVFP4/… suffixes), a checkpoint folder or a " +
      "config.json path",
    "MODEL",
  ),
  "page-size": int(1, INT32_MAX, "--page-size (DSV4 always uses 256 on CUDA; other values are corrected)"),
  "attention-backend": str("--attention-backend (forced to dsv4)"),
  "swa-full-tokens-ratio": num(0, 1, "SWA:full token ratio (DSV4 default 0.1)", true),
  "max-running-requests": int(1, INT32_MAX, "max running requests (DSV4 default 256)"),
  "kv-cache-dtype": str("auto (→ fp8_e4m3) or fp8_e4m3"),
  "mem-fraction-static": num(0, 1, "static memory fraction (check default 0.85)", true),
  "max-total-tokens": int(1, INT32_MAX, "cap on the full-token capacity"),
  "context-length": int(1, INT32_MAX, "context length (default: the model's max positions)"),
  "speculative-algorithm": str("EAGLE (default) | DSPARK | none"),
  "speculative-num-steps": int(
    1,
    U16_MAX,
    "EAGLE steps (default 3; follows the draft tokens when only those are given)",
  ),
  "speculative-eagle-topk": int(1, U16_MAX, "EAGLE top-k (default 1; DSV4 requires 1)"),
  "speculative-num-draft-tokens": int(1, U16_MAX, "verify window (default 4 = steps + 1)"),
  "speculative-dspark-block-size": int(1, U16_MAX, "DSpark gamma (verify window gamma + 1)"),
  "speculative-adaptive": bool("adaptive speculative steps"),
  "speculative-adaptive-candidates": {
    type: "intList",
    min: 1,
    max: U16_MAX,
    help: "adaptive step candidates, comma-separated (default 1,3,5,7 [assumed])",
  },
  "max-speculative-num-draft-tokens": int(1, U16_MAX, "the algorithm's declared maximum draft tokens"),
  "disaggregation-mode": choice(["null", "prefill", "decode"], "PD disaggregation mode"),
  "disaggregation-decode-extra-slots": int(0, INT32_MAX, "extra request slots in PD decode"),
  "enable-hisparse": bool("HiSparse (c4 KV shrinks by the host-to-device ratio)"),
  "hisparse-host-to-device-ratio": num(1, U16_MAX, "HiSparse ratio H (default 2)"),
  "dsv4-attn-backend": str("e.g. trtllm (Blackwell only)"),
  "gpu-arch": str("GPU architecture (default sm90 = H200)"),
  platform: choice(["cuda", "hip", "npu"], "the accelerator platform (default cuda)"),
  "tp-size": int(1, U16_MAX, "tensor-parallel ranks (check default 8: weights are split 8 ways)"),
  "pp-size": int(1, U16_MAX, "pipeline-parallel stages"),
  "dp-size": int(1, U16_MAX, "data-parallel size"),
  "enable-dp-attention": bool("attention DP (max running requests are divided by --dp-size)"),
  "chunked-prefill-size": int(-1, INT32_MAX, "chunked prefill size (-1 turns chunking off)"),
  "online-compress": bool("env SGLANG_OPT_USE_ONLINE_COMPRESS (online c128, ring 1)"),
  "online-c128-mtp": bool("env SGLANG_EXPERIMENTAL_ONLINE_C128_MTP"),
  "compress-state-dtype": str("env SGLANG_DSV4_COMPRESS_STATE_DTYPE: float32 (default) | bfloat16"),
  "enable-deepseek-v4-fp4-indexer": bool("FP4 indexer (HIP only)"),
  "ep-size": int(1, U16_MAX, "expert-parallel ranks (alias --ep)"),
  "moe-a2a-backend": str("MoE all-to-all backend: none (default), deepep, …"),
  "deepep-mode": choice(["auto", "normal", "low_latency"], "DeepEP mode (default auto)"),
  "moe-dense-tp-size": int(1, U16_MAX, "TP size of the dense MLP layers"),
  "enable-dp-lm-head": bool("the LM head follows attention DP"),
  "speculative-draft-model-path": str("separate draft weights (default: the checkpoint's MTP layers)", "PATH"),
  "cuda-graph-max-bs": int(1, INT32_MAX, "largest decode batch captured in a CUDA graph (--cuda-graph-max-bs-decode)"),
  "disable-cuda-graph": bool("no CUDA graphs"),
  "disable-radix-cache": bool("no prefix cache"),
  "max-prefill-tokens": int(1, INT32_MAX, "tokens one prefill batch may hold (default 16384)"),
  nnodes: int(1, U16_MAX, "nodes of the deployment"),
  quantization: str("weight quantisation method (default: what the checkpoint declares)"),
  dtype: str("weight/activation dtype (default auto)"),
  "prefill-context-parallel": bool("prefill context parallelism (SGLang --enable-prefill-cp)"),
  "deepep-num-max-dispatch-tokens-per-rank": int(
    1,
    INT32_MAX,
    "env SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 128)",
  ),
};

export const CLI_FLAGS: FlagTable = {
  "model-config": str("custom model JSON (preset fields, or HF config.json keys)", "FILE"),
  config: str("server arguments as a JSON or YAML object (flags win)", "FILE"),
  "against-log": str(
    "an SGLang server's start-up log (cut, wrapped, with prose, several servers): its server_args and SGLANG_* " +
      "environment supply the arguments (--config and flags win), and every DSV4 sizing figure it logged is " +
      "compared with ours, each difference with its cause (exit 1 on a difference)",
    "FILE",
  ),
  section: int(
    1,
    INT32_MAX,
    "with --against-log: check and reconcile only section N of the log (one per server start; default: all)",
  ),
  "kv-budget-bytes": int(1, Number.MAX_SAFE_INTEGER, "KV budget per worker in bytes (instead of the GPU budget)"),
  "gpu-memory-gib": num(0, GIB_MAX, "device memory free before load (default 139 = H200)", true),
  "weights-gib": num(0, GIB_MAX, "weights loaded per rank (default: checkpoint / (tp·pp))"),
  "runtime-gib": num(0, GIB_MAX, "other memory taken before the KV budget (default 0)"),
  sizing: choice(["exact", "sglang-gen-b"], "exact (default) or SGLang's Gen B arithmetic"),
  "residency-steps": int(0, 10_000_000, "batches per residency run (default 300)"),
  json: bool("print the report as one JSON object"),
  html: str(
    "also write the report as one self-contained HTML page: charts of memory, capacity and the ring, and controls " +
      "that rerun the check in the browser (no network needed)",
    "FILE",
  ),
  help: bool("show this help"),
};

export const ALL_FLAGS: FlagTable = { ...SERVER_FLAGS, ...CLI_FLAGS };

/** Env variables the CLI maps to switches (lowest precedence: flags > config file > env > defaults). */
export const ENV_SWITCHES: Readonly<Record<string, string>> = {
  SGLANG_OPT_USE_ONLINE_COMPRESS: "online-compress",
  SGLANG_EXPERIMENTAL_ONLINE_C128_MTP: "online-c128-mtp",
  SGLANG_DSV4_COMPRESS_STATE_DTYPE: "compress-state-dtype",
  SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK: "deepep-num-max-dispatch-tokens-per-rank",
};
