/**
 * DeepSeek-V4.1 presets, names and config reading (docs/reference/deepseek-v4.1.md §1). The config values are those
 * of deepseek-ai/DeepSeek-V4.1-Flash as quoted by several public copies of its config.json (listed in that section);
 * the layouts are the Hugging Face one (text model in `text_config`) and DeepSeek's reference inference config.
 */
import { describe, expect, it } from "vitest";
import {
  V41_MODEL_PRESETS,
  isV41Config,
  modelFromConfigJson,
  modelV41FromConfigJson,
  resolveModelName,
  resolveV41ModelName,
} from "../src/index.js";

const RATIOS = [0, 0, ...Array(18).fill(2), ...Array(20).fill(1), 0, 0, 0];

/** The released config.json's shape: architecture at the root, the text model nested. */
function hfNested(text: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    architectures: ["DeepseekV41ForConditionalGeneration"],
    model_type: "deepseek_v41",
    text_config: {
      model_type: "deepseek_v41_text",
      num_hidden_layers: 40,
      num_attention_heads: 64,
      num_key_value_heads: 1,
      head_dim: 512,
      qk_rope_head_dim: 64,
      o_groups: 8,
      n_routed_experts: 384,
      moe_intermediate_size: 2304,
      max_position_embeddings: 1048576,
      sliding_window: 128,
      compress_ratios: RATIOS,
      kv_source_layer_ids: [2, 8, 14, 20],
      index_source_layer_ids: [2, 8, 14, 20, 24, 28, 32, 36],
      index_head_dim: 128,
      candidate_source_layer_id: 20,
      num_nextn_predict_layers: 3,
      dspark_block_size: 5,
      dspark_target_layer_ids: [37, 38, 39],
      ...text,
    },
    vision_config: { model_type: "deepseek_v41_vision", num_hidden_layers: 32 },
  };
}

/** DeepSeek's reference inference/config.json: the same facts under ModelArgs' short names, no architecture. */
const INFERENCE = {
  n_layers: 40,
  n_heads: 64,
  head_dim: 512,
  rope_head_dim: 64,
  o_groups: 8,
  n_routed_experts: 384,
  moe_inter_dim: 2304,
  window_size: 128,
  compress_ratios: RATIOS,
  kv_source_layers: [2, 8, 14, 20],
  index_source_layers: [2, 8, 14, 20, 24, 28, 32, 36],
  index_head_dim: 128,
  candidate_source_layer: 20,
  n_mtp_layers: 3,
  dspark_block_size: 5,
  dspark_target_layer_ids: [37, 38, 39],
};

function refusal(f: () => unknown): { code: string; field: string; message: string } {
  try {
    f();
  } catch (e) {
    return e as { code: string; field: string; message: string };
  }
  throw new Error("expected a refusal");
}

describe("DeepSeek-V4.1 presets and names", () => {
  const flash = V41_MODEL_PRESETS["DeepSeek-V4.1-Flash"]!;

  it("V4.1-Flash: 40 layers, sources 2/8/14 (ratio 2) and 20 (ratio 1), three DSpark stages", () => {
    expect(flash.hfId).toBe("deepseek-ai/DeepSeek-V4.1-Flash");
    expect(flash.compressRatios).toHaveLength(43);
    expect(flash.kvSourceLayerIds).toEqual([2, 8, 14, 20]);
    expect(flash.draftLayers).toBe(3);
    expect(flash.qkNopeHeadDim).toBe(448);
  });

  it("resolves the name in any case, the HF id of any owner and quantisation suffixes", () => {
    for (const spec of [
      "DeepSeek-V4.1-Flash",
      "deepseek-v4.1-flash",
      "deepseek-ai/DeepSeek-V4.1-Flash",
      "someone/DeepSeek-V4.1-Flash-NVFP4",
      "DeepSeek-V4.1-Flash-FP8",
    ])
      expect(resolveV41ModelName(spec)?.preset.name, spec).toBe("DeepSeek-V4.1-Flash");
    expect(resolveV41ModelName("someone/DeepSeek-V4.1-Flash-NVFP4")).toMatchObject({
      owner: "someone",
      suffixes: ["NVFP4"],
    });
    expect(resolveV41ModelName("DeepSeek-V4-Flash")).toBeNull();
    expect(resolveV41ModelName("DeepSeek-V4.1-Pro")).toBeNull();
  });

  it("the V4 resolver still refuses V4.1 names (V4 unchanged)", () => {
    expect(refusal(() => resolveModelName("deepseek-ai/DeepSeek-V4.1-Flash", "--model")).code).toBe("UNKNOWN_MODEL");
  });
});

describe("DeepSeek-V4.1 config reading", () => {
  it("the Hugging Face layout (text_config nested) is the V4.1-Flash preset", () => {
    const read = modelV41FromConfigJson(hfNested());
    expect(read).toMatchObject({ layout: "hf-nested", preset: "DeepSeek-V4.1-Flash" });
  });

  it("the flat HF layout (what SGLang hoists) and the reference inference config are the preset too", () => {
    const nested = hfNested();
    const flat = { ...(nested.text_config as object), architectures: ["DeepseekV41ForCausalLM"] };
    expect(modelV41FromConfigJson(flat)).toMatchObject({ layout: "hf-flat", preset: "DeepSeek-V4.1-Flash" });
    expect(isV41Config(INFERENCE)).toBe(true);
    const inference = modelV41FromConfigJson(INFERENCE);
    expect(inference).toMatchObject({ layout: "inference", preset: "DeepSeek-V4.1-Flash" });
    expect(inference.model.contextLen).toBe(1048576);
  });

  it("a variant that differs is read as a custom model with its own facts", () => {
    const read = modelV41FromConfigJson(hfNested({ kv_source_layer_ids: [2, 11, 20] }), { name: "mine" });
    expect(read.preset).toBeNull();
    expect(read.model).toMatchObject({ name: "mine", kvSourceLayerIds: [2, 11, 20], draftLayers: 3 });
  });

  it("a reader before its source is refused naming kv_source_layer_ids", () => {
    const e = refusal(() => modelV41FromConfigJson(hfNested({ kv_source_layer_ids: [8, 14, 20] })));
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT", field: "config.json kv_source_layer_ids" });
    expect(e.message).toContain("before layer 2");
    const inf = refusal(() => modelV41FromConfigJson({ ...INFERENCE, kv_source_layers: [2, 8, 14] }));
    expect(inf).toMatchObject({ field: "config.json kv_source_layers" });
    expect(inf.message).toContain("ratio-1 source at or before layer 20");
  });

  it("an unknown ratio, and ratio 4 in a V4.1 model, are refused naming the entry", () => {
    const three = [...RATIOS];
    three[5] = 3;
    expect(refusal(() => modelV41FromConfigJson(hfNested({ compress_ratios: three })))).toMatchObject({
      code: "UNSUPPORTED_MODEL",
      field: "config.json compress_ratios[5]",
    });
    const four = [...RATIOS];
    four[30] = 4;
    expect(refusal(() => modelV41FromConfigJson(hfNested({ compress_ratios: four })))).toMatchObject({
      field: "config.json compress_ratios[30]",
    });
    const draft = [...RATIOS];
    draft[41] = 2;
    expect(refusal(() => modelV41FromConfigJson(hfNested({ compress_ratios: draft }))).message).toContain(
      "DSpark draft stage is SWA only",
    );
  });

  it("a source on an SWA-only layer, a duplicate, and two spellings that disagree are refused", () => {
    expect(refusal(() => modelV41FromConfigJson(hfNested({ kv_source_layer_ids: [1, 2, 8, 14, 20] })))).toMatchObject({
      field: "config.json kv_source_layer_ids[0]",
    });
    expect(refusal(() => modelV41FromConfigJson(hfNested({ kv_source_layer_ids: [2, 2, 20] })))).toMatchObject({
      field: "config.json kv_source_layer_ids[1]",
    });
    const both = hfNested({ kv_source_layers: [2, 8, 20] });
    expect(refusal(() => modelV41FromConfigJson(both))).toMatchObject({ field: "config.json kv_source_layers" });
  });

  it("draft stages must match the ratio tail; index sources must precede their readers", () => {
    expect(refusal(() => modelV41FromConfigJson(hfNested({ num_nextn_predict_layers: 1 })))).toMatchObject({
      field: "config.json num_nextn_predict_layers",
    });
    expect(refusal(() => modelV41FromConfigJson(hfNested({ dspark_target_layer_ids: [37, 38, 40] })))).toMatchObject({
      field: "config.json dspark_target_layer_ids[2]",
    });
    expect(refusal(() => modelV41FromConfigJson(hfNested({ index_source_layer_ids: [8, 14, 20] }))).message).toContain(
      "no ratio-2 index source at or before layer 2",
    );
    expect(refusal(() => modelV41FromConfigJson(hfNested({ candidate_source_layer_id: 21 })))).toMatchObject({
      field: "config.json candidate_source_layer_id",
    });
  });

  it("a V4 config is no V4.1 config, and the V4 reader still refuses V4.1 (V4 behaviour unchanged)", () => {
    expect(isV41Config({ architectures: ["DeepseekV4ForCausalLM"], compress_ratios: [0, 4] })).toBe(false);
    expect(refusal(() => modelV41FromConfigJson({ architectures: ["DeepseekV4ForCausalLM"] })).code).toBe(
      "UNSUPPORTED_MODEL",
    );
    expect(refusal(() => modelFromConfigJson(hfNested())).code).toBe("UNSUPPORTED_MODEL");
  });
});
