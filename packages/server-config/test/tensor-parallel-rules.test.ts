/**
 * V-TP1-3 and V-I1: what the parallel layout must divide for DeepSeek-V4 and the int32 token indices.
 * Before these rules `check --tp-size 3`, `--dp-size 3 --enable-dp-attention` on TP 8 and a 2^53-byte budget
 * were all VALID (the DP case with a V-DP1 warning only).
 */
import { describe, expect, it } from "vitest";
import {
  MODEL_PRESETS,
  type RuleId,
  type ServerArgsInput,
  checkServerConfig,
  parseCustomModel,
  parseServerArgs,
  resolveServerConfig,
} from "../src/index.js";
import { modelFromConfigJson, presetConfigJson } from "../src/model-config.js";
import type { ModelPreset } from "../src/presets.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const PRO = MODEL_PRESETS["DeepSeek-V4-Pro"]!;

function args(input: ServerArgsInput = {}) {
  const parsed = parseServerArgs(input as Record<string, unknown>);
  if (!parsed.ok) throw new Error(parsed.issues.join("\n"));
  return parsed.args;
}
const errorsOf = (rule: RuleId, input: ServerArgsInput, model: ModelPreset = FLASH) =>
  resolveServerConfig(args(input), model).issues.filter((i) => i.rule === rule);

describe("V-TP1: the attention TP size divides the heads and the output groups", () => {
  it("refuses --tp-size 3 on Flash, naming the 64 heads and the 8 o_groups", () => {
    const found = errorsOf("V-TP1", { tpSize: 3 });
    expect(found.map((i) => [i.severity, i.code, i.field, i.value])).toEqual([
      ["error", "TP_DIVISIBILITY", "tpSize", 3],
      ["error", "TP_DIVISIBILITY", "tpSize", 3],
    ]);
    expect(found[0]!.params).toMatchObject({ attentionTpSize: 3, numAttentionHeads: 64 });
    expect(found[1]!.params).toMatchObject({ attentionTpSize: 3, oGroups: 8 });
    expect(found[1]!.message).toContain("1, 2, 4, 8");
  });
  it("refuses TP 16 on Flash (8 o_groups) but not on Pro (16), and checks tp / dp under attention DP", () => {
    expect(errorsOf("V-TP1", { tpSize: 16 }).map((i) => i.params.oGroups)).toEqual([8]);
    expect(errorsOf("V-TP1", { tpSize: 16 }, PRO)).toEqual([]);
    expect(errorsOf("V-TP1", { tpSize: 16, dpSize: 2, enableDpAttention: true })).toEqual([]);
    const dp = errorsOf("V-TP1", { tpSize: 24, dpSize: 2, enableDpAttention: true, epSize: 24 }, PRO);
    expect(dp.map((i) => [i.field, i.params.attentionTpSize])).toEqual([
      ["dpSize", 12],
      ["dpSize", 12],
    ]);
  });
  it("passes every TP size SGLang serves Flash with (1, 2, 4, 8)", () => {
    for (const tpSize of [1, 2, 4, 8]) expect(errorsOf("V-TP1", { tpSize })).toEqual([]);
  });
});

describe("V-TP2: attention DP's groups divide the TP ranks", () => {
  it("refuses --dp-size 3 --enable-dp-attention on TP 8 (an error, no longer only V-DP1's warning)", () => {
    const input = { tpSize: 8, dpSize: 3, enableDpAttention: true };
    expect(errorsOf("V-TP2", input)).toMatchObject([
      { severity: "error", code: "TP_DIVISIBILITY", field: "dpSize", value: 3, params: { tpSize: 8, dpSize: 3 } },
    ]);
    const report = checkServerConfig(args(input), FLASH, { kind: "bytes", kvBudgetBytes: 2 ** 34 });
    expect(report.ok).toBe(false);
    expect(report.errors.map((e) => e.rule)).toContain("V-TP2");
  });
  it("refuses a DP size above the TP size, and ignores --dp-size without attention DP", () => {
    expect(errorsOf("V-TP2", { tpSize: 4, dpSize: 8, enableDpAttention: true })).toHaveLength(1);
    expect(errorsOf("V-TP2", { tpSize: 8, dpSize: 3 })).toEqual([]);
    expect(errorsOf("V-TP2", { tpSize: 8, dpSize: 8, enableDpAttention: true })).toEqual([]);
  });
});

describe("V-TP3: experts and the MoE width over the expert-parallel and MoE TP ranks", () => {
  it("refuses a TP size the MoE width 2048 cannot be split by, and an EP size that does not divide TP", () => {
    expect(errorsOf("V-TP3", { tpSize: 3 })).toMatchObject([
      { field: "tpSize", params: { moeTpSize: 3, moeIntermediateSize: 2048 } },
    ]);
    expect(errorsOf("V-TP3", { tpSize: 8, epSize: 3 })).toMatchObject([{ field: "epSize", value: 3 }]);
  });
  it("refuses an EP size that does not divide the routed experts (Pro: 384 experts over EP 256)", () => {
    const found = errorsOf("V-TP3", { tpSize: 256, epSize: 256, dpSize: 256, enableDpAttention: true }, PRO);
    expect(found).toMatchObject([{ field: "epSize", params: { nRoutedExperts: 384, epSize: 256 } }]);
  });
  it("takes the EP size from --tp-size under DeepEP, as SGLang does", () => {
    expect(errorsOf("V-TP3", { tpSize: 8, epSize: 3, moeA2aBackend: "deepep" })).toEqual([]);
    expect(errorsOf("V-TP3", { tpSize: 8, epSize: 8 })).toEqual([]);
  });
});

describe("the parallel shape of a model file", () => {
  it("is read from config.json and from a custom model file, and unknown keys stay unknown", () => {
    const read = modelFromConfigJson({ ...presetConfigJson(FLASH, "deepseek"), num_attention_heads: 48 });
    expect(read.preset).toBeNull();
    expect(read.model).toMatchObject({ numAttentionHeads: 48, oGroups: 8, nRoutedExperts: 256 });
    expect(modelFromConfigJson(presetConfigJson(FLASH, "deepseek")).preset).toBe("DeepSeek-V4-Flash");
    const custom = parseCustomModel({ ...presetConfigJson(FLASH, "deepseek"), o_groups: 6 });
    expect(custom.ok && custom.model.oGroups).toBe(6);
    if (!custom.ok) throw new Error("custom model refused");
    expect(errorsOf("V-TP1", { tpSize: 4 }, custom.model).map((i) => i.params.oGroups)).toEqual([6]);
    const unknown: ModelPreset = { ...FLASH, numAttentionHeads: null, oGroups: null };
    expect(errorsOf("V-TP1", { tpSize: 3 }, unknown)).toEqual([]);
  });
});

describe("V-I1: full-token indices within SGLang's int32", () => {
  it("refuses a 2^53-byte budget (about 1.27e12 full tokens), naming the cap that would serve", () => {
    const report = checkServerConfig(args({}), FLASH, { kind: "bytes", kvBudgetBytes: 9007199254740991 });
    expect(report.ok).toBe(false);
    const issue = report.errors.find((e) => e.rule === "V-I1");
    expect(issue).toMatchObject({
      code: "INT32_OVERFLOW",
      field: "maxTotalTokens",
      params: { int32Max: 2147483647, maxTokens: 2147483392 },
    });
    expect(issue!.value).toBeGreaterThan(1e12);
  });
  it("passes the largest cap it names, and refuses one token more", () => {
    const budget = { kind: "bytes", kvBudgetBytes: 9007199254740991 } as const;
    const at = (maxTotalTokens: number) =>
      checkServerConfig(args({ maxTotalTokens }), FLASH, budget).errors.filter((e) => e.rule === "V-I1");
    expect(at(2147483392)).toEqual([]);
    expect(at(2147483392 + 256)).toHaveLength(1);
  });
});
