/**
 * A DeepSeek-V4.1 checkpoint's config as a V41ModelPreset (docs/reference/deepseek-v4.1.md §1.2), in the layouts it
 * ships in: the Hugging Face `config.json` (the text model nested in `text_config`, or already flat with
 * `model_type: deepseek_v41`) and DeepSeek's reference `inference/config.json` (short names: `n_layers`,
 * `rope_head_dim`, `window_size`, `kv_source_layers`, `n_mtp_layers`, …). A config that does not fit the model (a
 * reader before its source, an unknown ratio, two spellings that disagree) is refused naming the key. Pure.
 */
import { MemoryPoolError, v41Sources } from "@dsv4-kv/memory-pool";
import type { ErrorCode } from "@dsv4-kv/errors";
import { ServerConfigError } from "../errors.js";
import { V41_MODEL_PRESETS, type V41ModelPreset } from "./presets.js";

export type V41ConfigLayout = "hf-nested" | "hf-flat" | "inference";

export interface V41ConfigRead {
  model: V41ModelPreset;
  layout: V41ConfigLayout;
  /** The preset whose every KV fact the config repeats, null when none does. */
  preset: string | null;
}

export const V41_ARCHITECTURES = ["DeepseekV41ForCausalLM", "DeepseekV41ForConditionalGeneration"] as const;
/** `deepseek_v41` and the legacy spellings SGLang's V4.1 config class also registers. */
export const V41_MODEL_TYPES = ["deepseek_v41", "deepseek_v41_text", "deepseek_v4.1", "deepseek_v4.1_text"] as const;

/** Each fact: its Hugging Face key and the reference `inference/config.json` key. */
const KEYS = {
  layers: ["num_hidden_layers", "n_layers"],
  headDim: ["head_dim", "head_dim"],
  rope: ["qk_rope_head_dim", "rope_head_dim"],
  indexHeadDim: ["index_head_dim", "index_head_dim"],
  window: ["sliding_window", "window_size"],
  ratios: ["compress_ratios", "compress_ratios"],
  kvSources: ["kv_source_layer_ids", "kv_source_layers"],
  indexSources: ["index_source_layer_ids", "index_source_layers"],
  candidate: ["candidate_source_layer_id", "candidate_source_layer"],
  nextn: ["num_nextn_predict_layers", "n_mtp_layers"],
  dsparkTargets: ["dspark_target_layer_ids", "dspark_target_layer_ids"],
  dsparkBlock: ["dspark_block_size", "dspark_block_size"],
  context: ["max_position_embeddings", "max_seq_len"],
  heads: ["num_attention_heads", "n_heads"],
  oGroups: ["o_groups", "o_groups"],
  experts: ["n_routed_experts", "n_routed_experts"],
  moeWidth: ["moe_intermediate_size", "moe_inter_dim"],
} as const;
type Fact = keyof typeof KEYS;

/** True when a parsed config names DeepSeek-V4.1 (architecture, model type, or a V4.1-only key). */
export function isV41Config(raw: unknown): boolean {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return false;
  const root = raw as Record<string, unknown>;
  const text = isObject(root.text_config) ? root.text_config : {};
  const archs = Array.isArray(root.architectures) ? root.architectures : [];
  return (
    archs.some((a) => (V41_ARCHITECTURES as readonly unknown[]).includes(a)) ||
    [root.model_type, text.model_type].some((t) => (V41_MODEL_TYPES as readonly unknown[]).includes(t)) ||
    ["kv_source_layer_ids", "kv_source_layers"].some((k) => k in root || k in text)
  );
}

export function modelV41FromConfigJson(raw: unknown, options: { name?: string; file?: string } = {}): V41ConfigRead {
  const r = new V41Reader(options.file);
  const root = r.object(raw, "(root)");
  r.architecture(root);
  const layout: V41ConfigLayout = isObject(root.text_config)
    ? "hf-nested"
    : "n_layers" in root && !("num_hidden_layers" in root)
      ? "inference"
      : "hf-flat";
  // SGLang hoists text_config over the root; its keys win.
  r.scope = layout === "hf-nested" ? { ...root, ...(root.text_config as Record<string, unknown>) } : root;
  const model = r.model(options.name ?? "custom");
  const preset = Object.values(V41_MODEL_PRESETS).find((p) => sameKvFacts(p, model));
  return preset ? { model: preset, layout, preset: preset.name } : { model, layout, preset: null };
}

function sameKvFacts(p: V41ModelPreset, m: V41ModelPreset): boolean {
  const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const scalar = [
    "numHiddenLayers",
    "headDim",
    "qkRopeHeadDim",
    "indexHeadDim",
    "slidingWindow",
    "draftLayers",
    "dsparkBlockSize",
    "candidateSourceLayerId",
    "maxPositionEmbeddings",
  ] as const;
  const lists = ["compressRatios", "kvSourceLayerIds", "indexSourceLayerIds", "dsparkTargetLayerIds"] as const;
  const parallel = ["numAttentionHeads", "oGroups", "nRoutedExperts", "moeIntermediateSize"] as const;
  return (
    scalar.every((k) => p[k] === m[k]) &&
    lists.every((k) => same(p[k], m[k])) &&
    parallel.every((k) => Number.isNaN(m[k]) || p[k] === m[k])
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class V41Reader {
  scope: Record<string, unknown> = {};
  constructor(private readonly file: string | undefined) {}

  fail(code: ErrorCode, key: string, value: unknown, rule: string, params: Record<string, unknown> = {}): never {
    const where = this.file === undefined ? {} : { file: this.file };
    throw new ServerConfigError(code, `config.json ${key}`, value, rule, { key, ...where, ...params });
  }

  object(value: unknown, key: string): Record<string, unknown> {
    if (!isObject(value)) this.fail("INVALID_TYPE", key, value, "must be a JSON object");
    return value;
  }

  architecture(root: Record<string, unknown>): void {
    if (!isV41Config(root))
      this.fail(
        "UNSUPPORTED_MODEL",
        "architectures",
        root.architectures,
        `names no DeepSeek-V4.1 model: give architectures ["${V41_ARCHITECTURES[0]}"], model_type "deepseek_v41" or ` +
          "kv_source_layer_ids",
      );
  }

  /** The key present for `fact` (both spellings must agree), or null when neither is. */
  key(fact: Fact): string | null {
    const [hf, short] = KEYS[fact];
    const has = (k: string) => this.scope[k] !== undefined && this.scope[k] !== null;
    if (has(hf) && has(short) && hf !== short && JSON.stringify(this.scope[hf]) !== JSON.stringify(this.scope[short]))
      this.fail(
        "INVALID_ARGUMENT",
        short,
        this.scope[short],
        `disagrees with ${hf} = ${JSON.stringify(this.scope[hf])}`,
      );
    return has(hf) ? hf : has(short) ? short : null;
  }

  int(fact: Fact, min: number, fallback?: number): number {
    const key = this.key(fact);
    if (key === null) {
      if (fallback !== undefined) return fallback;
      this.fail("INVALID_ARGUMENT", KEYS[fact][0], undefined, "is missing; a DeepSeek-V4.1 config has it");
    }
    return this.intValue(this.scope[key], key, min);
  }

  intValue(value: unknown, key: string, min: number): number {
    if (typeof value !== "number") this.fail("INVALID_TYPE", key, value, "must be an integer");
    if (!Number.isSafeInteger(value) || value < min)
      this.fail("INVALID_ARGUMENT", key, value, `must be an integer ≥ ${min}`, { min });
    return value;
  }

  list(fact: Fact, required: boolean): { key: string; values: number[] } {
    const key = this.key(fact) ?? KEYS[fact][0];
    const value = this.scope[key];
    if (value === undefined || value === null) {
      if (required) this.fail("INVALID_ARGUMENT", key, undefined, "is missing; a DeepSeek-V4.1 config has it");
      return { key, values: [] };
    }
    if (!Array.isArray(value)) this.fail("INVALID_TYPE", key, value, "must be a list of integers");
    return { key, values: value.map((v, i) => this.intValue(v, `${key}[${i}]`, 0)) };
  }

  model(name: string): V41ModelPreset {
    const L = this.int("layers", 1);
    const headDim = this.int("headDim", 1);
    const rope = this.int("rope", 1);
    if (rope >= headDim) this.fail("INVALID_ARGUMENT", this.key("rope")!, rope, `must be below head_dim = ${headDim}`);
    const ratios = this.list("ratios", true);
    const kv = this.list("kvSources", true);
    const draftLayers = this.draftLayers(L, ratios);
    const context = this.int("context", 1, -1);
    const model: V41ModelPreset = {
      name,
      generation: "V4.1",
      hfId: "",
      numHiddenLayers: L,
      headDim,
      qkRopeHeadDim: rope,
      qkNopeHeadDim: headDim - rope,
      indexHeadDim: this.int("indexHeadDim", 1),
      slidingWindow: this.int("window", 1),
      compressRatios: ratios.values,
      kvSourceLayerIds: kv.values,
      indexSourceLayerIds: [],
      candidateSourceLayerId: -1,
      dsparkTargetLayerIds: this.list("dsparkTargets", false).values,
      draftLayers,
      dsparkBlockSize: this.int("dsparkBlock", 1, Number.NaN),
      maxPositionEmbeddings: context,
      contextLen: context,
      numAttentionHeads: this.int("heads", 1, Number.NaN),
      oGroups: this.int("oGroups", 1, Number.NaN),
      nRoutedExperts: this.int("experts", 1, Number.NaN),
      moeIntermediateSize: this.int("moeWidth", 1, Number.NaN),
      checkpointGiB: Number.NaN,
    };
    this.sources(model, ratios.key, kv.key);
    this.indexSources(model);
    if (context === -1) this.contextFromPreset(model);
    return model;
  }

  /** The reference inference config may omit the context length: take the preset's when every other fact agrees. */
  contextFromPreset(model: V41ModelPreset): void {
    const preset = Object.values(V41_MODEL_PRESETS).find((p) =>
      sameKvFacts(p, { ...model, maxPositionEmbeddings: p.maxPositionEmbeddings }),
    );
    if (!preset)
      this.fail("INVALID_ARGUMENT", KEYS.context[0], undefined, "is missing and the other facts match no preset");
    model.maxPositionEmbeddings = preset.maxPositionEmbeddings;
    model.contextLen = preset.contextLen;
  }

  /** DSpark stages: `dspark_target_layer_ids`, else the MTP count; the ratio tail must hold that many 0 entries. */
  draftLayers(L: number, ratios: { key: string; values: number[] }): number {
    if (ratios.values.length < L)
      this.fail("INVALID_ARGUMENT", ratios.key, ratios.values, `has ${ratios.values.length} entries, fewer than ${L}`);
    const tail = ratios.values.length - L;
    const nextn = this.int("nextn", 0, tail);
    if (nextn !== tail)
      this.fail(
        "INVALID_ARGUMENT",
        this.key("nextn")!,
        nextn,
        `must equal the ${tail} ${ratios.key} entries beyond the ${L} target layers`,
        { draftEntries: tail },
      );
    const targets = this.list("dsparkTargets", false);
    targets.values.forEach((layer, i) => {
      if (layer >= L) this.fail("INVALID_ARGUMENT", `${targets.key}[${i}]`, layer, `must be a target layer (< ${L})`);
    });
    return targets.values.length > 0 ? targets.values.length : nextn;
  }

  /** memory-pool's rules for ratios and KV sources, with its field names turned back into this config's keys. */
  sources(model: V41ModelPreset, ratiosKey: string, kvKey: string): void {
    try {
      v41Sources(model);
    } catch (e) {
      if (!(e instanceof MemoryPoolError)) throw e;
      const key = e.field.replace("compressRatios", ratiosKey).replace("kvSourceLayerIds", kvKey);
      this.fail(e.code === "INVALID_RATIO" ? "UNSUPPORTED_MODEL" : "INVALID_ARGUMENT", key, e.value, e.rule, {
        ...e.params,
      });
    }
  }

  /** Index sources: compressed target layers, one of each ratio at or before every layer of that ratio. */
  indexSources(model: V41ModelPreset): void {
    const idx = this.list("indexSources", true);
    const ratioOf = (l: number) => model.compressRatios[l]!;
    idx.values.forEach((layer, i) => {
      const r = layer < model.numHiddenLayers ? ratioOf(layer) : 0;
      if (r !== 1 && r !== 2)
        this.fail("INVALID_ARGUMENT", `${idx.key}[${i}]`, layer, "must name a ratio-1 or ratio-2 target layer");
    });
    model.compressRatios.slice(0, model.numHiddenLayers).forEach((r, layer) => {
      if ((r === 1 || r === 2) && !idx.values.some((s) => s <= layer && ratioOf(s) === r))
        this.fail(
          "INVALID_ARGUMENT",
          idx.key,
          idx.values,
          `has no ratio-${r} index source at or before layer ${layer}`,
        );
    });
    const candidate = this.int("candidate", -1, -1);
    if (candidate !== -1 && !idx.values.includes(candidate))
      this.fail("INVALID_ARGUMENT", this.key("candidate")!, candidate, `must be one of ${idx.key} (or -1)`);
    Object.assign(model, { indexSourceLayerIds: idx.values, candidateSourceLayerId: candidate });
  }
}
