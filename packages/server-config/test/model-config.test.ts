import { thrownError } from "@dsv4-kv/errors/testing";
import { describe, expect, it } from "vitest";
import {
  MODEL_PRESETS,
  ServerConfigError,
  modelFromConfigJson,
  resolveModelName,
  type ModelConfigLayout,
} from "../src/index.js";
import { presetConfigJson } from "../src/testing.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const LAYOUTS: readonly ModelConfigLayout[] = ["deepseek", "transformers"];

const refusal = (run: () => unknown): ServerConfigError => thrownError(run, ServerConfigError);
const refused = (raw: unknown) => refusal(() => modelFromConfigJson(raw));
const flashConfig = (layout: ModelConfigLayout, more: Record<string, unknown> = {}) => ({
  ...presetConfigJson(FLASH, layout),
  ...more,
});

describe("ModelPreset facts for the start-up rules", () => {
  it("each preset carries its positions and MTP layers", () => {
    expect(Object.values(MODEL_PRESETS).map((p) => [p.name, p.maxPositionEmbeddings, p.mtpLayers])).toEqual([
      ["DeepSeek-V4-Flash", 1_048_576, 1],
      ["DeepSeek-V4-Flash-0731", 1_048_576, 3],
      ["DeepSeek-V4-Pro", 1_048_576, 1],
    ]);
  });
});

describe("modelFromConfigJson: both layouts", () => {
  for (const preset of Object.values(MODEL_PRESETS))
    for (const layout of LAYOUTS)
      it(`${preset.name}, ${layout} layout → exactly the preset`, () => {
        const read = modelFromConfigJson(JSON.parse(JSON.stringify(presetConfigJson(preset, layout))));
        expect(read).toEqual({ model: preset, layout, preset: preset.name });
        expect(read.model).toBe(preset);
      });

  it("the two layouts differ as documented", () => {
    const ds = presetConfigJson(FLASH, "deepseek");
    const tf = presetConfigJson(FLASH, "transformers");
    expect(ds.compress_ratios).toHaveLength(44);
    expect(ds).not.toHaveProperty("layer_types");
    expect(tf.layer_types).toHaveLength(43);
    expect((tf.layer_types as string[]).slice(0, 4)).toEqual([
      "sliding_attention",
      "sliding_attention",
      "compressed_sparse_attention",
      "heavily_compressed_attention",
    ]);
    expect(tf).toMatchObject({
      partial_rotary_factor: 0.125,
      compress_rates: { compressed_sparse_attention: 4, heavily_compressed_attention: 128 },
    });
  });

  it("facts matching no preset give a custom model (no checkpoint size)", () => {
    const ratios = [0, 4, 128, 4, 0, 0];
    const read = modelFromConfigJson(flashConfig("deepseek", { num_hidden_layers: 4, compress_ratios: ratios }), {
      name: "my-ckpt",
    });
    expect(read.preset).toBeNull();
    expect(read.model).toMatchObject({
      name: "my-ckpt",
      numHiddenLayers: 4,
      compressRatios: ratios,
      mtpLayers: 2,
      qkNopeHeadDim: 448,
      contextLen: 1_048_576,
    });
    expect(read.model.checkpointGiB).toBeNaN();
  });

  it("a checkpoint with a shorter context is not the preset", () => {
    const read = modelFromConfigJson(flashConfig("deepseek", { max_position_embeddings: 65_536 }));
    expect(read.preset).toBeNull();
    expect(read.model).toMatchObject({ maxPositionEmbeddings: 65_536, contextLen: 65_536, name: "custom" });
  });

  it("the transformers layout: legacy compress_rate_* keys and qk_rope_head_dim are read", () => {
    const { compress_rates: _, partial_rotary_factor: __, ...rest } = presetConfigJson(FLASH, "transformers");
    const read = modelFromConfigJson({ ...rest, compress_rate_csa: 4, compress_rate_hca: 128, qk_rope_head_dim: 64 });
    expect(read.model).toBe(FLASH);
  });

  it("architectures may be absent when model_type says deepseek_v4", () => {
    const { architectures: _, ...rest } = presetConfigJson(FLASH, "deepseek");
    expect(modelFromConfigJson(rest).model).toBe(FLASH);
  });
});

describe("modelFromConfigJson: what we do not model is refused, naming the key", () => {
  it("DeepSeek-V4.1's ratios 1 and 2", () => {
    const ratios = [...FLASH.compressRatios];
    ratios[2] = 2;
    const e = refused(flashConfig("deepseek", { compress_ratios: ratios }));
    expect(e).toMatchObject({ code: "UNSUPPORTED_MODEL", field: "config.json compress_ratios[2]", value: 2 });
    expect(e.params).toMatchObject({ key: "compress_ratios[2]" });
    ratios[2] = 1;
    expect(refused(flashConfig("deepseek", { compress_ratios: ratios })).value).toBe(1);
  });

  it("DeepSeek-V4.1's cross-layer KV sources", () => {
    const e = refused(flashConfig("deepseek", { kv_source_layer_ids: [2, 5] }));
    expect(e).toMatchObject({ code: "UNSUPPORTED_MODEL", field: "config.json kv_source_layer_ids" });
    expect(refused(flashConfig("transformers", { index_source_layer_ids: [2] })).field).toBe(
      "config.json index_source_layer_ids",
    );
    // An empty list shares nothing.
    expect(modelFromConfigJson(flashConfig("deepseek", { kv_source_layer_ids: [] })).model).toBe(FLASH);
  });

  it("another architecture, and a draft-only NextN checkpoint", () => {
    const llama = { architectures: ["LlamaForCausalLM"], model_type: "llama", num_hidden_layers: 32 };
    expect(refused(llama)).toMatchObject({
      code: "UNSUPPORTED_MODEL",
      field: "config.json architectures[0]",
      value: "LlamaForCausalLM",
    });
    expect(refused(flashConfig("deepseek", { architectures: ["DeepseekV4ForCausalLMNextN"] })).code).toBe(
      "UNSUPPORTED_MODEL",
    );
    expect(refused({ model_type: "deepseek_v3" })).toMatchObject({ field: "config.json model_type" });
  });

  it("transformers layout: unknown layer type, other rates, wrong length, missing draft count", () => {
    const types = [...(presetConfigJson(FLASH, "transformers").layer_types as string[])];
    types[5] = "full_attention";
    expect(refused(flashConfig("transformers", { layer_types: types }))).toMatchObject({
      code: "UNSUPPORTED_MODEL",
      field: "config.json layer_types[5]",
    });
    expect(refused(flashConfig("transformers", { compress_rates: { compressed_sparse_attention: 2 } }))).toMatchObject({
      code: "UNSUPPORTED_MODEL",
      field: "config.json compress_rates.compressed_sparse_attention",
    });
    expect(refused(flashConfig("transformers", { compress_rates: { sliding_attention: 1 } })).field).toBe(
      "config.json compress_rates.sliding_attention",
    );
    expect(refused(flashConfig("transformers", { layer_types: types.slice(0, 40) }))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "config.json layer_types",
    });
    const { num_nextn_predict_layers: _, ...noDraft } = presetConfigJson(FLASH, "transformers");
    expect(refused(noDraft).field).toBe("config.json num_nextn_predict_layers");
    expect(refused(flashConfig("transformers", { partial_rotary_factor: 0.1 })).field).toBe(
      "config.json partial_rotary_factor",
    );
  });

  it("both layouts at once", () => {
    expect(refused(flashConfig("transformers", { compress_ratios: [...FLASH.compressRatios] })).field).toBe(
      "config.json compress_ratios",
    );
  });

  it("strict values: no coercion, no missing facts, no short ratio lists, consistent draft counts", () => {
    expect(refused(flashConfig("deepseek", { head_dim: "512" }))).toMatchObject({
      code: "INVALID_TYPE",
      field: "config.json head_dim",
    });
    const { sliding_window: _, ...noWindow } = presetConfigJson(FLASH, "deepseek");
    expect(refused(noWindow)).toMatchObject({ code: "INVALID_ARGUMENT", field: "config.json sliding_window" });
    expect(refused(flashConfig("deepseek", { compress_ratios: [0, 0, 4] })).field).toBe("config.json compress_ratios");
    expect(refused(flashConfig("deepseek", { num_nextn_predict_layers: 2 })).field).toBe(
      "config.json num_nextn_predict_layers",
    );
    expect(refused(flashConfig("deepseek", { qk_rope_head_dim: 512 })).field).toBe("config.json qk_rope_head_dim");
    expect(refused(flashConfig("deepseek", { num_hidden_layers: 2 ** 60 })).code).toBe("INVALID_ARGUMENT");
    expect(refused([1, 2])).toMatchObject({ code: "INVALID_TYPE", field: "config.json (root)" });
  });

  it("carries the file it came from", () => {
    const e = refusal(() => modelFromConfigJson({ architectures: ["X"] }, { file: "/ckpt/config.json" }));
    expect(e.params).toMatchObject({ file: "/ckpt/config.json" });
  });
});

describe("resolveModelName", () => {
  const resolved = (spec: string) => resolveModelName(spec, "--model");

  it("preset names in any case", () => {
    expect(resolved("DeepSeek-V4-Flash")).toMatchObject({ preset: FLASH, resolvedAs: "preset DeepSeek-V4-Flash" });
    expect(resolved("deepseek-v4-flash").preset).toBe(FLASH);
    expect(resolved("DEEPSEEK-V4-PRO").preset.name).toBe("DeepSeek-V4-Pro");
    expect(resolved("deepseek-v4-flash-0731").preset.name).toBe("DeepSeek-V4-Flash-0731");
  });

  it("Hugging Face ids", () => {
    expect(resolved("deepseek-ai/DeepSeek-V4-Flash")).toMatchObject({ preset: FLASH, owner: "deepseek-ai" });
    expect(resolved("deepseek-ai/DeepSeek-V4-Flash-0731").preset.name).toBe("DeepSeek-V4-Flash-0731");
    expect(resolved("deepseek-ai/DeepSeek-V4-Pro").resolvedAs).toBe(
      '"deepseek-ai/DeepSeek-V4-Pro" → preset DeepSeek-V4-Pro',
    );
  });

  it("quantisation and variant suffixes resolve to the architecture's preset, saying so", () => {
    const fp8 = resolved("deepseek-ai/DeepSeek-V4-Flash-FP8");
    expect(fp8).toMatchObject({ preset: FLASH, suffixes: ["FP8"] });
    expect(fp8.resolvedAs).toMatch(/→ preset DeepSeek-V4-Flash \(quantisation -FP8: same KV layout/);
    expect(resolved("DeepSeek-V4-Pro-w4a8")).toMatchObject({ suffixes: ["w4a8"], preset: { name: "DeepSeek-V4-Pro" } });
    expect(resolved("deepseek-v4-flash-0731-nvfp4").preset.name).toBe("DeepSeek-V4-Flash-0731");
    const base = resolved("deepseek-ai/DeepSeek-V4-Flash-Base");
    expect(base.suffixes).toEqual(["Base"]);
    expect(base.resolvedAs).toMatch(/variant -Base: same architecture/);
    expect(resolved("DeepSeek-V4-Flash-Base-FP8").suffixes).toEqual(["Base", "FP8"]);
    expect(resolved("someone/DeepSeek-V4-Flash-NVFP4").resolvedAs).toMatch(/by someone/);
  });

  it("a misspelt name is refused with a suggestion", () => {
    const e = refusal(() => resolved("DeepSeek-V4-Flahs"));
    expect(e).toMatchObject({ code: "UNKNOWN_MODEL", field: "--model", value: "DeepSeek-V4-Flahs" });
    expect(e.params).toMatchObject({ suggestion: "DeepSeek-V4-Flash" });
    expect(e.message).toMatch(/unknown preset.*did you mean "DeepSeek-V4-Flash"/);
    expect(refusal(() => resolved("DeepSeek-V4-Flash-XYZ")).code).toBe("UNKNOWN_MODEL");
  });

  it("another DeepSeek version gets no V4 suggestion", () => {
    const e = refusal(() => resolved("deepseek-ai/DeepSeek-V4.1-Flash"));
    expect(e.params).toMatchObject({ version: "4.1" });
    expect(e.params).not.toHaveProperty("suggestion");
    expect(refusal(() => resolved("DeepSeek-V3")).params).not.toHaveProperty("suggestion");
  });

  it("a suffix alone, or a path-like name, is no preset", () => {
    expect(refusal(() => resolved("FP8")).code).toBe("UNKNOWN_MODEL");
    expect(refusal(() => resolved("a/b/DeepSeek-V4-Flash")).code).toBe("UNKNOWN_MODEL");
  });
});
