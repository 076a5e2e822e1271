/**
 * A DeepSeek-V4 checkpoint's config.json as a ModelPreset, in either layout it ships in:
 * - DeepSeek's: `compress_ratios` (one ratio per layer, 0 / 4 / 128), longer than `num_hidden_layers` by the
 *   MTP / DSpark draft layers, and `qk_rope_head_dim`;
 * - transformers': `layer_types` (exactly `num_hidden_layers` names), `compress_rates` keyed by those names,
 *   `num_nextn_predict_layers` for the draft layers and `partial_rotary_factor` for the rope share of `head_dim`.
 * Only what sizes KV is read (docs/reference/pools-and-sizing.md §2.1). A config we do not model is refused with
 * the key that decided it, never sized as something else. Pure: the caller reads the file (no Node built-ins).
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import { ServerConfigError } from "./errors.js";
import { MODEL_PRESETS, type ModelPreset, type ModelRopeScaling } from "./presets.js";
import { vllmDerivedMaxModelLen } from "./vllm/derived-max-len.js";

export type ModelConfigLayout = "deepseek" | "transformers";

export interface ModelConfigRead {
  /** The preset itself when every KV fact matches one, otherwise a model named by `options.name`. */
  model: ModelPreset;
  layout: ModelConfigLayout;
  /** The preset the facts match, null when none does. */
  preset: string | null;
}

export interface ModelConfigOptions {
  /** Name of a model that matches no preset (default "custom"). */
  name?: string;
  /** Where the config came from (a path), carried in every error's params as `file`. */
  file?: string;
}

/** The architectures SGLang's DSV4 branch serves as a target model (`DeepseekV4ForCausalLMNextN` is a draft). */
export const DSV4_ARCHITECTURE = "DeepseekV4ForCausalLM";
const DSV4_MODEL_TYPE = "deepseek_v4";
/** transformers' layer type names and the compression ratio each one stands for. */
const LAYER_TYPE_RATIO: Readonly<Record<string, number | null>> = {
  sliding_attention: 0,
  compressed_sparse_attention: null, // from compress_rates
  heavily_compressed_attention: null,
};
/** transformers' defaults for `compress_rates` (its DeepseekV4Config). */
const DEFAULT_COMPRESS_RATES: Readonly<Record<string, number>> = {
  compressed_sparse_attention: 4,
  heavily_compressed_attention: 128,
};
/** The ratios our pools and kernels model. */
const MODELLED_RATIOS = new Set([0, 4, 128]);
/** DeepSeek-V4.1's cross-layer sharing: layers that read another layer's KV, indexer or candidates. */
const CROSS_LAYER_KEYS = [
  "kv_source_layer_ids",
  "kv_source_layers",
  "index_source_layer_ids",
  "index_source_layers",
  "candidate_source_layer_id",
  "candidate_source_layer",
] as const;
const FIELD_PREFIX = "config.json ";

/** Reads a parsed config.json; throws ServerConfigError naming the config.json key at fault. */
export function modelFromConfigJson(raw: unknown, options: ModelConfigOptions = {}): ModelConfigRead {
  const reader = new ConfigReader(options.file);
  const config = reader.object(raw, "(root)");
  reader.architecture(config);
  reader.noCrossLayerSources(config);
  const layout: ModelConfigLayout = "layer_types" in config ? "transformers" : "deepseek";
  if (layout === "transformers" && "compress_ratios" in config)
    reader.fail("UNSUPPORTED_MODEL", "compress_ratios", config.compress_ratios, "cannot be given with layer_types");
  const numHiddenLayers = reader.int(config, "num_hidden_layers", 1);
  const headDim = reader.int(config, "head_dim", 1);
  const facts = {
    numHiddenLayers,
    headDim,
    qkRopeHeadDim: layout === "deepseek" ? reader.int(config, "qk_rope_head_dim", 1) : reader.ropeDim(config, headDim),
    indexHeadDim: reader.int(config, "index_head_dim", 1),
    slidingWindow: reader.int(config, "sliding_window", 1),
    compressRatios:
      layout === "deepseek"
        ? reader.deepseekRatios(config, numHiddenLayers)
        : reader.transformersRatios(config, numHiddenLayers),
    maxPositionEmbeddings: reader.int(config, "max_position_embeddings", 1),
    ropeScaling: reader.ropeScaling(config),
    dsparkBlockSize: reader.optionalInt(config, "dspark_block_size", 1),
  };
  if (facts.qkRopeHeadDim >= headDim)
    reader.fail("INVALID_ARGUMENT", "qk_rope_head_dim", facts.qkRopeHeadDim, `must be below head_dim = ${headDim}`);
  const parallel = reader.parallelShape(config);
  const preset = matchingPreset(facts, parallel);
  if (preset) return { model: withRope(preset, facts.ropeScaling), layout, preset: preset.name };
  return {
    model: {
      name: options.name ?? "custom",
      ...facts,
      ...parallel,
      qkNopeHeadDim: headDim - facts.qkRopeHeadDim,
      contextLen: facts.maxPositionEmbeddings,
      mtpLayers: facts.compressRatios.length - numHiddenLayers,
      checkpointGiB: Number.NaN,
    },
    layout,
    preset: null,
  };
}

type Facts = Pick<
  ModelPreset,
  | "numHiddenLayers"
  | "headDim"
  | "qkRopeHeadDim"
  | "indexHeadDim"
  | "slidingWindow"
  | "compressRatios"
  | "maxPositionEmbeddings"
  | "ropeScaling"
  | "dsparkBlockSize"
>;

/**
 * The preset itself when vLLM derives the same max length from the config's rope as from the preset's; otherwise
 * the preset with the config's rope (the KV facts, hence SGLang's sizing, are the preset's either way).
 */
function withRope(preset: ModelPreset, rope: ModelRopeScaling | null | undefined): ModelPreset {
  const read = vllmDerivedMaxModelLen({ maxPositionEmbeddings: preset.maxPositionEmbeddings, ropeScaling: rope });
  return read.maxTokens === vllmDerivedMaxModelLen(preset).maxTokens
    ? preset
    : { ...preset, ropeScaling: rope ?? null };
}

type ParallelShape = Pick<ModelPreset, "numAttentionHeads" | "oGroups" | "nRoutedExperts" | "moeIntermediateSize">;

/** config.json's keys that name what SGLang splits over the parallel ranks, and the ModelPreset field of each. */
const PARALLEL_KEYS = {
  num_attention_heads: "numAttentionHeads",
  o_groups: "oGroups",
  n_routed_experts: "nRoutedExperts",
  moe_intermediate_size: "moeIntermediateSize",
} as const satisfies Record<string, keyof ParallelShape>;

/**
 * The preset whose every KV fact equals these (the checkpoint size is not in config.json), and whose parallel
 * shape agrees with every one config.json gives.
 */
function matchingPreset(facts: Facts, parallel: ParallelShape): ModelPreset | undefined {
  const agrees = (p: ModelPreset) =>
    Object.values(PARALLEL_KEYS).every((field) => parallel[field] == null || parallel[field] === p[field]);
  return Object.values(MODEL_PRESETS).find(
    (p) =>
      agrees(p) &&
      p.numHiddenLayers === facts.numHiddenLayers &&
      p.headDim === facts.headDim &&
      p.qkRopeHeadDim === facts.qkRopeHeadDim &&
      p.indexHeadDim === facts.indexHeadDim &&
      p.slidingWindow === facts.slidingWindow &&
      p.maxPositionEmbeddings === facts.maxPositionEmbeddings &&
      p.dsparkBlockSize === facts.dsparkBlockSize &&
      p.compressRatios.length === facts.compressRatios.length &&
      p.compressRatios.every((r, i) => r === facts.compressRatios[i]),
  );
}

/** Typed reads of config.json keys; every refusal names the key (`config.json compress_ratios[2]`). */
class ConfigReader {
  constructor(private readonly file: string | undefined) {}

  fail(code: ErrorCode, key: string, value: unknown, rule: string, params: Record<string, unknown> = {}): never {
    const where = this.file === undefined ? {} : { file: this.file };
    throw new ServerConfigError(code, `${FIELD_PREFIX}${key}`, value, rule, { key, ...where, ...params });
  }

  object(value: unknown, key: string): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      this.fail("INVALID_TYPE", key, value, "must be a JSON object");
    return value as Record<string, unknown>;
  }

  int(config: Record<string, unknown>, key: string, min: number): number {
    if (!(key in config)) this.fail("INVALID_ARGUMENT", key, undefined, "is missing; a DeepSeek-V4 config.json has it");
    return this.intValue(config[key], key, min);
  }

  parallelShape(config: Record<string, unknown>): ParallelShape {
    const out: ParallelShape = {};
    for (const [key, field] of Object.entries(PARALLEL_KEYS)) out[field] = this.optionalInt(config, key, 1);
    return out;
  }

  /** `field` names the key in errors when it is nested (`rope_scaling.original_max_position_embeddings`). */
  optionalInt(config: Record<string, unknown>, key: string, min: number, field = key): number | null {
    const value = config[key];
    return value === undefined || value === null ? null : this.intValue(value, field, min);
  }

  intValue(value: unknown, key: string, min: number): number {
    if (typeof value !== "number") this.fail("INVALID_TYPE", key, value, "must be an integer");
    if (!Number.isSafeInteger(value) || value < min)
      this.fail("INVALID_ARGUMENT", key, value, `must be an integer ≥ ${min}`, { min });
    return value;
  }

  /**
   * `rope_scaling`, the facts vLLM's derived max length reads (vllm/derived-max-len.ts): the type (`rope_type`, or
   * the legacy `type` vLLM reads the same way), `factor` and, for `yarn`, `original_max_position_embeddings`.
   * transformers' per-layer-type `rope_parameters` is not read (D50).
   */
  ropeScaling(config: Record<string, unknown>): ModelRopeScaling | null {
    const raw = config.rope_scaling;
    if (raw === undefined || raw === null) return null;
    const rope = this.object(raw, "rope_scaling");
    const typeKey = "rope_type" in rope ? "rope_type" : "type";
    const type = rope[typeKey];
    if (typeof type !== "string" || type.length === 0)
      this.fail("INVALID_TYPE", `rope_scaling.${typeKey}`, type, "must name the rope type (yarn, default, ...)");
    const factor = rope.factor;
    if (factor !== undefined && factor !== null && (typeof factor !== "number" || !(factor > 0) || factor === Infinity))
      this.fail("INVALID_ARGUMENT", "rope_scaling.factor", factor, "must be a finite number > 0");
    const originalKey = "rope_scaling.original_max_position_embeddings";
    const original = this.optionalInt(rope, "original_max_position_embeddings", 1, originalKey);
    if (type === "yarn" && original === null)
      this.fail("INVALID_ARGUMENT", originalKey, undefined, "is missing: a yarn rope_scaling starts from it");
    return { type, factor: typeof factor === "number" ? factor : null, originalMaxPositionEmbeddings: original };
  }

  /** SGLang's DSV4 branch keys on `architectures[0]`; a config without it must say `model_type: deepseek_v4`. */
  architecture(config: Record<string, unknown>): void {
    const archs = config.architectures;
    if (archs === undefined || archs === null) {
      if (config.model_type === DSV4_MODEL_TYPE) return;
      this.fail(
        "UNSUPPORTED_MODEL",
        "model_type",
        config.model_type,
        `names no DeepSeek-V4 model: give architectures ["${DSV4_ARCHITECTURE}"] or model_type "${DSV4_MODEL_TYPE}"`,
      );
    }
    if (!Array.isArray(archs) || archs.length === 0)
      this.fail("INVALID_TYPE", "architectures", archs, "must be a non-empty list of architecture names");
    if (archs[0] !== DSV4_ARCHITECTURE)
      this.fail(
        "UNSUPPORTED_MODEL",
        "architectures[0]",
        archs[0],
        `is not modelled: dsv4-kv sizes ${DSV4_ARCHITECTURE} checkpoints only (a NextN draft checkpoint is no target)`,
        { architecture: archs[0] },
      );
  }

  /** DeepSeek-V4.1 layers read KV or indexer state of other layers: pools sized per layer would be wrong. */
  noCrossLayerSources(config: Record<string, unknown>): void {
    for (const key of CROSS_LAYER_KEYS) {
      const value = config[key];
      if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) continue;
      this.fail(
        "UNSUPPORTED_MODEL",
        key,
        value,
        "cross-layer KV / indexer sources (DeepSeek-V4.1) are not modelled: every DeepSeek-V4 layer keeps its own KV",
      );
    }
  }

  ratio(value: unknown, key: string): number {
    const r = this.intValue(value, key, 0);
    if (!MODELLED_RATIOS.has(r))
      this.fail(
        "UNSUPPORTED_MODEL",
        key,
        r,
        "is not modelled: DeepSeek-V4 layers have ratio 0 (SWA only), 4 or 128 (ratios 1 and 2 are DeepSeek-V4.1's)",
        { modelled: [...MODELLED_RATIOS] },
      );
    return r;
  }

  /** DeepSeek's list: the target layers, then one entry per MTP / DSpark draft layer. */
  deepseekRatios(config: Record<string, unknown>, layers: number): number[] {
    const list = config.compress_ratios;
    if (!Array.isArray(list))
      this.fail("INVALID_TYPE", "compress_ratios", list, "must be a list of per-layer ratios (or give layer_types)");
    const ratios = list.map((r, i) => this.ratio(r, `compress_ratios[${i}]`));
    if (ratios.length < layers)
      this.fail(
        "INVALID_ARGUMENT",
        "compress_ratios",
        list,
        `has ${ratios.length} entries, fewer than num_hidden_layers = ${layers}: give one ratio per layer`,
        { entries: ratios.length, layers },
      );
    const nextn = this.optionalInt(config, "num_nextn_predict_layers", 0);
    if (nextn !== null && nextn > ratios.length - layers)
      this.fail(
        "INVALID_ARGUMENT",
        "num_nextn_predict_layers",
        nextn,
        `exceeds the ${ratios.length - layers} compress_ratios entries beyond num_hidden_layers = ${layers}`,
        { draftEntries: ratios.length - layers },
      );
    return ratios;
  }

  /** transformers' names per target layer; the draft layers (SWA only, ratio 0) come from num_nextn_predict_layers. */
  transformersRatios(config: Record<string, unknown>, layers: number): number[] {
    const names = config.layer_types;
    if (!Array.isArray(names)) this.fail("INVALID_TYPE", "layer_types", names, "must be a list of layer type names");
    if (names.length !== layers)
      this.fail(
        "INVALID_ARGUMENT",
        "layer_types",
        names,
        `has ${names.length} entries: must equal num_hidden_layers = ${layers}`,
        { entries: names.length, layers },
      );
    const rates = this.compressRates(config);
    const ratios = names.map((name, i) => {
      const key = `layer_types[${i}]`;
      if (typeof name !== "string" || !Object.hasOwn(LAYER_TYPE_RATIO, name))
        this.fail("UNSUPPORTED_MODEL", key, name, `is not a DeepSeek-V4 layer type (${layerTypeList()})`, {
          layerTypes: Object.keys(LAYER_TYPE_RATIO),
        });
      return LAYER_TYPE_RATIO[name] ?? rates[name]!;
    });
    if (!("num_nextn_predict_layers" in config))
      this.fail(
        "INVALID_ARGUMENT",
        "num_nextn_predict_layers",
        undefined,
        "is missing: with layer_types it is the only source of the checkpoint's MTP layers",
      );
    const draft = this.intValue(config.num_nextn_predict_layers, "num_nextn_predict_layers", 0);
    return [...ratios, ...Array.from({ length: draft }, () => 0)];
  }

  /** `compress_rates` by layer type (transformers' defaults when absent; its legacy scalar keys fold in). */
  compressRates(config: Record<string, unknown>): Record<string, number> {
    const rates: Record<string, number> = { ...DEFAULT_COMPRESS_RATES };
    const given = config.compress_rates;
    if (given !== undefined && given !== null) {
      for (const [name, value] of Object.entries(this.object(given, "compress_rates"))) {
        const key = `compress_rates.${name}`;
        if (!Object.hasOwn(DEFAULT_COMPRESS_RATES, name))
          this.fail("UNSUPPORTED_MODEL", key, value, `is not a compressed layer type (${layerTypeList()})`);
        rates[name] = this.intValue(value, key, 1);
      }
    }
    const legacy = {
      compress_rate_csa: "compressed_sparse_attention",
      compress_rate_hca: "heavily_compressed_attention",
    };
    for (const [key, name] of Object.entries(legacy))
      if (config[key] !== undefined && config[key] !== null) rates[name] = this.intValue(config[key], key, 1);
    for (const [name, expected] of Object.entries(DEFAULT_COMPRESS_RATES))
      if (rates[name] !== expected)
        this.fail(
          "UNSUPPORTED_MODEL",
          `compress_rates.${name}`,
          rates[name],
          `is not modelled: DeepSeek-V4's ${name} layers compress by ${expected}`,
          { expected },
        );
    return rates;
  }

  /** transformers keeps the rope share of head_dim as `partial_rotary_factor` (qk_rope_head_dim = head_dim × it). */
  ropeDim(config: Record<string, unknown>, headDim: number): number {
    if ("qk_rope_head_dim" in config) return this.int(config, "qk_rope_head_dim", 1);
    const key = "partial_rotary_factor";
    const factor = config[key];
    if (typeof factor !== "number" || !Number.isFinite(factor) || factor <= 0 || factor >= 1)
      this.fail("INVALID_ARGUMENT", key, factor, "must be a number in (0, 1) (or give qk_rope_head_dim)");
    const dim = headDim * factor;
    if (!Number.isInteger(dim))
      this.fail("INVALID_ARGUMENT", key, factor, `× head_dim = ${dim} is not a whole number of dimensions`);
    return dim;
  }
}

function layerTypeList(): string {
  return Object.keys(LAYER_TYPE_RATIO).join(", ");
}

/** A config.json for a preset in either layout: what a checkpoint of that model ships (tests and docs). */
export function presetConfigJson(preset: ModelPreset, layout: ModelConfigLayout): Record<string, unknown> {
  const common = {
    architectures: [DSV4_ARCHITECTURE],
    model_type: DSV4_MODEL_TYPE,
    num_hidden_layers: preset.numHiddenLayers,
    head_dim: preset.headDim,
    index_head_dim: preset.indexHeadDim,
    sliding_window: preset.slidingWindow,
    max_position_embeddings: preset.maxPositionEmbeddings,
    num_nextn_predict_layers: preset.mtpLayers,
    ...Object.fromEntries(
      Object.entries(PARALLEL_KEYS).flatMap(([key, field]) => (preset[field] == null ? [] : [[key, preset[field]]])),
    ),
    ...(preset.dsparkBlockSize === null ? {} : { dspark_block_size: preset.dsparkBlockSize }),
  };
  if (layout === "deepseek")
    return { ...common, qk_rope_head_dim: preset.qkRopeHeadDim, compress_ratios: [...preset.compressRatios] };
  const name = (r: number) =>
    Object.entries(LAYER_TYPE_RATIO).find(([type, ratio]) => (ratio ?? DEFAULT_COMPRESS_RATES[type]) === r)![0];
  return {
    ...common,
    partial_rotary_factor: preset.qkRopeHeadDim / preset.headDim,
    layer_types: preset.compressRatios.slice(0, preset.numHiddenLayers).map(name),
    compress_rates: { ...DEFAULT_COMPRESS_RATES },
  };
}
