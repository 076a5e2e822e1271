/**
 * The DSV4-relevant server arguments and environment switches (spec §7.1) as a zod 4 schema. Keys are the
 * upstream flag names in camelCase; `normalizeArgKeys` also accepts kebab-case (`page-size`) and snake_case
 * (`page_size`) so a config file can use upstream spelling. Environment switches are explicit fields: only the
 * CLI reads process.env.
 */
import { z } from "zod";

const positiveInt = z.int().positive();
const nullableInt = positiveInt.nullable().default(null);

export const SPECULATIVE_ALGORITHMS_ACCEPTED = ["EAGLE", "DSPARK"] as const;

export const ServerArgsSchema = z.strictObject({
  /** Preset name (`DeepSeek-V4-Flash`, `-Flash-0731`, `-Pro`); a custom model comes in separately. */
  model: z.string().min(1).default("DeepSeek-V4-Flash"),
  pageSize: nullableInt,
  attentionBackend: z.string().nullable().default(null),
  swaFullTokensRatio: z.number().gt(0).lte(1).nullable().default(null),
  maxRunningRequests: nullableInt,
  kvCacheDtype: z.string().default("auto"),
  memFractionStatic: z.number().gt(0).lte(1).nullable().default(null),
  maxTotalTokens: nullableInt,
  contextLength: nullableInt,
  speculativeAlgorithm: z.string().nullable().default(null),
  speculativeNumSteps: nullableInt,
  speculativeEagleTopk: nullableInt,
  speculativeNumDraftTokens: nullableInt,
  speculativeDsparkBlockSize: z.int().nullable().default(null),
  speculativeAdaptive: z.boolean().default(false),
  /** Adaptive step candidates (upstream reads them from --speculative-adaptive-config). */
  speculativeAdaptiveCandidates: z.array(positiveInt).min(1).nullable().default(null),
  /** The algorithm's declared max_speculative_num_draft_tokens, when it declares one (V-S5). */
  maxSpeculativeNumDraftTokens: nullableInt,
  disaggregationMode: z.enum(["null", "prefill", "decode"]).default("null"),
  disaggregationDecodeExtraSlots: z.int().nonnegative().default(0),
  enableHisparse: z.boolean().default(false),
  /** HiSparse host_to_device_ratio (default 2 when HiSparse is on). */
  hisparseHostToDeviceRatio: z.number().nullable().default(null),
  dsv4AttnBackend: z.string().nullable().default(null),
  /** GPU architecture for the trtllm backend check, e.g. `sm90` (H200), `sm100`. */
  gpuArch: z.string().default("sm90"),
  platform: z.enum(["cuda", "hip", "npu"]).default("cuda"),
  tpSize: positiveInt.default(1),
  ppSize: positiveInt.default(1),
  dpSize: positiveInt.default(1),
  enableDpAttention: z.boolean().default(false),
  chunkedPrefillSize: z.int().nullable().default(null),
  prefillContextParallel: z.boolean().default(false),
  // Environment switches (§7.1).
  /** SGLANG_OPT_USE_ONLINE_COMPRESS */
  onlineCompress: z.boolean().default(false),
  /** SGLANG_EXPERIMENTAL_ONLINE_C128_MTP */
  onlineC128Mtp: z.boolean().default(false),
  /** SGLANG_DSV4_COMPRESS_STATE_DTYPE */
  compressStateDtype: z.string().default("float32"),
  /** --enable-deepseek-v4-fp4-indexer (HIP only) */
  enableDeepseekV4Fp4Indexer: z.boolean().default(false),
});

export type ServerArgsInput = z.input<typeof ServerArgsSchema>;
export type ServerArgs = z.output<typeof ServerArgsSchema>;

/** `page-size` / `page_size` → `pageSize`. */
export function camelCaseKey(key: string): string {
  return key.replace(/^-+/, "").replace(/[-_]+([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function normalizeArgKeys(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) out[camelCaseKey(key)] = value;
  return out;
}

export type ParseArgsResult = { ok: true; args: ServerArgs } | { ok: false; issues: string[] };

/** Parses raw arguments (any key spelling); every schema problem is reported, naming the field and the value. */
export function parseServerArgs(raw: Record<string, unknown>): ParseArgsResult {
  const normalized = normalizeArgKeys(raw);
  const parsed = ServerArgsSchema.safeParse(normalized);
  if (parsed.success) return { ok: true, args: parsed.data };
  return {
    ok: false,
    issues: parsed.error.issues.map((issue) => {
      if (issue.code === "unrecognized_keys") return `unknown argument(s): ${issue.keys.join(", ")}`;
      const field = issue.path.join(".");
      const value = issue.path.reduce<unknown>(
        (v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k as PropertyKey],
        normalized,
      );
      return `${field} = ${JSON.stringify(value)}: ${issue.message}`;
    }),
  };
}
