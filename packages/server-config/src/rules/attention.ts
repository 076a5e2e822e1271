/** Attention-side rules: the HiSparse ratio (V-H1) and the trtllm attention backend's requirements (V-A4). */
import type { ResolveContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

/** V-H1: HiSparse keeps 1/ratio of the c4 KV on the device, so the ratio is at least 1. */
export function hisparseRatioRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-H1");
  const hisparseRatio = derived.hisparseRatio;
  if (args.enableHisparse && !(hisparseRatio >= 1))
    add(
      "error",
      "HISPARSE_RATIO",
      "hisparseHostToDeviceRatio",
      hisparseRatio,
      `HiSparse host_to_device_ratio = ${hisparseRatio} must be ≥ 1 (the device keeps 1/ratio of the c4 KV)`,
      { hisparseRatio, min: 1 },
    );
  return out;
}

/** V-A4: trtllm needs Blackwell, fp8 KV, no HiSparse, no context parallelism, no PD, chunked prefill. */
export function trtllmBackendRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-A4");
  if (args.dsv4AttnBackend !== "trtllm") {
    if (args.dsv4AttnBackend != null)
      add(
        "warning",
        "NOT_MODELLED",
        "dsv4AttnBackend",
        args.dsv4AttnBackend,
        `--dsv4-attn-backend ${args.dsv4AttnBackend} is not modelled; sizing uses the default separate-KV CUDA pools`,
        { backend: args.dsv4AttnBackend },
      );
    return out;
  }
  const fail = (field: string, value: unknown, why: string) =>
    add("error", "UNSUPPORTED_ARGUMENT", field, value, `--dsv4-attn-backend trtllm ${why}`, { backend: "trtllm" });
  if (args.platform !== "cuda" || !/^sm10[03]/.test(args.gpuArch))
    fail(
      "gpuArch",
      args.gpuArch,
      `requires a Blackwell SM100/SM103 CUDA GPU (got ${args.platform} ${args.gpuArch}); use the default dsv4 attention backend`,
    );
  if (derived.kvCacheDtype !== "fp8_e4m3")
    fail("kvCacheDtype", derived.kvCacheDtype, "requires --kv-cache-dtype fp8_e4m3");
  if (args.enableHisparse) fail("enableHisparse", true, "is incompatible with HiSparse; drop --enable-hisparse");
  if (args.prefillContextParallel) fail("prefillContextParallel", true, "is incompatible with context parallelism");
  if (args.disaggregationMode !== "null")
    fail("disaggregationMode", args.disaggregationMode, "is incompatible with PD disaggregation");
  if (args.chunkedPrefillSize != null && args.chunkedPrefillSize <= 0)
    fail("chunkedPrefillSize", args.chunkedPrefillSize, "requires chunked prefill (--chunked-prefill-size > 0)");
  return out;
}
