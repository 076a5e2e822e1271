// `--model` / `--model-path` as users name a model: names, ids, suffixes, checkpoint folders and config.json paths.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Dsv4KvError } from "@dsv4-kv/errors";
import { MODEL_PRESETS } from "@dsv4-kv/server-config";
import { presetConfigJson } from "@dsv4-kv/server-config/testing";
import { describe, expect, it } from "vitest";
import { loadModel } from "../src/check/model-source.js";
import { cli } from "./cli-helpers.js";

const FIXTURES = join(import.meta.dirname, "fixtures", "models");
const fixture = (name: string) => join(FIXTURES, name);
const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const dir = mkdtempSync(join(tmpdir(), "dsv4-model-"));

async function refusal(spec: string): Promise<Dsv4KvError> {
  const error = await loadModel(spec, "--model").then(
    () => null,
    (e: unknown) => e,
  );
  expect(Dsv4KvError.isInstance(error), String(error)).toBe(true);
  return error as Dsv4KvError;
}

describe("loadModel: names", () => {
  it("a preset in any case, a Hugging Face id, a suffixed id", async () => {
    expect(await loadModel("deepseek-v4-flash", "--model")).toEqual({
      model: FLASH,
      resolvedAs: '"deepseek-v4-flash" → preset DeepSeek-V4-Flash',
    });
    expect((await loadModel("deepseek-ai/DeepSeek-V4-Pro", "--model")).model.name).toBe("DeepSeek-V4-Pro");
    expect((await loadModel("deepseek-ai/DeepSeek-V4-Flash-0731", "--model")).model.name).toBe(
      "DeepSeek-V4-Flash-0731",
    );
    const fp8 = await loadModel("deepseek-ai/DeepSeek-V4-Flash-FP8", "--model-path");
    expect(fp8.model).toBe(FLASH);
    expect(fp8.resolvedAs).toMatch(/quantisation -FP8/);
  });

  it("a misspelt name: UNKNOWN_MODEL naming the flag, with a suggestion", async () => {
    const e = await refusal("DeepSeek-V4-Flsh");
    expect(e).toMatchObject({ code: "UNKNOWN_MODEL", field: "--model", params: { suggestion: "DeepSeek-V4-Flash" } });
  });

  it("a path that does not exist is not read as a name", async () => {
    expect(await refusal(join(dir, "missing", "config.json"))).toMatchObject({ code: "INPUT", field: "--model" });
    expect((await refusal("./DeepSeek-V4-Flash")).code).toBe("INPUT");
  });
});

describe("loadModel: checkpoints", () => {
  it("a checkpoint folder of either layout reads its config.json", async () => {
    for (const name of ["flash-deepseek-layout", "flash-transformers-layout"]) {
      const source = await loadModel(fixture(name), "--model-path");
      expect(source.model).toBe(FLASH);
      expect(source.resolvedAs).toMatch(/→ preset DeepSeek-V4-Flash \(every KV fact matches\)/);
    }
  });

  it("a config.json path", async () => {
    const source = await loadModel(join(fixture("flash-transformers-layout"), "config.json"), "--model-path");
    expect(source.model).toBe(FLASH);
    expect(source.resolvedAs).toMatch(/transformers layout/);
  });

  it("a config matching no preset: a custom model named after its folder", async () => {
    const source = await loadModel(fixture("small-dsv4"), "--model-path");
    expect(source.model).toMatchObject({ name: "small-dsv4", numHiddenLayers: 4, mtpLayers: 1, contextLen: 262_144 });
    expect(source.resolvedAs).toMatch(/custom model/);
  });

  it("every preset, in each layout, written as a checkpoint folder → the preset", async () => {
    for (const preset of Object.values(MODEL_PRESETS))
      for (const layout of ["deepseek", "transformers"] as const) {
        const folder = join(dir, `${preset.name}-${layout}`);
        mkdirSync(folder, { recursive: true });
        writeFileSync(join(folder, "config.json"), JSON.stringify(presetConfigJson(preset, layout)));
        expect((await loadModel(folder, "--model-path")).model).toBe(preset);
      }
  });

  it("DeepSeek-V4.1 and other architectures are refused, naming the config.json key", async () => {
    expect(await refusal(fixture("v4.1-like"))).toMatchObject({
      code: "UNSUPPORTED_MODEL",
      field: "config.json kv_source_layer_ids",
      params: { file: join(fixture("v4.1-like"), "config.json") },
    });
    expect(await refusal(fixture("llama"))).toMatchObject({
      code: "UNSUPPORTED_MODEL",
      field: "config.json architectures[0]",
      value: "LlamaForCausalLM",
    });
  });

  it("a folder without config.json, a file that is not JSON", async () => {
    const empty = join(dir, "empty");
    mkdirSync(empty, { recursive: true });
    expect(await refusal(empty)).toMatchObject({ code: "INPUT", rule: expect.stringMatching(/has no config.json/) });
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ not json");
    expect(await refusal(bad)).toMatchObject({ code: "INPUT", rule: expect.stringMatching(/is not valid JSON/) });
  });
});

describe("dsv4-kv check --model / --model-path (end to end)", () => {
  const json = (args: string[]) => {
    const r = cli(["check", "--json", ...args]);
    return { ...r, report: r.stdout ? JSON.parse(r.stdout) : null };
  };

  it("check --model deepseek-ai/DeepSeek-V4-Flash: the Flash preset, saying how it was read", () => {
    const r = json(["--model", "deepseek-ai/DeepSeek-V4-Flash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.model).toMatchObject({
      name: "DeepSeek-V4-Flash",
      resolvedAs: '"deepseek-ai/DeepSeek-V4-Flash" → preset DeepSeek-V4-Flash',
    });
    const text = cli(["check", "--model", "deepseek-ai/DeepSeek-V4-Flash-FP8"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Model: "deepseek-ai\/DeepSeek-V4-Flash-FP8" → preset DeepSeek-V4-Flash/);
  });

  it("the same report for a preset name and its checkpoint folder (--model-path)", () => {
    const byName = json(["--model", "DeepSeek-V4-Flash"]);
    const byFolder = json(["--model-path", fixture("flash-transformers-layout")]);
    expect(byFolder.code, byFolder.stderr).toBe(0);
    expect({ ...byFolder.report, model: null }).toEqual({ ...byName.report, model: null });
    expect(byFolder.report.model.resolvedAs).toMatch(/transformers layout\) → preset DeepSeek-V4-Flash/);
  });

  it("a checkpoint folder for a custom model needs a budget, a custom V4.1 one too (read as V4.1, no longer refused)", () => {
    const custom = json(["--model", fixture("small-dsv4"), "--kv-budget-bytes", "20000000000"]);
    expect(custom.code, custom.stderr).toBe(0);
    expect(custom.report.model).toMatchObject({ name: "small-dsv4", layers: { total: 4 } });
    expect(cli(["check", "--model", fixture("v4.1-like")])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--weights-gib: is needed: the config of v4\.1-like gives no checkpoint size/),
    });
    expect(cli(["check", "--model", "deepseek-v4-flahs"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown preset.*did you mean "DeepSeek-V4-Flash"/),
    });
  });
});
