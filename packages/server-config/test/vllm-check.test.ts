// checkVllmDeployment and every vLLM rule (VLLM_RULES): each rule has a case that raises it and one that does not.
import { describe, expect, it } from "vitest";
import { MODEL_PRESETS, ServerConfigError, VLLM_RULES, checkVllmDeployment } from "../src/index.js";
import type { VllmCheckInput } from "../src/index.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const F0731 = MODEL_PRESETS["DeepSeek-V4-Flash-0731"]!;
const GIB = 2 ** 30;
const MTP3 = '{"method":"mtp","num_speculative_tokens":3}';
const MTP4 = '{"method":"mtp","num_speculative_tokens":4}';

/** docs/reference/vllm-kv-cache.md §10: Flash on one H200 rank, 26 GiB not for the KV cache, MTP 3. */
const WORKED: VllmCheckInput = {
  model: FLASH,
  given: { kvCacheDtype: "fp8", speculativeConfig: MTP3, tensorParallelSize: 8 },
  budget: { weightsGiB: 26 },
};

const rules = (input: VllmCheckInput) => {
  const r = checkVllmDeployment(input);
  return [...r.errors, ...r.warnings].map((i) => i.rule);
};

describe("checkVllmDeployment", () => {
  it("reproduces the worked example: blocks, blocks per request and both printed figures", () => {
    const r = checkVllmDeployment(WORKED);
    expect(r.ok).toBe(true);
    expect(r.plan!.budget.availableBytes).toBe(138_101_089_895 - 26 * GIB);
    expect(r.plan!.numGpuBlocks).toBe(109_937);
    expect(r.plan!.blocksPerRequest.total).toBe(10_778);
    expect(r.plan!.grouping.blockStrideBytes).toBe(1_002_240);
    expect(r.printedLines).toEqual([
      "GPU KV cache size: 10,695,611 tokens",
      "Maximum concurrency for 1,048,576 tokens per request: 10.20x",
    ]);
  });

  it("prints both figures on one line for main (0484480b)", () => {
    const r = checkVllmDeployment({ ...WORKED, vllmVersion: "main" });
    expect(r.printedLines).toEqual([
      "GPU KV cache size: 10,695,611 tokens, Maximum concurrency for 1,048,576 tokens per request: 10.20x",
    ]);
  });

  it("sizes 0.23-era sliding groups with the batched tokens alone (not log-confirmed: VL-V1)", () => {
    const r = checkVllmDeployment({ ...WORKED, vllmVersion: "0.23.0" });
    expect(r.plan!.request.inFlightTokens).toBe(8192);
    expect(r.warnings.map((w) => w.rule)).toContain("VL-V1");
    expect(rules(WORKED)).not.toContain("VL-V1");
  });

  it("defaults the weights to the checkpoint over TP × PP and says so", () => {
    const r = checkVllmDeployment({ model: FLASH, given: { kvCacheDtype: "fp8", tensorParallelSize: 4 } });
    expect(r.budget.input).toMatchObject({ kind: "gpu", weightsBytes: Math.round((FLASH.checkpointGiB / 4) * GIB) });
    expect(r.budget.weightsAssumption).toContain("/ 4 ranks");
  });

  it("takes --kv-cache-memory-bytes verbatim (the nepenth 0.27.1 log's figures)", () => {
    const r = checkVllmDeployment({
      model: F0731,
      given: {
        kvCacheDtype: "fp8",
        kvCacheMemoryBytes: 28_235_618_304,
        tensorParallelSize: 2,
        speculativeConfig: '{"method":"dspark","num_speculative_tokens":5}',
      },
      vllmVersion: "0.27.1",
    });
    expect(r.plan!.numGpuBlocks).toBe(28_172);
    expect(r.printedLines).toEqual([
      "GPU KV cache size: 2,740,813 tokens",
      "Maximum concurrency for 1,048,576 tokens per request: 2.61x",
    ]);
  });

  it("fits --max-model-len -1 to the longest length the start-up check passes", () => {
    const r = checkVllmDeployment({
      model: FLASH,
      given: { kvCacheDtype: "fp8", maxModelLen: -1 },
      budget: { kvBudgetBytes: 5_841_563_904 },
    });
    expect(r.ok).toBe(true);
    expect(r.autoFitMaxModelLen).toBeGreaterThan(0);
    expect(r.plan!.admission.passes).toBe(true);
  });

  it("refuses unreadable speculative JSON and unknown methods, naming the key", () => {
    const bad = (speculativeConfig: string) => () =>
      checkVllmDeployment({ model: FLASH, given: { kvCacheDtype: "fp8", speculativeConfig } });
    expect(bad("{nope")).toThrow(ServerConfigError);
    expect(bad('{"method":"eagle","num_speculative_tokens":2}')).toThrow(/speculativeConfig\.method/);
    expect(bad('{"method":"mtp"}')).toThrow(/num_speculative_tokens/);
    expect(() => checkVllmDeployment({ ...WORKED, vllmVersion: "0.20.1" })).toThrow(/0\.23 or later/);
  });
});

describe("vLLM rules: each is raised by its case and not by the worked example", () => {
  const cases: Record<string, VllmCheckInput> = {
    "VL-R1": { model: FLASH, given: {} },
    "VL-R2": { model: FLASH, given: { kvCacheDtype: "fp8", blockSize: 128 } },
    "VL-R6": {
      model: { ...FLASH, mtpLayers: 0, compressRatios: FLASH.compressRatios.slice(0, FLASH.numHiddenLayers) },
      given: { kvCacheDtype: "fp8", speculativeConfig: MTP3 },
    },
    "VL-R7": { model: F0731, given: { kvCacheDtype: "fp8", speculativeConfig: MTP4 } },
    "VL-R5": { model: FLASH, given: { kvCacheDtype: "fp8", maxModelLen: 2_000_000 } },
    "VL-L1": { ...WORKED, given: { ...WORKED.given, maxModelLen: 2_000_000, allowLongMaxModelLen: true } },
    "VL-R3": { model: FLASH, given: { kvCacheDtype: "fp8", tensorParallelSize: 1 } },
    "VL-R4": {
      model: FLASH,
      given: { kvCacheDtype: "fp8", maxModelLen: 30_000 },
      budget: { kvBudgetBytes: 5_841_563_904 },
    },
    "VL-O1": { ...WORKED, given: { ...WORKED.given, numGpuBlocksOverride: 200_000 } },
    "VL-B1": { ...WORKED, given: { ...WORKED.given, maxModelLen: 131_072 } },
    "VL-B2": { ...WORKED, given: { ...WORKED.given, blockSize: 512 } },
    "VL-M1": { ...WORKED, model: F0731 },
    "VL-S1": WORKED,
    "VL-S2": {
      model: F0731,
      given: { kvCacheDtype: "fp8", speculativeConfig: '{"method":"dspark","num_speculative_tokens":7}' },
      budget: { weightsGiB: 26 },
    },
    "VL-H1": { ...WORKED, given: { ...WORKED.given, disableHybridKvCacheManager: true } },
    "VL-P1": { ...WORKED, given: { ...WORKED.given, kvCacheMemoryBytes: 50 * GIB, gpuMemoryUtilization: 0.9 } },
    "VL-D1": { ...WORKED, given: { ...WORKED.given, decodeContextParallelSize: 2 } },
    "VL-V1": { ...WORKED, vllmVersion: "0.23.0" },
  };
  // No speculation, and 2048 batched tokens: the in-flight slack (1,664 blocks) under the context's 4,096.
  const quiet: VllmCheckInput = {
    ...WORKED,
    given: { ...WORKED.given, speculativeConfig: null, maxNumBatchedTokens: 2048 },
  };

  it("has a case for every rule of the table", () => {
    expect(Object.keys(cases).sort()).toEqual(Object.keys(VLLM_RULES).sort());
  });

  for (const [rule, input] of Object.entries(cases)) {
    it(`${rule}: raised with its severity, fix and (sized rules) a cost`, () => {
      const r = checkVllmDeployment(input);
      const issue = [...r.errors, ...r.warnings].find((i) => i.rule === rule);
      expect(issue, `${rule} not raised`).toBeDefined();
      const info = VLLM_RULES[rule as keyof typeof VLLM_RULES];
      expect(issue!.severity).toBe(info.severity);
      expect(issue!.fix).toBe(info.fix);
      if (info.severity === "error") expect(r.ok).toBe(false);
      expect(rules(quiet)).not.toContain(rule);
    });
  }

  it("prices the in-flight slack, the 512 block and multi-module MTP in blocks and tokens", () => {
    const slack = checkVllmDeployment(cases["VL-B1"]!).warnings.find((w) => w.rule === "VL-B1")!;
    expect(slack.cost!.blocksPerRequest).toBe(259 + 259 + 4099 + 2065 - (3 + 3 + 3 + 17));
    expect(slack.cost!.kvCacheSizeTokens).toBeGreaterThan(0);
    const b512 = checkVllmDeployment(cases["VL-B2"]!).warnings.find((w) => w.rule === "VL-B2")!;
    expect(b512.params.strideBytes).toBe(1_992_960);
    expect(b512.cost!.kvCacheSizeTokens).toBeGreaterThan(0);
    const mm = checkVllmDeployment(cases["VL-M1"]!).warnings.find((w) => w.rule === "VL-M1")!;
    expect(mm.params.extraRetainedTokens).toBe(2);
    expect(mm.cost!.blocksPerRequest).toBe(10_782 - 10_778);
  });
});

// D49: the three start-up refusals as vLLM's code makes them.
describe("vLLM rules checked against vLLM's code (D49)", () => {
  const given = { kvCacheDtype: "fp8" } as const;
  const issues = (input: VllmCheckInput) => {
    const r = checkVllmDeployment(input);
    return { r, all: [...r.errors, ...r.warnings] };
  };

  it("VL-R2: a multiple of 256 starts (vLLM splits it into 256-token kernel blocks); any other block is refused", () => {
    for (const blockSize of [768, 1024]) {
      const { r, all } = issues({ ...WORKED, given: { ...WORKED.given, blockSize } });
      expect(all.map((i) => i.rule)).not.toContain("VL-R2");
      expect(all.map((i) => i.rule)).toContain("VL-B2");
      expect(r.plan!.input.blockSize).toBe(blockSize);
    }
    for (const blockSize of [128, 384, 640]) {
      const r2 = issues({ model: FLASH, given: { ...given, blockSize } }).all.find((i) => i.rule === "VL-R2");
      expect(r2, `block ${blockSize}`).toMatchObject({ value: blockSize, params: { kernelBlockSizes: [256] } });
    }
  });

  it("VL-R7: MTP past the checkpoint's layers must be a multiple of them (0731: 3 layers)", () => {
    const mtp = (k: number) =>
      issues({ model: F0731, given: { ...given, speculativeConfig: `{"method":"mtp","num_speculative_tokens":${k}}` } })
        .all.filter((i) => i.rule === "VL-R7")
        .map((i) => i.value);
    expect([1, 2, 3, 4, 5, 6, 7, 9].flatMap(mtp)).toEqual([4, 5, 7]);
    expect(rules(WORKED)).not.toContain("VL-R7"); // Flash: 1 layer divides every count
  });

  it("VL-R5: a length equal to the positions passes; VLLM_ALLOW_LONG_MAX_MODEL_LEN turns the refusal into VL-L1", () => {
    const at = (maxModelLen: number, allowLongMaxModelLen?: boolean) =>
      issues({ ...WORKED, given: { ...WORKED.given, maxModelLen, allowLongMaxModelLen } }).all.map((i) => i.rule);
    expect(at(1_048_576)).not.toContain("VL-R5");
    expect(at(1_048_577)).toContain("VL-R5");
    const allowed = issues({
      ...WORKED,
      given: { ...WORKED.given, maxModelLen: 1_048_577, allowLongMaxModelLen: true },
    });
    expect(allowed.all.map((i) => i.rule)).toEqual(expect.arrayContaining(["VL-L1"]));
    expect(allowed.all.map((i) => i.rule)).not.toContain("VL-R5");
    expect(allowed.r.plan!.input.maxModelLen).toBe(1_048_577);
    expect(allowed.all.find((i) => i.rule === "VL-L1")!.params).toEqual({
      max: 1_048_576,
      key: "max_position_embeddings",
    });
  });
});
