/**
 * The platform a logged server ran on, from the log's own evidence: server_args (`device`, the attention
 * backend), the environment (Ascend's `ASCEND_*`/`HCCL_*`, ROCm's `HIP_*`/`ROCR_*`/`SGLANG_USE_AITER`), and lines
 * naming the accelerator (MI300X, gfx942, Atlas, …). The check then applies that platform's start-up rules and
 * pool arithmetic; a log without such evidence is CUDA's, as SGLang's default device is.
 */
import type { ParsedSglangLog } from "./types.js";

export type LogPlatform = "cuda" | "hip" | "npu";

export interface DetectedPlatform {
  platform: LogPlatform;
  evidence: string[];
}

const NPU_TEXT = /\b(?:Ascend|Atlas|910[BC]\d?|CANN|torch_npu|NPU graph|npu_graph)\b/;
const HIP_TEXT = /\b(?:MI3\d{1,2}X?|gfx9\d\d|ROCm|rocm|AMD Instinct|float8_e4m3fnuz|aiter)\b/i;
const NPU_BACKENDS = new Set(["ascend", "npu"]);
const HIP_BACKENDS = new Set(["aiter", "wave"]);

function fromServerArgs(args: Readonly<Record<string, unknown>> | null): DetectedPlatform | null {
  if (args === null) return null;
  if (args.device === "npu") return { platform: "npu", evidence: ["server_args has device='npu'"] };
  for (const key of ["attention_backend", "prefill_attention_backend", "decode_attention_backend"]) {
    const v = args[key];
    if (typeof v === "string" && NPU_BACKENDS.has(v))
      return { platform: "npu", evidence: [`server_args has ${key}='${v}' (Ascend's backend)`] };
    if (typeof v === "string" && HIP_BACKENDS.has(v))
      return { platform: "hip", evidence: [`server_args has ${key}='${v}' (a ROCm-only backend)`] };
  }
  return null;
}

function fromEnv(env: Readonly<Record<string, string>>): DetectedPlatform | null {
  const names = Object.keys(env);
  const npu = names.find((k) => k.startsWith("ASCEND_") || k.startsWith("HCCL_") || k === "PYTORCH_NPU_ALLOC_CONF");
  if (npu) return { platform: "npu", evidence: [`the environment sets ${npu} (Ascend)`] };
  const hip = names.find((k) => k.startsWith("HIP_") || k.startsWith("ROCR_") || k === "SGLANG_USE_AITER");
  if (hip) return { platform: "hip", evidence: [`the environment sets ${hip} (ROCm)`] };
  return null;
}

function fromLaunch(words: readonly string[] | null): DetectedPlatform | null {
  if (words === null) return null;
  const i = words.indexOf("--device");
  if (i >= 0 && words[i + 1] === "npu") return { platform: "npu", evidence: ["the launch command has --device npu"] };
  const b = words.indexOf("--attention-backend");
  const backend = b >= 0 ? words[b + 1] : undefined;
  if (backend && NPU_BACKENDS.has(backend))
    return { platform: "npu", evidence: [`the launch command has --attention-backend ${backend}`] };
  if (backend && HIP_BACKENDS.has(backend))
    return { platform: "hip", evidence: [`the launch command has --attention-backend ${backend} (ROCm only)`] };
  return null;
}

function fromText(log: ParsedSglangLog): DetectedPlatform | null {
  for (const hint of log.platformHints) {
    if (NPU_TEXT.test(hint.text))
      return { platform: "npu", evidence: [`line ${hint.line} names an Ascend NPU: "${hint.text}"`] };
    if (HIP_TEXT.test(hint.text))
      return { platform: "hip", evidence: [`line ${hint.line} names an AMD GPU or ROCm: "${hint.text}"`] };
  }
  return null;
}

/** The platform of one section, with the evidence that decided it. */
export function detectPlatform(log: ParsedSglangLog): DetectedPlatform {
  return (
    fromServerArgs(log.serverArgs) ??
    fromLaunch(log.launchCommand) ??
    fromEnv(log.env) ??
    fromText(log) ?? {
      platform: "cuda",
      evidence: ["nothing in the section names another platform: CUDA, SGLang's default device"],
    }
  );
}
