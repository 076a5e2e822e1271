/** The dtype rules: the KV cache dtype (V-A3) and the compress-state dtype (V-D1). */
import { ARCH, type ResolveContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

/** SGLANG_DSV4_COMPRESS_STATE_DTYPE spellings and their bytes per element. */
export const STATE_DTYPES: Readonly<Record<string, 4 | 2>> = { float32: 4, fp32: 4, bfloat16: 2, bf16: 2 };

/**
 * The KV cache dtypes SGLang's DSV4 pools accept per platform (docs/reference/startup-rules.md, V-A3): CUDA and
 * ROCm store fp8_e4m3 KV (`auto` resolves to it); the Ascend NPU pool stores the model dtype, bf16, which its
 * servers run with (`auto` resolves to it there).
 */
export const KV_CACHE_DTYPES: Readonly<Record<"cuda" | "hip" | "npu", readonly string[]>> = {
  cuda: ["auto", "fp8_e4m3"],
  hip: ["auto", "fp8_e4m3"],
  npu: ["auto", "bfloat16", "bf16"],
};

/** V-A3: the KV cache dtype is one the platform's DSV4 pool stores. */
export function kvCacheDtypeRule({ args }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-A3");
  const kvCacheDtype = args.kvCacheDtype;
  const supported = KV_CACHE_DTYPES[args.platform];
  if (!supported.includes(kvCacheDtype)) {
    const what = args.platform === "npu" ? "the Ascend NPU pool stores bf16 KV" : "the DSV4 pools store fp8_e4m3 KV";
    const use = args.platform === "npu" ? "bfloat16" : "fp8_e4m3";
    add(
      "error",
      "UNSUPPORTED_ARGUMENT",
      "kvCacheDtype",
      kvCacheDtype,
      `--kv-cache-dtype ${kvCacheDtype} is not supported for ${ARCH} on ${args.platform}: ${what}; ` +
        `use --kv-cache-dtype ${use} (or auto)`,
      { kvCacheDtype, platform: args.platform, supported: [...supported] },
    );
  }
  return out;
}

/** V-D1: a known state dtype, and float32 state with online compress. */
export function stateDtypeRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-D1");
  const bytes = STATE_DTYPES[args.compressStateDtype.toLowerCase()];
  if (bytes === undefined)
    add(
      "error",
      "STATE_DTYPE",
      "compressStateDtype",
      args.compressStateDtype,
      `Unsupported SGLANG_DSV4_COMPRESS_STATE_DTYPE=${args.compressStateDtype}. Expected one of: float32, fp32, bfloat16, bf16.`,
      { compressStateDtype: args.compressStateDtype, allowed: Object.keys(STATE_DTYPES) },
    );
  if (derived.onlineC128 && bytes === 2)
    add(
      "error",
      "STATE_DTYPE",
      "compressStateDtype",
      args.compressStateDtype,
      "bf16 is not supported when SGLANG_OPT_USE_ONLINE_COMPRESS=1; online c128 state must stay float32 (use --compress-state-dtype float32 or turn online compress off)",
      { compressStateDtype: args.compressStateDtype, onlineCompress: true },
    );
  return out;
}
