/**
 * Model presets (docs/reference/pools-and-sizing.md §2.2) and custom model files. A model here carries what the pools
 * and the budget need: head dims, window, the HF `compress_ratios` list, context length, draft facts and the checkpoint
 * size.
 */
import type { KvModelShape } from "@dsv4-kv/memory-pool";
import { z } from "zod";
import { ServerConfigError } from "./errors.js";

/**
 * config.json's `rope_scaling`, the facts vLLM's derived max length reads (vllm/derived-max-len.ts, D50). SGLang's
 * path does not read it.
 */
export interface ModelRopeScaling {
  /** `rope_type` (or the legacy `type`): `yarn`, `default`, `linear`, `llama3`, ... */
  type: string;
  /** null when config.json has none (vLLM then applies 1). */
  factor: number | null;
  /** Tokens; required for `yarn`, null when absent. */
  originalMaxPositionEmbeddings: number | null;
}

export interface ModelPreset extends KvModelShape {
  name: string;
  /** head_dim (512); qk_nope = head_dim − qk_rope (docs/reference/pools-and-sizing.md §2.1). */
  headDim: number;
  /** max_position_embeddings of config.json: the longest context the model serves (Flash and Pro: 1,048,576). */
  maxPositionEmbeddings: number;
  /**
   * Speculative (MTP / next-n) layers the checkpoint carries: config.json's `num_nextn_predict_layers`, or the
   * `compress_ratios` entries beyond `numHiddenLayers`. 0 means no EAGLE/MTP draft weights.
   */
  mtpLayers: number;
  /**
   * config.json's `rope_scaling`; absent or null: none (vLLM's derived length is then max_position_embeddings).
   */
  ropeScaling?: ModelRopeScaling | null;
  /** DSpark γ from the draft checkpoint (Flash-0731: 5), null when the checkpoint has none. */
  dsparkBlockSize: number | null;
  /**
   * Whole-checkpoint weight bytes in GiB (FP4 experts + FP8 dense; third-party sizes,
   * docs/reference/pools-and-sizing.md §2.2).
   */
  checkpointGiB: number;
  /**
   * What SGLang splits over the parallel ranks (V-TP1, V-TP3): config.json's `num_attention_heads`, `o_groups`,
   * `n_routed_experts` and `moe_intermediate_size`. Absent or null when a custom model file does not give them;
   * the rules then check only what is known.
   */
  numAttentionHeads?: number | null;
  oGroups?: number | null;
  nRoutedExperts?: number | null;
  moeIntermediateSize?: number | null;
}

const GB_IN_GIB = 1e9 / 2 ** 30;

function alternating(first: [number, number], pairs: number, tail: number[]): number[] {
  return [...first, ...Array.from({ length: pairs }, () => [4, 128]).flat(), ...tail];
}

function preset(p: Omit<ModelPreset, "qkNopeHeadDim" | "contextLen" | "mtpLayers">): ModelPreset {
  return {
    ...p,
    qkNopeHeadDim: p.headDim - p.qkRopeHeadDim,
    contextLen: p.maxPositionEmbeddings,
    mtpLayers: p.compressRatios.length - p.numHiddenLayers,
  };
}

/** Flash's (and Flash-0731's) config.json: 64 heads, 8 output groups, 256 routed experts of width 2048. */
/**
 * Flash's rope_scaling as its DeepSeek-layout config.json gives it (test fixture flash-deepseek-layout, D49):
 * 65,536 × 16 = 1,048,576, so vLLM derives max_position_embeddings. The Pro and 0731 configs' rope facts are not
 * recorded in this repository: those presets carry none, and vLLM's derived length is max_position_embeddings.
 */
const FLASH_ROPE_SCALING: ModelRopeScaling = { type: "yarn", factor: 16, originalMaxPositionEmbeddings: 65_536 };

const FLASH_PARALLEL_SHAPE = { numAttentionHeads: 64, oGroups: 8, nRoutedExperts: 256, moeIntermediateSize: 2048 };

export const MODEL_PRESETS: Readonly<Record<string, ModelPreset>> = {
  "DeepSeek-V4-Flash": preset({
    name: "DeepSeek-V4-Flash",
    numHiddenLayers: 43,
    headDim: 512,
    qkRopeHeadDim: 64,
    indexHeadDim: 128,
    slidingWindow: 128,
    // [0, 0, (4, 128) × 20, 4] + one MTP entry [0]: 44 entries.
    compressRatios: alternating([0, 0], 20, [4, 0]),
    maxPositionEmbeddings: 1_048_576,
    ropeScaling: FLASH_ROPE_SCALING,
    dsparkBlockSize: null,
    checkpointGiB: 148.66 * GB_IN_GIB, // ≈ 138.45 GiB
    ...FLASH_PARALLEL_SHAPE,
  }),
  "DeepSeek-V4-Flash-0731": preset({
    name: "DeepSeek-V4-Flash-0731",
    numHiddenLayers: 43,
    headDim: 512,
    qkRopeHeadDim: 64,
    indexHeadDim: 128,
    slidingWindow: 128,
    // Same 43 target layers as Flash, three trailing DSpark/MTP entries: 46 entries.
    compressRatios: alternating([0, 0], 20, [4, 0, 0, 0]),
    maxPositionEmbeddings: 1_048_576,
    dsparkBlockSize: 5,
    checkpointGiB: 166.9 * GB_IN_GIB,
    ...FLASH_PARALLEL_SHAPE,
  }),
  "DeepSeek-V4-Pro": preset({
    name: "DeepSeek-V4-Pro",
    numHiddenLayers: 61,
    headDim: 512,
    qkRopeHeadDim: 64,
    indexHeadDim: 128,
    slidingWindow: 128,
    // [128, 128, (4, 128) × 29, 4] + [0]: 62 entries.
    compressRatios: alternating([128, 128], 29, [4, 0]),
    maxPositionEmbeddings: 1_048_576,
    dsparkBlockSize: null,
    checkpointGiB: 805 * GB_IN_GIB,
    numAttentionHeads: 128,
    oGroups: 16,
    nRoutedExperts: 384,
    moeIntermediateSize: 3072,
  }),
};

export const DEFAULT_MODEL = "DeepSeek-V4-Flash";

/** A custom model file: the preset fields in camelCase, or the HF config.json keys (snake_case). */
export const CustomModelSchema = z.strictObject({
  name: z.string().min(1).default("custom"),
  numHiddenLayers: z.int().positive(),
  headDim: z.int().positive(),
  qkRopeHeadDim: z.int().positive(),
  indexHeadDim: z.int().positive(),
  slidingWindow: z.int().positive(),
  compressRatios: z.array(z.int().nonnegative()).min(1),
  maxPositionEmbeddings: z.int().positive(),
  dsparkBlockSize: z.int().positive().nullable().default(null),
  checkpointGiB: z.number().positive().optional(),
  numAttentionHeads: z.int().positive().nullable().default(null),
  oGroups: z.int().positive().nullable().default(null),
  nRoutedExperts: z.int().positive().nullable().default(null),
  moeIntermediateSize: z.int().positive().nullable().default(null),
});

const HF_KEYS: Record<string, string> = {
  num_hidden_layers: "numHiddenLayers",
  head_dim: "headDim",
  qk_rope_head_dim: "qkRopeHeadDim",
  index_head_dim: "indexHeadDim",
  sliding_window: "slidingWindow",
  compress_ratios: "compressRatios",
  max_position_embeddings: "maxPositionEmbeddings",
  dspark_block_size: "dsparkBlockSize",
  checkpoint_gib: "checkpointGiB",
  num_attention_heads: "numAttentionHeads",
  o_groups: "oGroups",
  n_routed_experts: "nRoutedExperts",
  moe_intermediate_size: "moeIntermediateSize",
  name: "name",
};

export type CustomModelResult = { ok: true; model: ModelPreset } | { ok: false; issues: string[] };

/**
 * Parses a custom model object. HF config.json keys are mapped to the preset fields and other HF keys are
 * ignored; a camelCase object must have exactly the preset fields. The ratio list must cover every layer.
 */
export function parseCustomModel(raw: unknown): CustomModelResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { ok: false, issues: ["model config: must be a JSON object"] };
  const record = raw as Record<string, unknown>;
  const isHf = Object.keys(record).some((k) => k.includes("_"));
  const input: Record<string, unknown> = {};
  if (isHf) {
    for (const [key, field] of Object.entries(HF_KEYS)) if (key in record) input[field] = record[key];
  } else Object.assign(input, record);
  const parsed = CustomModelSchema.safeParse(input);
  if (!parsed.success)
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => `model config ${i.path.join(".") || "(root)"}: ${i.message}`),
    };
  const m = parsed.data;
  const issues: string[] = [];
  if (m.compressRatios.length < m.numHiddenLayers) {
    issues.push(
      `model config compressRatios: has ${m.compressRatios.length} entries, fewer than numHiddenLayers = ${m.numHiddenLayers}; give one ratio per layer (plus the MTP entries)`,
    );
  }
  if (m.qkRopeHeadDim >= m.headDim)
    issues.push(`model config qkRopeHeadDim = ${m.qkRopeHeadDim}: must be below headDim = ${m.headDim}`);
  if (issues.length) return { ok: false, issues };
  return {
    ok: true,
    model: {
      name: m.name,
      numHiddenLayers: m.numHiddenLayers,
      headDim: m.headDim,
      qkRopeHeadDim: m.qkRopeHeadDim,
      qkNopeHeadDim: m.headDim - m.qkRopeHeadDim,
      indexHeadDim: m.indexHeadDim,
      slidingWindow: m.slidingWindow,
      compressRatios: m.compressRatios,
      maxPositionEmbeddings: m.maxPositionEmbeddings,
      mtpLayers: m.compressRatios.length - m.numHiddenLayers,
      contextLen: m.maxPositionEmbeddings,
      dsparkBlockSize: m.dsparkBlockSize,
      checkpointGiB: m.checkpointGiB ?? Number.NaN,
      numAttentionHeads: m.numAttentionHeads,
      oGroups: m.oGroups,
      nRoutedExperts: m.nRoutedExperts,
      moeIntermediateSize: m.moeIntermediateSize,
    },
  };
}

const positive = z.int().positive();
const optionalCount = positive.nullable().optional();

/** What the resolution reads of a model: a preset, or what parseCustomModel / modelFromConfigJson returned. */
const ModelPresetSchema = z.object({
  name: z.string().min(1),
  numHiddenLayers: positive,
  headDim: positive,
  qkRopeHeadDim: positive,
  qkNopeHeadDim: positive,
  indexHeadDim: positive,
  slidingWindow: positive,
  compressRatios: z.array(z.int().nonnegative()).min(1),
  maxPositionEmbeddings: positive,
  contextLen: positive,
  mtpLayers: z.int().nonnegative(),
  ropeScaling: z
    .object({
      type: z.string().min(1),
      factor: z.number().positive().nullable(),
      originalMaxPositionEmbeddings: positive.nullable(),
    })
    .nullable()
    .optional(),
  dsparkBlockSize: positive.nullable(),
  /** NaN when the model file does not say. */
  checkpointGiB: z.union([z.number().nonnegative(), z.nan()]),
  numAttentionHeads: optionalCount,
  oGroups: optionalCount,
  nRoutedExperts: optionalCount,
  moeIntermediateSize: optionalCount,
});

/** Refuses a model that is not a ModelPreset (null, a config.json object, a field of the wrong type). */
export function requireModelPreset(model: unknown): asserts model is ModelPreset {
  if (typeof model !== "object" || model === null || Array.isArray(model))
    throw new ServerConfigError(
      "INVALID_TYPE",
      "model",
      model,
      "must be a model preset (MODEL_PRESETS, parseCustomModel)",
    );
  const parsed = ModelPresetSchema.safeParse(model);
  if (parsed.success) {
    if (parsed.data.compressRatios.length < parsed.data.numHiddenLayers)
      throw new ServerConfigError(
        "INVALID_ARGUMENT",
        "model.compressRatios",
        parsed.data.compressRatios.length,
        `must hold a ratio per layer (numHiddenLayers = ${parsed.data.numHiddenLayers})`,
      );
    return;
  }
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  const value = path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], model);
  const code = issue.code === "invalid_type" ? "INVALID_TYPE" : "INVALID_ARGUMENT";
  throw new ServerConfigError(code, `model.${path.join(".")}`, value, issue.message, { zodCode: issue.code });
}
