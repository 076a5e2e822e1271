/**
 * The flags of `dsv4-kv check`: server arguments in upstream kebab-case, environment switches, the budget and
 * the output. One table drives parseArgs, value conversion, config-file keys and the help text.
 */
export type FlagKind = "int" | "float" | "string" | "bool" | "intList";

export interface FlagSpec {
  kind: FlagKind;
  help: string;
  /** Where it goes: a server argument (camelCase key) or a CLI-only setting. */
  target: "server" | "cli";
}

export const SERVER_FLAGS: Record<string, FlagSpec> = {
  model: {
    kind: "string",
    target: "server",
    help: "model preset: DeepSeek-V4-Flash (default), DeepSeek-V4-Flash-0731, DeepSeek-V4-Pro",
  },
  "page-size": {
    kind: "int",
    target: "server",
    help: "--page-size (DSV4 always uses 256 on CUDA; other values are corrected)",
  },
  "attention-backend": { kind: "string", target: "server", help: "--attention-backend (forced to dsv4)" },
  "swa-full-tokens-ratio": { kind: "float", target: "server", help: "SWA:full token ratio (DSV4 default 0.1)" },
  "max-running-requests": { kind: "int", target: "server", help: "max running requests (DSV4 default 256)" },
  "kv-cache-dtype": { kind: "string", target: "server", help: "auto (→ fp8_e4m3) or fp8_e4m3" },
  "mem-fraction-static": { kind: "float", target: "server", help: "static memory fraction (check default 0.85)" },
  "max-total-tokens": { kind: "int", target: "server", help: "cap on the full-token capacity" },
  "context-length": { kind: "int", target: "server", help: "context length (default: the model's max positions)" },
  "speculative-algorithm": { kind: "string", target: "server", help: "EAGLE (default) | DSPARK | none" },
  "speculative-num-steps": {
    kind: "int",
    target: "server",
    help: "EAGLE steps (default 3; derived from the draft tokens when only those are given)",
  },
  "speculative-eagle-topk": { kind: "int", target: "server", help: "EAGLE top-k (default 1; DSV4 requires 1)" },
  "speculative-num-draft-tokens": { kind: "int", target: "server", help: "verify window (default 4 = steps + 1)" },
  "speculative-dspark-block-size": { kind: "int", target: "server", help: "DSpark gamma (verify window gamma + 1)" },
  "speculative-adaptive": { kind: "bool", target: "server", help: "adaptive speculative steps" },
  "speculative-adaptive-candidates": {
    kind: "intList",
    target: "server",
    help: "adaptive step candidates, comma-separated (default 1,3,5,7 [assumed])",
  },
  "max-speculative-num-draft-tokens": {
    kind: "int",
    target: "server",
    help: "the algorithm's declared maximum draft tokens",
  },
  "disaggregation-mode": { kind: "string", target: "server", help: "null | prefill | decode" },
  "disaggregation-decode-extra-slots": { kind: "int", target: "server", help: "extra request slots in PD decode" },
  "enable-hisparse": { kind: "bool", target: "server", help: "HiSparse (c4 KV shrinks by the host-to-device ratio)" },
  "hisparse-host-to-device-ratio": { kind: "float", target: "server", help: "HiSparse ratio H (default 2)" },
  "dsv4-attn-backend": { kind: "string", target: "server", help: "e.g. trtllm (Blackwell only)" },
  "gpu-arch": { kind: "string", target: "server", help: "GPU architecture (default sm90 = H200)" },
  platform: { kind: "string", target: "server", help: "cuda (default) | hip | npu" },
  "tp-size": {
    kind: "int",
    target: "server",
    help: "tensor-parallel ranks (check default 8: weights are split 8 ways)",
  },
  "pp-size": { kind: "int", target: "server", help: "pipeline-parallel stages" },
  "dp-size": { kind: "int", target: "server", help: "data-parallel size" },
  "enable-dp-attention": {
    kind: "bool",
    target: "server",
    help: "attention DP (max running requests are divided by --dp-size)",
  },
  "chunked-prefill-size": { kind: "int", target: "server", help: "chunked prefill size" },
  "online-compress": {
    kind: "bool",
    target: "server",
    help: "env SGLANG_OPT_USE_ONLINE_COMPRESS (online c128, ring 1)",
  },
  "online-c128-mtp": { kind: "bool", target: "server", help: "env SGLANG_EXPERIMENTAL_ONLINE_C128_MTP" },
  "compress-state-dtype": {
    kind: "string",
    target: "server",
    help: "env SGLANG_DSV4_COMPRESS_STATE_DTYPE: float32 (default) | bfloat16",
  },
  "enable-deepseek-v4-fp4-indexer": { kind: "bool", target: "server", help: "FP4 indexer (HIP only)" },
};

export const CLI_FLAGS: Record<string, FlagSpec> = {
  "model-config": { kind: "string", target: "cli", help: "custom model JSON (preset fields, or HF config.json keys)" },
  config: { kind: "string", target: "cli", help: "server arguments as a JSON or YAML object (flags win)" },
  "kv-budget-bytes": { kind: "int", target: "cli", help: "KV budget per worker in bytes (instead of the GPU budget)" },
  "gpu-memory-gib": { kind: "float", target: "cli", help: "device memory free before load (default 139 = H200)" },
  "weights-gib": { kind: "float", target: "cli", help: "weights loaded per rank (default: checkpoint / (tp·pp))" },
  "runtime-gib": { kind: "float", target: "cli", help: "other memory taken before the KV budget (default 0)" },
  sizing: { kind: "string", target: "cli", help: "exact (default) | sglang-gen-b" },
  "residency-steps": { kind: "int", target: "cli", help: "batches per residency run (default 300)" },
  json: { kind: "bool", target: "cli", help: "print the report as one JSON object" },
  help: { kind: "bool", target: "cli", help: "show this help" },
};

export const ALL_FLAGS: Record<string, FlagSpec> = { ...SERVER_FLAGS, ...CLI_FLAGS };

/** Env variables the CLI maps to switches (lowest precedence: flags > config file > env > defaults). */
export const ENV_SWITCHES: Record<string, string> = {
  SGLANG_OPT_USE_ONLINE_COMPRESS: "online-compress",
  SGLANG_EXPERIMENTAL_ONLINE_C128_MTP: "online-c128-mtp",
  SGLANG_DSV4_COMPRESS_STATE_DTYPE: "compress-state-dtype",
};

export function helpTable(): string {
  const rows = Object.entries(ALL_FLAGS).map(([name, spec]) => {
    const arg = spec.kind === "bool" ? "" : spec.kind === "intList" ? " A,B,…" : spec.kind === "string" ? " S" : " N";
    return `  --${(name + arg).padEnd(38)} ${spec.help}`;
  });
  return rows.join("\n");
}
