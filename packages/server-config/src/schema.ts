/**
 * The DSV4-relevant server arguments and environment switches (docs/reference/startup-rules.md §2.1) as a zod 4 schema.
 * Keys are the upstream flag names in camelCase; `normalizeArgKeys` also accepts kebab-case (`page-size`) and
 * snake_case (`page_size`) so a config file can use upstream spelling. Environment switches are explicit fields: only
 * the CLI reads process.env.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { z } from "zod";
import { ServerConfigError } from "./errors.js";

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
  /** --ep-size (alias --ep): expert-parallel ranks. */
  epSize: positiveInt.default(1),
  /** --moe-a2a-backend: the MoE all-to-all backend (`none`, `deepep`, …); DeepEP bounds dispatch tokens per rank. */
  moeA2aBackend: z.string().default("none"),
  /** --deepep-mode: `auto`, `normal` or `low_latency`. */
  deepepMode: z.string().default("auto"),
  /** --moe-dense-tp-size: TP size of the dense MLP layers. */
  moeDenseTpSize: positiveInt.nullable().default(null),
  /** --enable-dp-lm-head: the LM head follows attention DP. */
  enableDpLmHead: z.boolean().default(false),
  /** --speculative-draft-model-path: separate draft weights (absent: the checkpoint's own MTP layers). */
  speculativeDraftModelPath: z.string().nullable().default(null),
  /** --cuda-graph-max-bs: the largest batch captured in a CUDA graph. */
  cudaGraphMaxBs: nullableInt,
  /** --disable-cuda-graph */
  disableCudaGraph: z.boolean().default(false),
  /** --disable-radix-cache */
  disableRadixCache: z.boolean().default(false),
  /** --max-prefill-tokens: tokens one prefill batch may hold. */
  maxPrefillTokens: nullableInt,
  /** --nnodes: nodes of the deployment (ranks per node = tp / nnodes). */
  nnodes: positiveInt.default(1),
  /** --quantization: a weight quantisation method (absent: what the checkpoint declares). */
  quantization: z.string().nullable().default(null),
  /** --dtype: the activation/weight dtype (`auto`, `bfloat16`, …). */
  dtype: z.string().default("auto"),
  // Environment switches (docs/reference/startup-rules.md §2.1).
  /** SGLANG_OPT_USE_ONLINE_COMPRESS */
  onlineCompress: z.boolean().default(false),
  /** SGLANG_EXPERIMENTAL_ONLINE_C128_MTP */
  onlineC128Mtp: z.boolean().default(false),
  /** SGLANG_DSV4_COMPRESS_STATE_DTYPE */
  compressStateDtype: z.string().default("float32"),
  /** SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK: DeepEP's low-latency dispatch buffer, tokens per rank. */
  deepepNumMaxDispatchTokensPerRank: positiveInt.default(128),
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

/** How `parseServerArgs` reads its input. */
export interface ParseServerArgsOptions {
  /**
   * The values are command-line strings (the CLI's flags). A string for a number must then be a plain decimal
   * literal (`0.85`, `1e-3`; no hex, no blanks, no empty string), for a list comma-separated decimals, and for a
   * boolean `true` or `false`. SGLang declares its boolean server flags `store_true` (present = true, no value),
   * so a boolean given as a string comes from a config file or the environment, where only those two words are
   * unambiguous. Without this option a string is never a number or a boolean.
   */
  fromFlags?: boolean;
  /** How an error names a field, given its camelCase key (default: unchanged). The CLI passes `flagName`. */
  fieldName?: (field: string) => string;
}

export type ParseArgsResult =
  | { ok: true; args: ServerArgs }
  | {
      ok: false;
      /** Every refusal, typed: code, field (as `fieldName` renders it), value, rule, params. */
      errors: ServerConfigError[];
      /** The errors' messages, one per refusal. */
      issues: string[];
    };

/** `pageSize` → `--page-size`, `weightsGiB` → `--weights-gib`: how a CLI user typed a field. */
export function flagName(field: string): string {
  return `--${field.replace(/GiB/g, "Gib").replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

const KNOWN_KEYS = Object.keys(ServerArgsSchema.shape);
const DECIMAL = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

type ValueKind = "number" | "boolean" | "array" | "other";

function kindOf(schema: z.ZodType): ValueKind {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType };
  while (def.innerType !== undefined) def = def.innerType._zod.def as typeof def;
  return def.type === "number" || def.type === "boolean" || def.type === "array" ? def.type : "other";
}

const KINDS: Readonly<Record<string, ValueKind>> = Object.fromEntries(
  Object.entries(ServerArgsSchema.shape).map(([key, schema]) => [key, kindOf(schema as z.ZodType)]),
);

/** A flag's string as the schema's type, or undefined when it is not a strict literal of it. */
function fromFlagString(kind: ValueKind, text: string): unknown {
  const decimal = (t: string) => (DECIMAL.test(t) && Number.isFinite(Number(t)) ? Number(t) : undefined);
  if (kind === "number") return decimal(text);
  if (kind === "boolean") return text === "true" ? true : text === "false" ? false : undefined;
  if (kind === "array") {
    const items = text.split(",").map(decimal);
    return items.every((v) => v !== undefined) ? items : undefined;
  }
  return text;
}

const EXPECTED: Readonly<Record<ValueKind, string>> = {
  number: "a plain decimal number (no hex, blanks or empty string)",
  boolean: "true or false",
  array: "comma-separated plain decimal numbers",
  other: "a string",
};

/**
 * Parses raw arguments (any key spelling). Unknown keys (with a suggestion), a key given twice in two spellings,
 * wrong types and out-of-range values are all reported, each as a ServerConfigError naming the field.
 */
export function parseServerArgs(raw: Record<string, unknown>, options: ParseServerArgsOptions = {}): ParseArgsResult {
  const name = options.fieldName ?? ((field: string) => field);
  const errors: ServerConfigError[] = [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    errors.push(new ServerConfigError("INVALID_TYPE", "args", raw, "must be an object of server arguments"));
    return { ok: false, errors, issues: errors.map((e) => e.message) };
  }
  const normalized: Record<string, unknown> = {};
  const spelling: Record<string, string> = {};
  for (const [key, given] of Object.entries(raw)) {
    const field = camelCaseKey(key);
    if (!KNOWN_KEYS.includes(field)) {
      const suggestion = closestMatch(field, KNOWN_KEYS);
      const params = suggestion === null ? {} : { suggestion: name(suggestion) };
      errors.push(new ServerConfigError("UNKNOWN_KEY", name(field), given, "is not a server argument", params));
      continue;
    }
    if (field in normalized) {
      const rule = `is given twice (as ${JSON.stringify(spelling[field])} and ${JSON.stringify(key)})`;
      errors.push(new ServerConfigError("INVALID_ARGUMENT", name(field), given, rule));
      continue;
    }
    spelling[field] = key;
    const kind = KINDS[field]!;
    const value = options.fromFlags && typeof given === "string" ? fromFlagString(kind, given) : given;
    if (value === undefined) {
      errors.push(new ServerConfigError("INVALID_TYPE", name(field), given, `must be ${EXPECTED[kind]}`));
      continue;
    }
    normalized[field] = value;
  }
  const parsed = ServerArgsSchema.safeParse(normalized);
  if (parsed.success && errors.length === 0) return { ok: true, args: parsed.data };
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [head, ...rest] = issue.path.map(String);
      const field = name(head ?? "") + rest.map((k) => `[${k}]`).join("");
      const value = issue.path
        .slice(1)
        .reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], normalized[head ?? ""]);
      const code = issue.code === "invalid_type" ? "INVALID_TYPE" : "INVALID_ARGUMENT";
      errors.push(new ServerConfigError(code, field, value, issue.message, { zodCode: issue.code }));
    }
  }
  return { ok: false, errors, issues: errors.map((e) => e.message) };
}

/**
 * Refuses `args` that did not come from `parseServerArgs` in a form the resolution can read (null, a raw object
 * with a string for a number, an unknown key): the first field at fault, as a ServerConfigError. Returns the args
 * as the schema reads them.
 */
export function requireServerArgs(args: unknown): ServerArgs {
  if (typeof args !== "object" || args === null || Array.isArray(args))
    throw new ServerConfigError("INVALID_TYPE", "args", args, "must be the server arguments parseServerArgs returns");
  const parsed = ServerArgsSchema.safeParse(args);
  // The parsed copy: a key left undefined gets its default, as parseServerArgs would have given it.
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join(".") || "args";
  const value = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], args);
  const code = issue.code === "invalid_type" ? "INVALID_TYPE" : "INVALID_ARGUMENT";
  throw new ServerConfigError(code, field, value, `${issue.message} (pass what parseServerArgs returns)`, {
    zodCode: issue.code,
  });
}
