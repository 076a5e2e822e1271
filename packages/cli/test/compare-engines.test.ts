// `check --compare-engines`: the worked examples of docs/reference/engines-compared.md (derived there by hand), the
// causes summing to the difference of the two engines' bytes per token for many deployments, the refusals, and the
// JSON part validating against the published schema.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Dsv4KvError } from "@dsv4-kv/errors";
import { type CheckReportJson, EnginesComparisonSchema, MODEL_PRESETS } from "@dsv4-kv/server-config";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { enginesComparisonOf } from "../src/check/compare-engines.js";
import type { Values } from "../src/check/launch.js";
import { runCheckPipeline } from "../src/check/pipeline.js";
import { cli } from "./cli-helpers.js";

function compare(values: Values, modelName = "DeepSeek-V4-Flash") {
  const model = MODEL_PRESETS[modelName]!;
  const { report } = runCheckPipeline({ values, model, modelResolvedAs: `preset ${modelName}`, ignored: [] });
  const c = enginesComparisonOf({ "compare-engines": true, ...values }, report, model)!;
  EnginesComparisonSchema.parse(c);
  return c;
}

const cause = (c: ReturnType<typeof compare>, id: string, kind: string | null) =>
  c.causes.find((x) => x.id === id && x.kind === kind)?.bytesPerToken;
const kind = (c: ReturnType<typeof compare>, k: string) => c.kinds.find((x) => x.kind === k)!;

describe("worked example 1: DeepSeek-V4-Flash, one H200 rank of TP 8, EAGLE 3 steps = vLLM MTP 3", () => {
  const c = compare({});

  it("maps the deployment: MTP 3, block 256, L 1,048,576, the same KV bytes", () => {
    expect(c.mapping.speculative.vllm).toEqual({ method: "mtp", numSpeculativeTokens: 3 });
    expect(c.mapping.blockSize).toBe(256);
    expect(c.mapping.contextLength).toBe(1_048_576);
    expect(c.mapping.budget).toMatchObject({ rule: "same-kv-bytes", vllmBytes: 108_280_096_505 });
  });

  it("capacity on both engines", () => {
    expect(c.sglang.tokens).toBe(13_156_864);
    expect(c.sglang.requestsAtContextLength).toBeCloseTo(13_156_864 / 1_048_576, 12);
    expect(c.vllm).toMatchObject({ numGpuBlocks: 108_038, blocksPerRequest: 10_778, blockStrideBytes: 1_002_240 });
    expect(c.vllm.tokens).toBe(10_510_860);
    expect(c.vllm.printed).toEqual([
      "GPU KV cache size: 10,510,860 tokens",
      "Maximum concurrency for 1,048,576 tokens per request: 10.02x",
    ]);
    expect(c.vllm.poolBytes).toBe(108_038 * 1_002_240);
  });

  it("bytes per token per kind (vLLM: blocks per request × page / L)", () => {
    expect(kind(c, "c4-main").vllm.bytesPerToken).toBe((21 * 4096 * 37_440) / 1_048_576);
    expect(kind(c, "c4-main").sglang.bytesPerToken).toBe((21 * 51_395 * 37_440) / 13_156_864);
    expect(kind(c, "c4-indexer").vllm.bytesPerToken).toBe(21 * 33.75);
    expect(kind(c, "swa").vllm.bytesPerToken).toBeCloseTo((43 * 259 * 37_440) / 1_048_576, 9);
    expect(kind(c, "c4-attention-state").vllm.bytesPerToken).toBeCloseTo((21 * 4099 * 32_832) / 1_048_576, 9);
    expect(kind(c, "draft").vllm.layers).toBe(1);
  });

  it("the causes, each with its hand-derived size", () => {
    expect(cause(c, "page-layout", "c4-indexer")).toBeCloseTo(15.75, 9);
    expect(cause(c, "page-layout", "c4-main")).toBeUndefined();
    expect(cause(c, "page-layout", "c4-attention-state")).toBeCloseTo((21 * 4 * 4099 * 16) / 1_048_576, 9);
    expect(cause(c, "sliding-in-flight", "swa")).toBeCloseTo(393.046875, 9);
    expect(cause(c, "sliding-in-flight", "c4-attention-state")).toBeCloseTo(2688, 9);
    expect(cause(c, "sliding-in-flight", "c4-indexer-state")).toBeCloseTo(672, 9);
    expect(cause(c, "sliding-in-flight", "c128-state")).toBeCloseTo(1280, 9);
    expect(cause(c, "sliding-in-flight", "draft")).toBeCloseTo(9.140625, 9);
    expect(cause(c, "page-stride", null)).toBeCloseTo(1_344_471_552 / 1_048_576, 9);
    const perTokenV = (108_280_096_505 * 10_778) / (108_038 * 1_048_576);
    expect(c.deltaBytesPerToken).toBeCloseTo(perTokenV - 108_280_096_505 / 13_156_864, 6);
  });
});

describe("worked example 2: DSpark on vLLM (DeepSeek-V4-Flash-0731, gamma 5)", () => {
  const c = compare({ "speculative-algorithm": "DSPARK" }, "DeepSeek-V4-Flash-0731");

  it("maps to dspark K = 5 and registers no draft cache in vLLM's groups", () => {
    expect(c.mapping.speculative.vllm).toEqual({ method: "dspark", numSpeculativeTokens: 5 });
    expect(kind(c, "draft").vllm.layers).toBe(0);
    expect(cause(c, "layer-count", "draft")).toBeCloseTo(-752_693_760 / 12_865_280, 9);
  });

  it("43 SWA caches split 22 + 21: more stride padding; 10,778 blocks per request", () => {
    expect(c.vllm).toMatchObject({ numGpuBlocks: 105_763, blocksPerRequest: 10_778, tokens: 10_289_528 });
    expect(c.vllm.printed[1]).toBe("Maximum concurrency for 1,048,576 tokens per request: 9.81x");
    expect(cause(c, "page-stride", null)).toBeCloseTo(1_354_168_512 / 1_048_576, 9);
  });
});

describe("the causes sum to vLLM − SGLang bytes per token", () => {
  const cases: Array<[string, Values, string?]> = [
    ["default", {}],
    ["no speculation", { "speculative-algorithm": "none" }],
    ["tp 4, 2 draft tokens", { "tp-size": 4, "speculative-num-draft-tokens": 2 }],
    ["T = 2048", { "compare-max-num-batched-tokens": 2048 }],
    ["FP4 indexer", { "enable-deepseek-v4-fp4-indexer": true }],
    ["context 32768", { "context-length": 32_768 }],
    ["utilization 0.9, 6 GiB overhead", { "compare-gpu-memory-utilization": 0.9, "compare-vllm-overhead-gib": 6 }],
    ["Flash-0731 MTP 3", { "speculative-num-steps": 3 }, "DeepSeek-V4-Flash-0731"],
    ["Pro, tp 8", {}, "DeepSeek-V4-Pro"],
  ];
  for (const [name, values, model] of cases) {
    it(name, () => {
      const c = compare(values, model);
      const sum = c.causes.reduce((a, x) => a + x.bytesPerToken, 0);
      expect(c.deltaBytesPerToken).not.toBeNull();
      expect(sum).toBeCloseTo(c.vllm.bytesPerToken! - c.sglang.bytesPerToken, 6);
      const kinds = c.kinds.reduce((a, k) => a + k.vllm.bytes, 0);
      expect(kinds + c.stridePaddingBytes).toBeCloseTo(c.vllm.poolBytes, 0);
    });
  }

  it("the in-flight reservation grows with --max-num-batched-tokens", () => {
    const small = compare({ "compare-max-num-batched-tokens": 2048 });
    const big = compare({ "compare-max-num-batched-tokens": 16_384 });
    expect(cause(small, "sliding-in-flight", "swa")).toBeCloseTo(393.046875 / 4, 9);
    expect(cause(big, "sliding-in-flight", "swa")).toBeCloseTo(393.046875 * 2, 9);
    expect(big.vllm.tokens).toBeLessThan(small.vllm.tokens);
  });

  it("gpu-memory-utilization: vLLM's own arithmetic on the same device and weights", () => {
    const model = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
    const { report } = runCheckPipeline({ values: {}, model, modelResolvedAs: "preset", ignored: [] });
    const device = Math.round(139 * 2 ** 30);
    const weights = Math.round((report.budget.preFreeGiB! - report.budget.postFreeGiB!) * 2 ** 30);
    const at = (u: number, overheadGiB?: number) =>
      compare({ "compare-gpu-memory-utilization": u, "compare-vllm-overhead-gib": overheadGiB }).mapping.budget;
    expect(at(0.85).vllmBytes).toBe(Math.ceil(device * 0.85) - weights);
    // The same fraction, no overhead: the same bytes as SGLang's budget up to rounding.
    expect(Math.abs(at(0.85).vllmBytes - at(0.85).sglangBytes)).toBeLessThan(2);
    expect(at(0.9, 6).vllmBytes).toBe(Math.ceil(device * 0.9) - weights - 6 * 2 ** 30);
  });
});

describe("refusals", () => {
  const code = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      expect(Dsv4KvError.isInstance(error)).toBe(true);
      return [(error as Dsv4KvError).code, (error as Dsv4KvError).field];
    }
    throw new Error("not refused");
  };
  const model = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
  const reportOf = (values: Values) =>
    runCheckPipeline({ values, model, modelResolvedAs: "preset", ignored: [] }).report;

  it("a comparison input without --compare-engines", () => {
    const values = { "compare-max-num-batched-tokens": 2048 };
    expect(code(() => enginesComparisonOf(values, reportOf({}), model))).toEqual([
      "USAGE",
      "--compare-max-num-batched-tokens",
    ]);
  });

  it("a utilization with --kv-budget-bytes; overhead without a utilization; pp 2", () => {
    const on = { "compare-engines": true };
    const bytes = { "kv-budget-bytes": 60_000_000_000 };
    const util = { ...on, "compare-gpu-memory-utilization": 0.9 };
    expect(code(() => enginesComparisonOf(util, reportOf(bytes), model))).toEqual([
      "USAGE",
      "--compare-gpu-memory-utilization",
    ]);
    const overhead = { ...on, "compare-vllm-overhead-gib": 2 };
    expect(code(() => enginesComparisonOf(overhead, reportOf({}), model))).toEqual([
      "USAGE",
      "--compare-vllm-overhead-gib",
    ]);
    expect(code(() => enginesComparisonOf(on, reportOf({ "pp-size": 2 }), model))).toEqual(["USAGE", "--pp-size"]);
  });
});

describe("check --compare-engines end to end", () => {
  const schemaPath = createRequire(import.meta.url).resolve("@dsv4-kv/server-config/check-report.schema.json");
  const validate = new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(readFileSync(schemaPath, "utf8")));

  it("--json carries enginesComparison and validates against the published schema", () => {
    const r = cli(["check", "--compare-engines", "--json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as CheckReportJson;
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.enginesComparison!.vllm.tokens).toBe(10_510_860);
  });

  it("with --against-log: every section carries its own comparison, and the whole validates", () => {
    const log = fileURLToPath(
      new URL(
        "../../server-config/test/fixtures/sglang-logs/amd-infera-mtt-working-process-prose.log",
        import.meta.url,
      ),
    );
    const r = cli(["check", "--against-log", log, "--compare-engines", "--json"]);
    const report = JSON.parse(r.stdout) as CheckReportJson;
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.sections!.length).toBe(2);
    for (const s of report.sections!) expect(s.enginesComparison!.vllm.blockStrideBytes).toBeGreaterThan(0);
  });

  it("without the flag the JSON has no comparison", () => {
    const report = JSON.parse(cli(["check", "--json"]).stdout) as CheckReportJson;
    expect(report.enginesComparison).toBeUndefined();
  });

  it("the text report's section names every cause", () => {
    const r = cli(["check", "--compare-engines"]);
    expect(r.stdout).toContain("Engines compared (SGLang and vLLM");
    expect(r.stdout).toContain("vLLM prints: GPU KV cache size: 10,510,860 tokens");
    for (const id of ["page-layout (c4-indexer)", "sliding-in-flight (swa)", "page-stride", "block-rounding (swa)"])
      expect(r.stdout).toContain(id);
  });
});
