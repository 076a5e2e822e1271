/**
 * The server arguments dsv4-kv models, one entry each: the value's type and range, the library's default, the help,
 * what the setting touches, and the environment variable for a switch SGLang reads from the environment. Everything
 * else derives from this table: `ServerArgsSchema` (zod: types, bounds, defaults), the CLI's server flags (their
 * names are the fields in kebab-case, their ranges these ranges), the KV rows of SGLang's flag table (their value
 * kinds), the CLI's environment switches, and the docs generated from those. This is SGLang's table; another
 * engine's (vLLM) sits beside it with the same entry type.
 */
import { z } from "zod";

const INT32_MAX = 2 ** 31 - 1;
/** Draft tokens, steps and block sizes: ragged ids are 16 bits. */
const U16_MAX = 65535;

/** A value's type and the range a flag accepts. */
export type FlagValue =
  | { type: "bool" }
  | { type: "string"; choices?: readonly string[] }
  | { type: "int"; min: number; max: number }
  | { type: "number"; min: number; max: number; minExclusive: boolean }
  | { type: "intList"; min: number; max: number };

/** What a setting changes: the figures a user should expect to move with it. */
export type FlagTouches =
  | "model"
  | "pools"
  | "capacity"
  | "rings"
  | "speculative"
  | "parallel"
  | "budget"
  | "platform"
  | "rules";

export interface ServerFlag<S extends z.ZodType = z.ZodType> {
  value: FlagValue;
  /** The library's default: null leaves the field unset for the resolution to fill in (and say why). */
  default: string | number | boolean | null;
  help: string;
  /** The value's placeholder in the help (`MODEL`, `PATH`); the default is the type's. */
  arg?: string;
  touches: readonly FlagTouches[];
  /** The environment variable SGLang reads this switch from (the CLI reads it too; flags win). */
  env?: string;
  /**
   * The rule that reports a value outside the range in the library (`V-S1`, `V-H1`, `V-I1`), in its own words: the
   * schema then leaves that bound (`max`) or both to it and checks the type. The flag still refuses by the range.
   */
  judgedBy?: { rule: string; bound: "both" | "max" };
  /** The zod schema, built from `value` and `default`. */
  schema: S;
}

interface Facts {
  help: string;
  arg?: string;
  touches: readonly FlagTouches[];
  env?: string;
  judgedBy?: ServerFlag["judgedBy"];
}

type Defaulted<T> = z.ZodDefault<z.ZodType<T, T | undefined>>;

/** An integer in [min, max]; the library's bounds keep zod's words for positive (`>0`) and non-negative. */
function intSchema(min: number, max: number, judged: Facts["judgedBy"]): z.ZodType<number> {
  if (judged?.bound === "both") return z.int();
  const low = min === 1 ? z.int().positive() : min === 0 ? z.int().nonnegative() : z.int().min(min);
  return max === Number.MAX_SAFE_INTEGER || judged?.bound === "max" ? low : low.max(max);
}

function entry<T>(
  value: FlagValue,
  dflt: ServerFlag["default"],
  facts: Facts,
  schema: z.ZodType,
): ServerFlag<Defaulted<T>> {
  return { value, default: dflt, ...facts, schema: schema as Defaulted<T> };
}

function int<const D extends number | null>(min: number, max: number, dflt: D, facts: Facts) {
  const base = intSchema(min, max, facts.judgedBy);
  const schema = dflt === null ? base.nullable().default(null) : base.default(dflt);
  return entry<D extends null ? number | null : number>({ type: "int", min, max }, dflt, facts, schema);
}

function num<const D extends number | null>(min: number, max: number, minExclusive: boolean, dflt: D, facts: Facts) {
  let base = z.number();
  if (facts.judgedBy?.bound !== "both") base = (minExclusive ? base.gt(min) : base.gte(min)).lte(max);
  const schema = dflt === null ? base.nullable().default(null) : base.default(dflt);
  return entry<D extends null ? number | null : number>(
    { type: "number", min, max, minExclusive },
    dflt,
    facts,
    schema,
  );
}

function str<const D extends string | null>(dflt: D, facts: Facts & { nonEmpty?: boolean }) {
  const { nonEmpty, ...rest } = facts;
  const base = nonEmpty ? z.string().min(1) : z.string();
  const schema = dflt === null ? base.nullable().default(null) : base.default(dflt);
  return entry<D extends null ? string | null : string>({ type: "string" }, dflt, rest, schema);
}

function choice<const C extends readonly [string, ...string[]]>(choices: C, dflt: C[number], facts: Facts) {
  return entry<C[number]>({ type: "string", choices }, dflt, facts, z.enum(choices).default(dflt as never));
}

function bool(facts: Facts) {
  return entry<boolean>({ type: "bool" }, false, facts, z.boolean().default(false));
}

/** A switch whose unset state means something of its own (vLLM's `None`: "let the engine decide"). */
function optBool<const D extends boolean | null>(dflt: D, facts: Facts) {
  const schema = dflt === null ? z.boolean().nullable().default(null) : z.boolean().default(dflt);
  return entry<D extends null ? boolean | null : boolean>({ type: "bool" }, dflt, facts, schema);
}

function intList(min: number, max: number, facts: Facts) {
  const schema = z
    .array(intSchema(min, max, undefined))
    .min(1)
    .nullable()
    .default(null);
  return entry<number[] | null>({ type: "intList", min, max }, null, facts, schema);
}

/**
 * SGLang's server arguments, in the order of the report's `args`. The field is the ServerArgs key; the CLI flag is
 * its kebab-case (`pageSize` → `--page-size`), SGLang's own spelling for every field SGLang has but one
 * (`--prefill-context-parallel`, which SGLang spells `--enable-prefill-cp` and more: its flag table maps them).
 */
export const SGLANG_SERVER_ARGS = {
  model: str("DeepSeek-V4-Flash", {
    nonEmpty: true,
    help:
      "the model: a preset (DeepSeek-V4-Flash (default), DeepSeek-V4-Flash-0731, DeepSeek-V4-Pro, any case), a " +
      "Hugging Face id (deepseek-ai/DeepSeek-V4-Flash, with -FP8/-NVFP4/… suffixes), a checkpoint folder or a " +
      "config.json path",
    arg: "MODEL",
    touches: ["model", "pools", "capacity"],
  }),
  pageSize: int(1, INT32_MAX, null, {
    help: "--page-size (DSV4 always uses 256 on CUDA; other values are corrected)",
    touches: ["pools", "rings"],
  }),
  attentionBackend: str(null, { help: "--attention-backend (forced to dsv4)", touches: ["rules"] }),
  swaFullTokensRatio: num(0, 1, true, null, {
    help: "SWA:full token ratio (DSV4 default 0.1)",
    touches: ["pools", "capacity"],
  }),
  maxRunningRequests: int(1, INT32_MAX, null, {
    help: "max running requests (DSV4 default 256)",
    touches: ["pools", "capacity"],
  }),
  kvCacheDtype: str("auto", { help: "auto (→ fp8_e4m3) or fp8_e4m3", touches: ["pools"] }),
  memFractionStatic: num(0, 1, true, null, {
    help: "static memory fraction (check default 0.85)",
    touches: ["budget", "capacity"],
  }),
  maxTotalTokens: int(1, INT32_MAX, null, {
    help: "cap on the full-token capacity",
    touches: ["capacity"],
    judgedBy: { rule: "V-I1", bound: "max" },
  }),
  contextLength: int(1, INT32_MAX, null, {
    help: "context length (default: the model's max positions)",
    touches: ["capacity", "rules"],
  }),
  speculativeAlgorithm: str(null, { help: "EAGLE (default) | DSPARK | none", touches: ["speculative", "rings"] }),
  speculativeNumSteps: int(1, U16_MAX, null, {
    help: "EAGLE steps (default 3; follows the draft tokens when only those are given)",
    touches: ["speculative"],
  }),
  speculativeEagleTopk: int(1, U16_MAX, null, {
    help: "EAGLE top-k (default 1; DSV4 requires 1)",
    touches: ["speculative", "rules"],
  }),
  speculativeNumDraftTokens: int(1, U16_MAX, null, {
    help: "verify window (default 4 = steps + 1)",
    touches: ["speculative", "rings", "pools"],
  }),
  speculativeDsparkBlockSize: int(1, U16_MAX, null, {
    help: "DSpark gamma (verify window gamma + 1)",
    touches: ["speculative", "rings"],
    judgedBy: { rule: "V-S1", bound: "both" },
  }),
  speculativeAdaptive: bool({ help: "adaptive speculative steps", touches: ["speculative", "rings"] }),
  speculativeAdaptiveCandidates: intList(1, U16_MAX, {
    help: "adaptive step candidates, comma-separated (default 1,3,5,7 [assumed])",
    touches: ["speculative", "rings"],
  }),
  maxSpeculativeNumDraftTokens: int(1, U16_MAX, null, {
    help: "the algorithm's declared maximum draft tokens",
    touches: ["speculative", "rules"],
  }),
  disaggregationMode: choice(["null", "prefill", "decode"], "null", {
    help: "PD disaggregation mode",
    touches: ["pools", "capacity"],
  }),
  disaggregationDecodeExtraSlots: int(0, INT32_MAX, 0, {
    help: "extra request slots in PD decode",
    touches: ["pools"],
  }),
  enableHisparse: bool({
    help: "HiSparse (c4 KV shrinks by the host-to-device ratio)",
    touches: ["pools", "capacity"],
  }),
  hisparseHostToDeviceRatio: num(1, U16_MAX, false, null, {
    help: "HiSparse ratio H (default 2)",
    touches: ["pools", "capacity"],
    judgedBy: { rule: "V-H1", bound: "both" },
  }),
  dsv4AttnBackend: str(null, { help: "e.g. trtllm (Blackwell only)", touches: ["rules"] }),
  gpuArch: str("sm90", { help: "GPU architecture (default sm90 = H200)", touches: ["rules"] }),
  platform: choice(["cuda", "hip", "npu"], "cuda", {
    help: "the accelerator platform (default cuda)",
    touches: ["platform", "pools", "rules"],
  }),
  tpSize: int(1, U16_MAX, 1, {
    help: "tensor-parallel ranks (check default 8: weights are split 8 ways)",
    touches: ["parallel", "budget", "rules"],
  }),
  ppSize: int(1, U16_MAX, 1, { help: "pipeline-parallel stages", touches: ["parallel", "rings", "budget"] }),
  dpSize: int(1, U16_MAX, 1, { help: "data-parallel size", touches: ["parallel", "capacity"] }),
  enableDpAttention: bool({
    help: "attention DP (max running requests are divided by --dp-size)",
    touches: ["parallel", "capacity"],
  }),
  chunkedPrefillSize: int(-1, INT32_MAX, null, {
    help: "chunked prefill size (-1 turns chunking off)",
    touches: ["rules"],
  }),
  prefillContextParallel: bool({
    help: "prefill context parallelism (SGLang --enable-prefill-cp)",
    touches: ["parallel", "rules"],
  }),
  epSize: int(1, U16_MAX, 1, { help: "expert-parallel ranks (alias --ep)", touches: ["parallel", "rules"] }),
  moeA2aBackend: str("none", { help: "MoE all-to-all backend: none (default), deepep, …", touches: ["rules"] }),
  deepepMode: choice(["auto", "normal", "low_latency"], "auto", {
    help: "DeepEP mode (default auto)",
    touches: ["rules"],
  }),
  moeDenseTpSize: int(1, U16_MAX, null, { help: "TP size of the dense MLP layers", touches: ["parallel", "rules"] }),
  enableDpLmHead: bool({ help: "the LM head follows attention DP", touches: ["parallel", "rules"] }),
  speculativeDraftModelPath: str(null, {
    help: "separate draft weights (default: the checkpoint's MTP layers)",
    arg: "PATH",
    touches: ["speculative", "budget", "rules"],
  }),
  cudaGraphMaxBs: int(1, INT32_MAX, null, {
    help: "largest decode batch captured in a CUDA graph (--cuda-graph-max-bs-decode)",
    touches: ["rules"],
  }),
  disableCudaGraph: bool({ help: "no CUDA graphs", touches: ["rules"] }),
  disableRadixCache: bool({ help: "no prefix cache", touches: ["rules"] }),
  maxPrefillTokens: int(1, INT32_MAX, null, {
    help: "tokens one prefill batch may hold (default 16384)",
    touches: ["rules"],
  }),
  nnodes: int(1, U16_MAX, 1, { help: "nodes of the deployment", touches: ["parallel", "rules"] }),
  quantization: str(null, {
    help: "weight quantisation method (default: what the checkpoint declares)",
    touches: ["budget", "rules"],
  }),
  dtype: str("auto", { help: "weight/activation dtype (default auto)", touches: ["rules"] }),
  onlineCompress: bool({
    help: "env SGLANG_OPT_USE_ONLINE_COMPRESS (online c128, ring 1)",
    env: "SGLANG_OPT_USE_ONLINE_COMPRESS",
    touches: ["rings", "pools", "rules"],
  }),
  onlineC128Mtp: bool({
    help: "env SGLANG_EXPERIMENTAL_ONLINE_C128_MTP",
    env: "SGLANG_EXPERIMENTAL_ONLINE_C128_MTP",
    touches: ["rings", "pools", "rules"],
  }),
  compressStateDtype: str("float32", {
    help: "env SGLANG_DSV4_COMPRESS_STATE_DTYPE: float32 (default) | bfloat16",
    env: "SGLANG_DSV4_COMPRESS_STATE_DTYPE",
    touches: ["pools", "capacity"],
  }),
  deepepNumMaxDispatchTokensPerRank: int(1, INT32_MAX, 128, {
    help: "env SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 128)",
    env: "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK",
    touches: ["rules"],
  }),
  enableDeepseekV4Fp4Indexer: bool({ help: "FP4 indexer (HIP only)", touches: ["pools", "rules"] }),
} as const;

export type ServerArgField = keyof typeof SGLANG_SERVER_ARGS;

/** The entry builders, for another engine's table (vllm-flags.ts) to share the entry type and its schemas. */
export const FLAG_ENTRY = { int, num, str, choice, bool, optBool, intList } as const;

/** `pageSize` → `page-size`: a field's flag name (the CLI's, and SGLang's where SGLang has the flag). */
export function serverFlagName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The fields in table order, as [field, entry] pairs. */
export const SERVER_ARG_ENTRIES: ReadonlyArray<readonly [ServerArgField, ServerFlag]> = Object.entries(
  SGLANG_SERVER_ARGS,
) as Array<[ServerArgField, ServerFlag]>;

/** Environment variables SGLang reads a switch from → the flag name (lowest precedence: flags > config > env). */
export const ENV_SWITCHES: Readonly<Record<string, string>> = Object.fromEntries(
  SERVER_ARG_ENTRIES.filter(([, f]) => f.env !== undefined).map(([field, f]) => [f.env!, serverFlagName(field)]),
);
