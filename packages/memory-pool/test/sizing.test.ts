import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MemoryPoolCapacityErrors,
  MemoryPoolError,
  bytesPerFullToken,
  c128FixedBytes,
  kvBudgetFromGpu,
  poolSizesFromMaxTokens,
  ppStageLayerRanges,
  ringDraftViolations,
  sizeKvCache,
  type SizingConfig,
} from "../src/index.js";
import { stageFacts } from "../src/internal.js";
import { FLASH, PRO, SCENARIO_B_BYTES, flashSpec } from "./fixtures.js";

const nonSpec = (overrides: Partial<SizingConfig> = {}): SizingConfig =>
  flashSpec({ isSpeculative: false, maxDraftTokens: 0, ...overrides });
const genB = (overrides: Partial<SizingConfig> = {}): SizingConfig => flashSpec({ mode: "sglang-gen-b", ...overrides });

function bpft(config: SizingConfig) {
  const stage = stageFacts(config)[0]!;
  return bytesPerFullToken(
    config,
    stage,
    config.mode === "sglang-gen-b" ? config.model.slidingWindow : config.pageSize,
  );
}

describe("bytes per full token, Gen B (pools-and-sizing §8.2)", () => {
  it("Flash non-spec 7705.45 with the pools-and-sizing §8.2 term split", () => {
    const b = bpft(nonSpec({ mode: "sglang-gen-b" }));
    expect(b.total).toBeCloseTo(7705.45, 9);
    expect(b.swaKv).toBeCloseTo(2511.2, 9);
    expect(b.c4Kv).toBe(3066);
    expect(b.c128Kv).toBe(91.25);
    expect(b.c4Indexer).toBe(693);
    expect(b.c4AttentionState).toBeCloseTo(1075.2, 9);
    expect(b.c128State).toBe(0);
    expect(b.c4IndexerState).toBeCloseTo(268.8, 9);
  });

  it("Flash spec raw 9049.45, inflated ×44/43 = 9259.9023… (pools-and-sizing §12.1)", () => {
    const b = bpft(genB());
    expect(b.raw).toBeCloseTo(9049.45, 9);
    expect(b.c4AttentionState).toBeCloseTo(2150.4, 9);
    expect(b.c4IndexerState).toBeCloseTo(537.6, 9);
    expect(b.draftFactor).toBe(44 / 43);
    expect(b.total).toBeCloseTo(9259.902325581, 8);
  });

  it("Pro non-spec 10993.8375; spec raw 12913.8375, inflated 13125.5398…", () => {
    expect(bpft(nonSpec({ mode: "sglang-gen-b", model: PRO })).total).toBeCloseTo(10993.8375, 9);
    const b = bpft(genB({ model: PRO }));
    expect(b.raw).toBeCloseTo(12913.8375, 9);
    expect(b.total).toBeCloseTo(13125.5398, 4);
  });

  it("exact mode divides the c4 state by P (half the Gen B state terms at P = 256)", () => {
    const b = bpft(flashSpec());
    expect(b.c4AttentionState).toBeCloseTo(1075.2, 9);
    expect(b.c4IndexerState).toBeCloseTo(268.8, 9);
  });
});

describe("fixed c128 state bytes (pools-and-sizing §8.4)", () => {
  const fixed = (config: SizingConfig) => c128FixedBytes(config, stageFacts(config)[0]!, 256);
  it("Flash offline non-spec 2,715,811,840 B; spec 5,421,137,920 B; Pro spec 8,402,763,776 B", () => {
    expect(fixed(nonSpec())).toBe(2_715_811_840);
    expect(fixed(flashSpec())).toBe(5_421_137_920);
    expect(fixed(flashSpec({ model: PRO }))).toBe(8_402_763_776);
  });
  it("Flash online: 31,825,920 B without MTP, 159,129,600 B with 4 banks", () => {
    expect(fixed(nonSpec({ onlineC128: true }))).toBe(31_825_920);
    expect(fixed(flashSpec({ onlineC128: true, onlineC128Mtp: true }))).toBe(159_129_600);
  });
  it("zero without c128 layers", () => {
    const model = { ...FLASH, compressRatios: [0, 4, 4], numHiddenLayers: 3 };
    expect(fixed(flashSpec({ model }))).toBe(0);
  });
});

describe("ring/draft check (pools-and-sizing §8.3)", () => {
  const stage = stageFacts(flashSpec())[0]!;
  it("spec rings accept 6 and 10, reject 11 with 'serves at most 10'", () => {
    expect(ringDraftViolations(stage, 6, false)).toEqual([]);
    expect(ringDraftViolations(stage, 10, false)).toEqual([]);
    const errors = ringDraftViolations(stage, 11, false);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: "DRAFT_EXCEEDS_RING",
      field: "speculativeNumDraftTokens",
      value: 11,
      params: { ratio: 4, ringSize: 16, writePad: 10, draftTokens: 11 },
    });
    expect(errors[0]!.message).toMatch(/c4 compress state ring of 16 serves at most 10 draft tokens/);
  });
  it("c128 limit 130; skipped when online; a ratio with 0 layers is skipped", () => {
    expect(ringDraftViolations(stage, 131, false).map((e) => e.params)).toEqual([
      { ratio: 4, ringSize: 16, writePad: 10, draftTokens: 131 },
      { ratio: 128, ringSize: 256, writePad: 130, draftTokens: 131 },
    ]);
    expect(ringDraftViolations(stage, 131, true)).toHaveLength(1);
    const noC4 = stageFacts(flashSpec({ model: { ...FLASH, compressRatios: [0, 128], numHiddenLayers: 2 } }))[0]!;
    expect(ringDraftViolations(noC4, 11, false)).toEqual([]);
  });
});

describe("Gen B sizing (pools-and-sizing §8.5, §12.2 with 118 GiB free)", () => {
  const result = sizeKvCache(genB(), SCENARIO_B_BYTES);
  it("reproduces upstream's arithmetic by hand", () => {
    // fixed = 5,421,137,920; tokenBytes = 98,892,880,281; / 9259.9023… = 10,679,552.x; 41,717 pages of 256.
    expect(result.fixedBytes).toBe(5_421_137_920);
    expect(result.sizes).toEqual({
      maxTotalNumTokens: 10_679_552,
      swaTokens: 1_067_776, // int(1,067,955.2) // 256 · 256
      c4Size: 2_669_888,
      c128Size: 83_434,
      c4LogicalSize: 2_669_888,
      c4StatePoolSize: 133_472, // 1,067,776 // 128 · 16 (the window divisor quirk)
      c128StatePoolSize: 65_792, // 257 · 256
    });
    expect(result.maxRunningRequests).toBe(256);
  });
  it("reports estimated vs allocated per pool (C128 KV page padding, draft reservation)", () => {
    const pool = (name: string) => result.stages[0]!.pools.find((p) => p.name === name)!;
    expect(pool("C128 KV").totalBytes).toBe(20 * 41_718 * 1728);
    expect(pool("C128 KV").unaccountedBytes).toBeCloseTo(20 * 41_718 * 1728 - 10_679_552 * 91.25, 3);
    expect(pool("C128 attention state").unaccountedBytes).toBe(0);
    expect(pool("draft SWA KV").shapePerLayer).toEqual([4172, 149_760]);
    expect(pool("draft SWA KV").unaccountedBytes).toBeLessThan(0);
    expect(result.allocatedBytes).toBe(result.stages[0]!.pools.reduce((s, p) => s + p.totalBytes, 0));
    expect(result.unusedBytes).toBe(SCENARIO_B_BYTES - result.allocatedBytes);
  });
  it("property: F·bpft + fixed <= budget and 0 <= F0 − F < P (pools-and-sizing §8.5, §9.1)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 10e9, max: 200e9 }), fc.boolean(), (available, spec) => {
        const config = spec ? genB() : nonSpec({ mode: "sglang-gen-b" });
        const r = sizeKvCache(config, available);
        const F = r.sizes.maxTotalNumTokens;
        const F0 = Math.trunc((available - r.fixedBytes) / r.bytesPerFullToken.total);
        expect(F % 256).toBe(0);
        expect(r.sizes.swaTokens % 256).toBe(0);
        expect(r.sizes.swaTokens).toBeLessThanOrEqual(F * 0.1);
        expect(r.sizes.c4Size).toBe(Math.floor(F / 4));
        expect(r.sizes.c128Size).toBe(Math.floor(F / 128));
        expect(r.sizes.c4LogicalSize).toBe(F / 4);
        expect(r.sizes.c4StatePoolSize).toBe(Math.floor(r.sizes.swaTokens / 128) * (spec ? 16 : 8));
        expect(F * r.bytesPerFullToken.total + r.fixedBytes).toBeLessThanOrEqual(available);
        expect(F0 - F).toBeGreaterThanOrEqual(0);
        expect(F0 - F).toBeLessThan(256);
        expect(r.sizes.c128StatePoolSize).toBe(r.numReqSlots * (spec ? 256 : 128));
      }),
      { numRuns: 60 },
    );
  });
  it("monotonicity (pools-and-sizing §13): more budget ⇒ F non-decreasing; speculation, larger r ⇒ smaller F", () => {
    fc.assert(
      fc.property(fc.integer({ min: 10e9, max: 150e9 }), fc.integer({ min: 0, max: 5e9 }), (available, extra) => {
        for (const mode of ["sglang-gen-b", "exact"] as const) {
          const a = sizeKvCache(flashSpec({ mode }), available).sizes.maxTotalNumTokens;
          expect(sizeKvCache(flashSpec({ mode }), available + extra).sizes.maxTotalNumTokens).toBeGreaterThanOrEqual(a);
          expect(sizeKvCache(nonSpec({ mode }), available).sizes.maxTotalNumTokens).toBeGreaterThan(a);
          expect(
            sizeKvCache(flashSpec({ mode, swaFullTokensRatio: 0.2 }), available).sizes.maxTotalNumTokens,
          ).toBeLessThan(a);
        }
      }),
      { numRuns: 15 },
    );
  });
  it("--max-total-tokens caps F via fromMaxTokens (pools-and-sizing §8.6)", () => {
    const r = sizeKvCache(genB({ maxTotalTokens: 1_000_000 }), SCENARIO_B_BYTES);
    expect(r.sizes).toMatchObject({ maxTotalNumTokens: 999_936, swaTokens: 99_840, c4Size: 249_984, c128Size: 7812 });
    expect(poolSizesFromMaxTokens(genB(), 1_000_000)).toMatchObject({
      maxTotalNumTokens: 999_936,
      c4StatePoolSize: (99_840 / 128) * 16,
    });
  });
  it("mrr unset: estimated clamp(F/context·512, 2048, 4096), capped at F/2 (pools-and-sizing §7.1)", () => {
    const r = sizeKvCache(genB({ maxRunningRequests: null }), SCENARIO_B_BYTES);
    expect(r.maxRunningRequests).toBe(2048);
    expect(r.numReqSlots).toBe(2049);
  });
  it("attention DP divides the requested mrr; PD decode adds extra slots", () => {
    expect(sizeKvCache(genB({ attnDpSize: 4 }), SCENARIO_B_BYTES).maxRunningRequests).toBe(64);
    expect(
      sizeKvCache(genB({ disaggregationMode: "decode", disaggregationDecodeExtraSlots: 8 }), SCENARIO_B_BYTES)
        .numReqSlots,
    ).toBe(265);
  });
});

describe("exact sizing (default mode)", () => {
  it("every pool's estimate is its allocation, the total fits, and one more page would not", () => {
    fc.assert(
      fc.property(fc.integer({ min: 8e9, max: 150e9 }), fc.boolean(), (available, spec) => {
        const config = spec ? flashSpec() : nonSpec();
        const r = sizeKvCache(config, available);
        for (const p of r.stages[0]!.pools) expect(p.unaccountedBytes).toBe(0);
        expect(r.allocatedBytes).toBeLessThanOrEqual(available);
        const next = sizeKvCache({ ...config, maxTotalTokens: r.sizes.maxTotalNumTokens + 256 }, available * 2);
        expect(next.allocatedBytes).toBeGreaterThan(available);
      }),
      { numRuns: 25 },
    );
  });
  it("scenario B: more tokens than Gen B and under 1 MiB unused", () => {
    const r = sizeKvCache(flashSpec(), SCENARIO_B_BYTES);
    expect(r.sizes.maxTotalNumTokens).toBe(12_648_960);
    expect(r.unusedBytes).toBe(909_273);
    // c4 state covers every SWA page's ring: (S/P + 1) pages · 16 rows fit below the sentinel.
    const swaPages = r.sizes.swaTokens / 256 + 1;
    const c4State = r.stages[0]!.pools.find((p) => p.name === "C4 attention state")!;
    expect(swaPages * 16).toBeLessThanOrEqual(c4State.shapePerLayer[0]! - 1);
  });
  it("draft worker pool: one SWA layer of S tokens (pools-and-sizing §5.5)", () => {
    const r = sizeKvCache(flashSpec(), SCENARIO_B_BYTES);
    const draft = r.stages[0]!.pools.find((p) => p.name === "draft SWA KV")!;
    expect(draft.layers).toBe(1);
    expect(draft.shapePerLayer).toEqual([Math.floor((r.sizes.swaTokens + 257) / 256), 149_760]);
    expect(sizeKvCache(nonSpec(), SCENARIO_B_BYTES).stages[0]!.pools.some((p) => p.name === "draft SWA KV")).toBe(
      false,
    );
  });
});

describe("pipeline parallel (pools-and-sizing §8.6)", () => {
  it("splits 43 layers into 22 + 21 and takes the min capacity", () => {
    expect(ppStageLayerRanges(43, 2)).toEqual([
      { startLayer: 0, endLayer: 22 },
      { startLayer: 22, endLayer: 43 },
    ]);
    expect(ppStageLayerRanges(10, 4).map((r) => r.endLayer - r.startLayer)).toEqual([2, 3, 3, 2]);
    const r = sizeKvCache(genB({ ppSize: 2 }), SCENARIO_B_BYTES);
    expect(r.stages).toHaveLength(2);
    expect(r.sizes.maxTotalNumTokens).toBe(Math.min(...r.stages.map((s) => s.stageCapacityTokens)));
  });
});

describe("validation (startup-rules §7)", () => {
  it("P = 64 → multiple of 128 (V-P2); P = 128 → must be 256 (V-P3)", () => {
    expect(() => sizeKvCache(genB({ pageSize: 64 }), SCENARIO_B_BYTES)).toThrow(/page_size must be multiple of 128/);
    expect(() => sizeKvCache(genB({ pageSize: 128 }), SCENARIO_B_BYTES)).toThrow(/page_size must be 256/);
  });
  it("S <= W + P → SWA floor error (V-P4); budget below fixed bytes → both V-P4 and V-M2", () => {
    expect(() => sizeKvCache(genB({ maxTotalTokens: 4096 }), SCENARIO_B_BYTES)).toThrow(
      expect.objectContaining({
        code: "SWA_FLOOR",
        params: { swaTokens: 256, minimumSwaTokens: 512, slidingWindow: 128, pageSize: 256, swaFullTokensRatio: 0.1 },
      }),
    );
    try {
      sizeKvCache(genB(), 1e9);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MemoryPoolCapacityErrors);
      expect((error as MemoryPoolCapacityErrors).errors.map((e) => e.code)).toEqual(["SWA_FLOOR", "NOT_ENOUGH_MEMORY"]);
      expect((error as MemoryPoolCapacityErrors).code).toBe("CAPACITY");
      expect(MemoryPoolCapacityErrors.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/at least one page of every pool: increase --mem-fraction-static/);
    }
  });
  it("ratio outside {0, 4, 128} and HiSparse ratio < 1 are typed errors", () => {
    expect(() =>
      sizeKvCache(genB({ model: { ...FLASH, compressRatios: [0, 8], numHiddenLayers: 2 } }), SCENARIO_B_BYTES),
    ).toThrow(/Unsupported compression ratio: 8/);
    expect(() => sizeKvCache(genB({ hisparseRatio: 0.5 }), SCENARIO_B_BYTES)).toThrow(MemoryPoolError);
  });
  it("HiSparse shrinks only the c4 KV pool: c4 = F // (4H)", () => {
    const r = sizeKvCache(genB({ hisparseRatio: 2 }), SCENARIO_B_BYTES);
    expect(r.sizes.c4Size).toBe(Math.floor(r.sizes.maxTotalNumTokens / 8));
    expect(r.sizes.c4LogicalSize).toBe(r.sizes.maxTotalNumTokens / 4);
  });
});

describe("budget from the GPU (pools-and-sizing §7.1, V-M1)", () => {
  it("scenario B: 118 GiB free after load at 0.85 → 104,314,018,201 B", () => {
    expect(kvBudgetFromGpu({ preFreeGiB: 139, postFreeGiB: 118, memFractionStatic: 0.85 }).availableBytes).toBe(
      104_314_018_201,
    );
  });
  it("scenario A: the whole Flash checkpoint on one H200 → raise above 0.997", () => {
    expect(() => kvBudgetFromGpu({ preFreeGiB: 139, postFreeGiB: 139 - 138.45, memFractionStatic: 0.85 })).toThrow(
      expect.objectContaining({
        code: "NO_MEMORY",
        field: "memFractionStatic",
        value: 0.85,
        params: expect.objectContaining({ minimumViableFractionRoundedUp: 0.997, weightsExceedDevice: false }),
      }),
    );
    expect(() => kvBudgetFromGpu({ preFreeGiB: 139, postFreeGiB: 139 - 138.45, memFractionStatic: 0.85 })).toThrow(
      /raise it above 0.997 \(minimum viable 1 − postFree\/preFree = 0.99604\)/,
    );
  });
});

describe("each refusal names its start-up rule as data (startupRule), not by its params", () => {
  it("V-P2 (a multiple of 128), V-H1, and V-S8's words from one builder", async () => {
    const { requirePageSize } = await import("../src/config.js");
    const { draftExceedsRingText } = await import("../src/index.js");
    let error: unknown;
    try {
      requirePageSize(100);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "PAGE_SIZE", startupRule: "V-P2" });
    const p = { ratio: 4, ringSize: 16, writePad: 10, draftTokens: 11 };
    expect(draftExceedsRingText(p, "pool")).toBe(
      "the c4 compress state ring of 16 serves at most 10 draft tokens (its write pad): lower the draft count to 10 " +
        "or enlarge the ring",
    );
    expect(draftExceedsRingText(p, "startup")).toMatch(/^speculative_num_draft_tokens=11 exceeds what the c4/);
  });
});
