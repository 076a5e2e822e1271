// vLLM's derived max length (D50): config.json's rope_scaling read and checked, and VL-R5 / VL-L1 / the unset
// --max-model-len judged against the length vLLM derives, not max_position_embeddings alone.
import { thrownError } from "@dsv4-kv/errors/testing";
import { describe, expect, it } from "vitest";
import {
  MODEL_PRESETS,
  ServerConfigError,
  checkVllmDeployment,
  modelFromConfigJson,
  vllmDerivedMaxModelLen,
} from "../src/index.js";
import type { ModelPreset, VllmCheckInput } from "../src/index.js";
import { presetConfigJson } from "../src/testing.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const YARN = { type: "yarn", factor: 16, original_max_position_embeddings: 65_536, beta_fast: 32, beta_slow: 1 };

/** Flash's KV facts with the CLI's small-dsv4 lengths: 262,144 positions, YaRN 65,536 × 16 = 1,048,576. */
const config = (rope: unknown, positions = 262_144) => ({
  ...presetConfigJson(FLASH, "deepseek"),
  max_position_embeddings: positions,
  ...(rope === undefined ? {} : { rope_scaling: rope }),
});
const model = (rope: unknown, positions?: number) => modelFromConfigJson(config(rope, positions)).model;

const given = { kvCacheDtype: "fp8", tensorParallelSize: 8 } as const;
const check = (m: ModelPreset, maxModelLen?: number, allowLongMaxModelLen?: boolean) => {
  // A custom model has no checkpoint size: the KV budget is given.
  const input: VllmCheckInput = {
    model: m,
    given: { ...given, maxModelLen, allowLongMaxModelLen },
    budget: { kvBudgetBytes: 100 * 2 ** 30 },
  };
  const r = checkVllmDeployment(input);
  return { r, all: [...r.errors, ...r.warnings], rules: [...r.errors, ...r.warnings].map((i) => i.rule) };
};
const refused = (rope: unknown) => thrownError(() => modelFromConfigJson(config(rope)), ServerConfigError);

describe("vLLM's derived max length from rope_scaling (D50)", () => {
  it("YaRN: original_max_position_embeddings × factor, above max_position_embeddings", () => {
    const m = model(YARN);
    expect(m.ropeScaling).toEqual({ type: "yarn", factor: 16, originalMaxPositionEmbeddings: 65_536 });
    expect(vllmDerivedMaxModelLen(m)).toMatchObject({ maxTokens: 1_048_576, key: "rope_scaling" });
  });

  it("VL-R5: accepted up to the product (equal passes: vLLM's check is `>`), refused above it", () => {
    const m = model(YARN);
    expect(check(m, 524_288).rules).not.toContain("VL-R5");
    expect(check(m, 1_048_576).rules).not.toContain("VL-R5");
    const above = check(m, 1_048_577).all.find((i) => i.rule === "VL-R5");
    expect(above).toMatchObject({ value: 1_048_577, params: { max: 1_048_576, key: "rope_scaling" } });
    expect(above!.message).toContain("original_max_position_embeddings 65536 × factor 16");
    const allowed = check(m, 1_048_577, true).all.find((i) => i.rule === "VL-L1");
    expect(allowed).toMatchObject({ params: { max: 1_048_576, key: "rope_scaling" } });
  });

  it("an unset --max-model-len (and -1's ceiling) is the derived length, with why", () => {
    const r = check(model(YARN)).r;
    expect(r.resolved.maxModelLen).toBe(1_048_576);
    expect(r.resolved.args.find((a) => a.field === "maxModelLen")).toMatchObject({
      value: 1_048_576,
      source: "model",
      note: "the model's rope_scaling yarn: original_max_position_embeddings 65536 × factor 16",
    });
    expect(check(model(YARN), -1).r.resolved).toMatchObject({ maxModelLen: 1_048_576, autoFitMaxModelLen: true });
  });

  it("no rope_scaling: max_position_embeddings, as before", () => {
    const m = model(undefined);
    expect(m.ropeScaling).toBeNull();
    expect(vllmDerivedMaxModelLen(m)).toEqual({ maxTokens: 262_144, key: "max_position_embeddings", ropeDetail: null });
    expect(check(m, 262_144).rules).not.toContain("VL-R5");
    expect(check(m, 262_145).all.find((i) => i.rule === "VL-R5")!.params).toEqual({
      max: 262_144,
      key: "max_position_embeddings",
    });
    expect(check(m).r.resolved.maxModelLen).toBe(262_144);
  });

  it("rope types vLLM leaves unscaled (su, longrope, llama3) apply no factor; others scale max_position_embeddings", () => {
    for (const type of ["su", "longrope", "llama3"]) {
      const m = model({ rope_type: type, factor: 8, original_max_position_embeddings: 8192 });
      expect(vllmDerivedMaxModelLen(m).maxTokens, type).toBe(262_144);
      expect(check(m, 262_145).rules, type).toContain("VL-R5");
    }
    expect(vllmDerivedMaxModelLen(model({ type: "linear", factor: 2 })).maxTokens).toBe(524_288);
    expect(vllmDerivedMaxModelLen(model({ rope_type: "default" })).maxTokens).toBe(262_144); // no factor: × 1
  });

  it("a Flash config keeps the Flash preset: its YaRN gives the same 1,048,576", () => {
    const read = modelFromConfigJson({ ...presetConfigJson(FLASH, "deepseek"), rope_scaling: YARN });
    expect(read.model).toBe(FLASH);
    expect(vllmDerivedMaxModelLen(FLASH)).toMatchObject({ maxTokens: 1_048_576, key: "max_position_embeddings" });
    const longer = modelFromConfigJson({
      ...presetConfigJson(FLASH, "deepseek"),
      rope_scaling: { ...YARN, factor: 32 },
    });
    expect(longer.preset).toBe("DeepSeek-V4-Flash");
    expect(vllmDerivedMaxModelLen(longer.model).maxTokens).toBe(2_097_152);
  });

  it("bad rope_scaling values are refused naming the key, the value and the rule", () => {
    const cases: [unknown, string, string, unknown][] = [
      ["yarn", "INVALID_TYPE", "config.json rope_scaling", "yarn"],
      [{ factor: 16 }, "INVALID_TYPE", "config.json rope_scaling.type", undefined],
      [{ ...YARN, type: 7 }, "INVALID_TYPE", "config.json rope_scaling.type", 7],
      [{ ...YARN, factor: 0 }, "INVALID_ARGUMENT", "config.json rope_scaling.factor", 0],
      [{ ...YARN, factor: "16" }, "INVALID_ARGUMENT", "config.json rope_scaling.factor", "16"],
      [{ ...YARN, original_max_position_embeddings: 65_536.5 }, "INVALID_ARGUMENT", ORIGINAL, 65_536.5],
      [{ type: "yarn", factor: 16 }, "INVALID_ARGUMENT", ORIGINAL, undefined],
    ];
    for (const [rope, code, field, value] of cases) {
      const e = refused(rope);
      expect(e, JSON.stringify(rope)).toMatchObject({ code, field, value });
      expect(e.rule.length).toBeGreaterThan(0);
      expect(e.params).toMatchObject({ key: field.replace("config.json ", "") });
    }
  });
});

const ORIGINAL = "config.json rope_scaling.original_max_position_embeddings";
