/**
 * Worked examples of vLLM's KV cache for DeepSeek-V4, each figure derived by hand in
 * docs/reference/vllm-kv-cache.md §10 (DeepSeek-V4-Flash, one H200 rank of TP 8, MTP 3) and its variants.
 */
import { describe, expect, test } from "vitest";
import { MODEL_PRESETS } from "../src/index.js";
import { approximateGcd, planVllmKvCache, pythonFixed2, pythonRound2, type VllmKvInput } from "../src/vllm/index.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const F0731 = MODEL_PRESETS["DeepSeek-V4-Flash-0731"]!;
const H200_BYTES = 150_109_880_320;
const GIB = 2 ** 30;

/** The worked example: Flash, MTP 3, 1M context, util 0.92, 26 GiB of non-KV memory on one H200 rank. */
const EXAMPLE: VllmKvInput = {
  model: FLASH,
  maxModelLen: 1_048_576,
  speculative: { method: "mtp", numSpeculativeTokens: 3 },
  budget: { kind: "gpu", totalDeviceBytes: H200_BYTES, weightsBytes: 26 * GIB },
};

describe("worked example: Flash on one H200 rank of TP 8, MTP 3", () => {
  const plan = planVllmKvCache(EXAMPLE);

  test("the 168 layer specs and their padded pages", () => {
    const pages = new Map<string, Set<number>>();
    for (const s of plan.specs) pages.set(s.kind, (pages.get(s.kind) ?? new Set()).add(s.pageBytes));
    expect(plan.specs).toHaveLength(168);
    expect(plan.draftLayers).toBe(1);
    expect(Object.fromEntries([...pages].map(([k, v]) => [k, [...v]]))).toEqual({
      swa: [37_440],
      "c4-main": [37_440],
      "c4-indexer": [8_640],
      "c128-main": [1_728],
      "c4-attn-state": [32_832],
      "c4-indexer-state": [8_640],
      "c128-state": [32_832],
    });
    const counts: Record<string, number> = {};
    for (const s of plan.specs) counts[s.kind] = (counts[s.kind] ?? 0) + 1;
    expect(counts).toEqual({
      swa: 44,
      "c4-main": 21,
      "c4-indexer": 21,
      "c128-main": 20,
      "c4-attn-state": 21,
      "c4-indexer-state": 21,
      "c128-state": 20,
    });
  });

  test("five groups, 22 layer tuples, a 1,002,240 B stride", () => {
    const groups = plan.grouping.groups.map((g) => ({
      block: g.blockSizeTokens,
      window: g.slidingWindowTokens,
      specs: g.specs.length,
      tuples: g.layerTuples,
      bytes: g.bytesPerBlock,
    }));
    expect(groups).toEqual([
      { block: 256, window: null, specs: 62, tuples: 21, bytes: 1_002_240 },
      { block: 64, window: 128, specs: 22, tuples: 22, bytes: 823_680 },
      { block: 64, window: 128, specs: 22, tuples: 22, bytes: 823_680 },
      { block: 4, window: 8, specs: 42, tuples: 21, bytes: 870_912 },
      { block: 8, window: 128, specs: 20, tuples: 20, bytes: 656_640 },
    ]);
    expect(plan.grouping.layerTuples).toBe(22);
    expect(plan.grouping.blockStrideBytes).toBe(1_002_240);
    expect(plan.schedulerBlockSize).toBe(4);
  });

  test("blocks per request, budget, blocks and both printed figures", () => {
    expect(plan.request).toEqual({ maxModelLen: 1_048_576, inFlightTokens: 16_384, extraRetainedTokens: 0 });
    expect(plan.blocksPerRequest).toEqual({ perGroup: [4_096, 259, 259, 4_099, 2_065], total: 10_778 });
    expect(plan.budget).toEqual({
      requestedBytes: 138_101_089_895,
      nonKvBytes: 27_917_287_424,
      availableBytes: 110_183_802_471,
      source: "gpu",
    });
    expect(plan.numGpuBlocks).toBe(109_937);
    expect(plan.poolBytes).toBe(110_183_258_880);
    expect(plan.printed.kvCacheSizeTokens).toBe(10_695_611);
    expect(plan.printed.kvCacheSizeLine).toBe("GPU KV cache size: 10,695,611 tokens");
    expect(plan.printed.maxConcurrencyLine).toBe("Maximum concurrency for 1,048,576 tokens per request: 10.20x");
    expect(pythonRound2(plan.budget.availableBytes / GIB)).toBe("102.62");
  });

  test("the start-up check charges 22 × 47,808 B per block and passes", () => {
    expect(plan.admission).toEqual({
      bytesPerBlock: 1_051_776,
      bytesNeeded: 11_336_041_728,
      passes: true,
      estimatedMaxModelLen: null,
    });
  });
});

describe("variants of the worked example", () => {
  const plan = (over: Partial<VllmKvInput>) => planVllmKvCache({ ...EXAMPLE, ...over });

  test("T = 2048: sliding groups shrink, 5,786 blocks per request, 19.00x", () => {
    const p = plan({ maxNumBatchedTokens: 2048 });
    expect(p.blocksPerRequest.perGroup).toEqual([4_096, 67, 67, 1_027, 529]);
    expect(p.printed.kvCacheSizeTokens).toBe(19_923_487);
    expect(p.printed.maxConcurrencyText).toBe("19.00");
  });

  test("synchronous scheduling holds one batch in flight: 7,450 blocks per request", () => {
    const p = plan({ asyncScheduling: false });
    expect(p.request.inFlightTokens).toBe(8_192);
    expect(p.blocksPerRequest.total).toBe(7_450);
  });

  test("the V2 runner keeps PP + 1 batches in flight; the V1 runner only PP under PP", () => {
    expect(plan({ pipelineParallelSize: 2, modelRunnerV2: true }).request.inFlightTokens).toBe(3 * 8192);
    expect(plan({ pipelineParallelSize: 2 }).request.inFlightTokens).toBe(2 * 8192);
    expect(plan({ pipelineParallelSize: 2, asyncScheduling: false }).request.inFlightTokens).toBe(2 * 8192);
  });

  test("fp4 indexer: 4,608 B indexer pages, a 917,568 B stride, 120,082 blocks", () => {
    const p = plan({ fp4IndexerCache: true });
    expect(new Set(p.specs.filter((s) => s.kind === "c4-indexer").map((s) => s.pageBytes))).toEqual(new Set([4_608]));
    expect(p.grouping.blockStrideBytes).toBe(917_568);
    expect(p.numGpuBlocks).toBe(120_082);
  });

  test("block size 128 lets the c4 state group set the stride; 512 doubles it", () => {
    const b128 = plan({ blockSize: 128 });
    expect(b128.grouping.groups[0]?.bytesPerBlock).toBe(518_976);
    expect(b128.grouping.blockStrideBytes).toBe(870_912);
    expect(plan({ blockSize: 512 }).grouping.blockStrideBytes).toBe(1_992_960);
  });

  test("no speculation: 43 SWA layers still make two SWA groups (22 + 21) and the same stride", () => {
    const p = plan({ speculative: null });
    expect(p.grouping.groups.filter((g) => g.kinds.includes("swa")).map((g) => g.specs.length)).toEqual([22, 21]);
    expect(p.grouping.blockStrideBytes).toBe(1_002_240);
    expect(p.blocksPerRequest.total).toBe(10_778);
  });

  test("multi-module MTP (0731's three MTP layers, K = 3): 23 tuples and two retained tokens per window", () => {
    const p = plan({ model: F0731 });
    expect(p.draftLayers).toBe(3);
    expect(p.request.extraRetainedTokens).toBe(2);
    expect(p.grouping.layerTuples).toBe(23);
    expect(p.blocksPerRequest.perGroup).toEqual([4_096, 260, 260, 4_100, 2_066]);
    expect(p.admission.bytesPerBlock).toBe(23 * 47_808);
    // K = 1 runs one module: one draft layer, nothing retained.
    const k1 = plan({ model: F0731, speculative: { method: "mtp", numSpeculativeTokens: 1 } });
    expect([k1.draftLayers, k1.request.extraRetainedTokens]).toEqual([1, 0]);
  });

  test("DSpark adds no layer to the target's groups", () => {
    const p = plan({ model: F0731, speculative: { method: "dspark", numSpeculativeTokens: 5 } });
    expect(p.draftLayers).toBe(0);
    expect(p.specs.filter((s) => s.kind === "swa")).toHaveLength(43);
  });

  test("num_gpu_blocks override replaces the budget's blocks", () => {
    const p = plan({ numGpuBlocksOverride: 10_778 });
    expect(p.numGpuBlocks).toBe(10_778);
    expect(p.printed.maxConcurrencyText).toBe("1.00");
    expect(p.printed.kvCacheSizeTokens).toBe(1_048_576);
  });

  test("a short max_model_len caps every sliding group at the context", () => {
    const p = plan({ maxModelLen: 1024 });
    // SWA: cdiv(1024, 64) + 1; c4 states: cdiv(1024, 4) + 1; c128 states: cdiv(1024, 8) + 1.
    expect(p.blocksPerRequest.perGroup).toEqual([4, 17, 17, 257, 129]);
  });

  test("too little memory: the check fails and names the longest max_model_len that passes", () => {
    const p = plan({
      maxModelLen: 30_000,
      speculative: null,
      budget: { kind: "availableBytes", bytes: 5_841_563_904 },
    });
    expect(p.admission.passes).toBe(false);
    expect(p.admission.estimatedMaxModelLen).toBe(13_528);
  });
});

describe("approximate gcd and Python-style rounding", () => {
  test("least padding, ties to the larger divisor", () => {
    expect(approximateGcd([21, 44, 21, 20], 21)).toBe(22);
    expect(approximateGcd([21, 46, 21, 20], 21)).toBe(23);
    // [4, 8]: d = 1, 2 and 4 pad nothing, 8 pads 4, so 4 wins the tie; [6, 6]: 1, 2, 3 and 6 tie, 6 wins.
    expect(approximateGcd([4, 8], 1)).toBe(4);
    expect(approximateGcd([6, 6], 1)).toBe(6);
    expect(approximateGcd([3], 5)).toBe(5);
  });

  test("two decimals as Python prints them: exact ties to even", () => {
    expect(pythonFixed2(1.125)).toBe("1.12");
    expect(pythonFixed2(1.375)).toBe("1.38");
    expect(pythonFixed2(2.613843)).toBe("2.61");
    expect(pythonFixed2(0.005)).toBe("0.01"); // 0.005 is stored a little above the tie
    expect(pythonRound2(28_235_618_304 / GIB)).toBe("26.3");
    expect(pythonRound2(7)).toBe("7.0");
  });
});
