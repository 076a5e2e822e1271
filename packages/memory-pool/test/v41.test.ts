/**
 * DeepSeek-V4.1 layer roles, pools and configurator (docs/reference/deepseek-v4.1.md §2, §4, §5, §6), and the worked
 * example of docs/reference/deepseek-v4.1.md §7 (V4.1-Flash on one rank of 8x H200, without and with DSpark), whose
 * figures were derived by hand there.
 */
import { describe, expect, it } from "vitest";
import {
  type V41ModelShape,
  type V41SizingConfig,
  kvBudgetFromGpu,
  pairStatePool,
  sizeV41,
  sizeV41Configurator,
  v41Coefficients,
  v41PairRingSize,
  v41Pools,
  v41SourceLayerOf,
  v41Sources,
} from "../src/index.js";

const FLASH: V41ModelShape = {
  qkNopeHeadDim: 448,
  qkRopeHeadDim: 64,
  indexHeadDim: 128,
  numHiddenLayers: 40,
  slidingWindow: 128,
  compressRatios: [0, 0, ...Array(18).fill(2), ...Array(20).fill(1), 0, 0, 0],
  kvSourceLayerIds: [2, 8, 14, 20],
  draftLayers: 3,
};

function config(over: Partial<V41SizingConfig> = {}): V41SizingConfig {
  return {
    model: FLASH,
    pageSize: 256,
    contextLen: 1_048_576,
    isSpeculative: false,
    draftTokens: 0,
    maxRunningRequests: 256,
    swaCapTokens: null,
    swaFullTokensRatio: 0.1,
    ...over,
  };
}
const DSPARK = { isSpeculative: true, draftTokens: 6 } as const;

function refusal(f: () => unknown): { code: string; field: string; message: string } {
  try {
    f();
  } catch (e) {
    return e as { code: string; field: string; message: string };
  }
  throw new Error("expected a refusal");
}

describe("layer roles (deepseek-v4.1 §2)", () => {
  it("V4.1-Flash: ratio 2 owned by 2, 8, 14; ratio 1 by 20; readers take the nearest source before them", () => {
    const s = v41Sources(FLASH);
    expect(s).toEqual({ 1: [20], 2: [2, 8, 14] });
    expect([2, 7, 8, 13, 19].map((l) => v41SourceLayerOf(s, 2, l))).toEqual([2, 2, 8, 8, 14]);
    expect(v41SourceLayerOf(s, 1, 39)).toBe(20);
  });

  it("refuses a reader before its source, a source on an SWA layer, ratio 4, a compressed draft stage", () => {
    expect(refusal(() => v41Sources({ ...FLASH, kvSourceLayerIds: [8, 14, 20] }))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "kvSourceLayerIds",
    });
    expect(refusal(() => v41Sources({ ...FLASH, kvSourceLayerIds: [0, 2, 8, 14, 20] })).field).toBe(
      "kvSourceLayerIds[0]",
    );
    expect(refusal(() => v41Sources({ ...FLASH, kvSourceLayerIds: [2, 8, 14, 40] })).field).toBe("kvSourceLayerIds[3]");
    const four = [...FLASH.compressRatios];
    four[25] = 4;
    expect(refusal(() => v41Sources({ ...FLASH, compressRatios: four }))).toMatchObject({
      code: "INVALID_RATIO",
      field: "compressRatios[25]",
    });
    const draft = [...FLASH.compressRatios];
    draft[40] = 1;
    expect(refusal(() => v41Sources({ ...FLASH, compressRatios: draft })).field).toBe("compressRatios[40]");
    expect(refusal(() => v41Sources({ ...FLASH, compressRatios: [0, 0, 2] })).code).toBe("KV_LAYOUT");
  });
});

describe("pools (deepseek-v4.1 §4)", () => {
  it("ring R2: 2 without speculation, pow2 >= 2 + D with it (8 for DSpark's 6 draft tokens)", () => {
    expect(v41PairRingSize(false, 6)).toBe(2);
    expect([0, 1, 2, 3, 6, 7, 14, 15].map((d) => v41PairRingSize(true, d))).toEqual([2, 4, 4, 8, 8, 16, 16, 32]);
  });

  it("pair state: ceil2(slots·R + R + 1) rows of 1024 fp32 per ratio-2 source", () => {
    expect(pairStatePool({ numReqSlots: 257, ringSize: 2, headDim: 512, layers: 3 })).toMatchObject({
      shapePerLayer: [518, 1024],
      dtype: "float32",
      totalBytes: 518 * 4096 * 3,
    });
    expect(pairStatePool({ numReqSlots: 5, ringSize: 8, headDim: 512, layers: 3 }).shapePerLayer).toEqual([50, 1024]);
  });

  it("every pool of a rank: SWA of 40 layers, KV and fp4 index of the 4 sources, pair state, draft SWA", () => {
    const r = v41Pools({
      model: FLASH,
      fullSize: 1_000_192,
      swaSize: 100_096,
      pageSize: 256,
      numReqSlots: 257,
      pairRingSize: 8,
      withDraft: true,
    });
    const byId = Object.fromEntries(r.pools.map((p) => [p.id, [p.layers, ...p.shapePerLayer]]));
    expect(byId).toEqual({
      "swa-kv": [40, 392, 149_760],
      "c2-kv": [3, 3908, 74_880],
      "c2-indexer-k": [3, 7817, 4352],
      "c1-kv": [1, 3908, 149_760],
      "c1-indexer-k": [1, 15633, 4352],
      "c2-pair-state": [3, 2066, 1024],
      "draft-swa-kv": [3, 392, 149_760],
    });
    expect(r.totalBytes).toBe(r.pools.reduce((s, p) => s + p.totalBytes, 0));
    const base = { model: FLASH, fullSize: 0, swaSize: 0, pageSize: 256, numReqSlots: 1, pairRingSize: 2 };
    expect(refusal(() => v41Pools({ ...base, withDraft: false, ringSize: 2 } as never)).code).toBe("UNKNOWN_KEY");
    expect(refusal(() => v41Pools({ ...base, withDraft: "yes" } as never)).field).toBe("withDraft");
    expect(refusal(() => v41Pools({ ...base, withDraft: false, indexPageSize: 32 } as never)).field).toBe(
      "indexPageSize",
    );
  });
});

describe("configurator (deepseek-v4.1 §5)", () => {
  it("coefficients: 1630 compressed; 3966 ratio mode; cap mode with DSpark 1670.75 and 23,944 per SWA token", () => {
    expect(v41Coefficients(config()).bytesPerFullToken).toBe(3966);
    expect(v41Coefficients(config({ swaCapTokens: 13312 })).bytesPerFullToken).toBe(1630);
    const cap = v41Coefficients(config({ ...DSPARK, swaCapTokens: 13312 }));
    expect(cap.bytesPerFullToken.toFixed(2)).toBe("1670.75");
    expect(cap.bytesPerSwaToken.toFixed(2)).toBe("23944.00");
  });

  it("refuses what SGLang refuses: a SWA pool below W + P (ratio mode), a cap that leaves no room", () => {
    expect(refusal(() => sizeV41Configurator(config({ swaFullTokensRatio: 0.0001 }), 2 ** 30)).code).toBe("SWA_FLOOR");
    expect(refusal(() => sizeV41Configurator(config({ swaCapTokens: 1_048_576 }), 2 ** 30)).code).toBe(
      "NOT_ENOUGH_MEMORY",
    );
    expect(refusal(() => sizeV41Configurator(config({ pageSize: 64 }), 2 ** 30)).code).toBe("INVALID_ARGUMENT");
    expect(refusal(() => sizeV41Configurator(config({ swaFullTokensRatio: 0 }), 2 ** 30)).field).toBe(
      "swaFullTokensRatio",
    );
  });

  it("without --max-running-requests the fixed costs are priced for the configurator's estimate", () => {
    const c = sizeV41Configurator(config({ maxRunningRequests: null }), 40 * 2 ** 30);
    // F0 = int(40 GiB / 3966) ≈ 10.8M tokens: 10.8M / 1,048,576 · 512 ≈ 5275, clamped to 4096.
    expect(c.pricedMaxRunningRequests).toBe(4096);
    expect(c.c2StateFixedBytes).toBe(Math.ceil((4097 * 2 + 3) / 2) * 2 * 4096 * 3);
  });
});

describe("worked example: V4.1-Flash on one rank of 8x H200 (deepseek-v4.1 §7)", () => {
  const { availableBytes } = kvBudgetFromGpu({ preFreeGiB: 139, postFreeGiB: 75, memFractionStatic: 0.85 });

  it("the budget: 54.15 GiB", () => {
    expect(availableBytes).toBe(58_143_119_769);
  });

  it("without speculation: F 14,658,560, S 1,465,856; allocation overshoots the reservation by 100,800,743 B", () => {
    const r = sizeV41(config(), availableBytes);
    expect(r.configurator).toMatchObject({ bytesPerFullToken: 3966, pairRingSize: 2, c2StateFixedBytes: 6_365_184 });
    expect(r.configurator.pools).toEqual({
      full: 14_658_560,
      swa: 1_465_856,
      c4: 3_664_640,
      c128: 114_520,
      c4State: 91_616,
      c128State: 0,
    });
    expect(Object.fromEntries(r.pools.map((p) => [p.id, p.totalBytes]))).toEqual({
      "swa-kv": 34_307_020_800,
      "c2-kv": 12_863_111_040,
      "c2-indexer-k": 1_495_212_288,
      "c1-kv": 8_575_407_360,
      "c1-indexer-k": 996_803_840,
      "c2-pair-state": 6_365_184,
    });
    expect(r.allocatedBytes).toBe(58_243_920_512);
    expect(r.unusedBytes).toBe(-100_800_743);
    expect(r.poolInitLines[0]).toMatchObject({ c4StatePoolSize: 91_616, c128StatePoolSize: 32_896 });
    expect(r.warnings.map((w) => w.kind)).toEqual(["layout-blind-low-ratio", "swa-padding"]);
  });

  it("with DSpark (block 5, 6 draft tokens): R2 8, F 14,296,576; the 3 draft layers overshoot by 1,187,475,687 B", () => {
    const r = sizeV41(config(DSPARK), availableBytes);
    expect(r.configurator.bytesPerFullToken.toFixed(2)).toBe("4065.15");
    expect(r.configurator).toMatchObject({ pairRingSize: 8, c2StateFixedBytes: 25_387_008 });
    expect(r.configurator.pools).toMatchObject({ full: 14_296_576, swa: 1_429_504, c4State: 178_688 });
    const draft = r.pools.find((p) => p.id === "draft-swa-kv")!;
    expect(draft).toMatchObject({ layers: 3, totalBytes: 2_509_228_800 });
    expect(Math.round(draft.estimatedBytes)).toBe(1_417_505_510);
    expect(r.allocatedBytes).toBe(59_330_595_456);
    expect(r.unusedBytes).toBe(-1_187_475_687);
    expect(r.poolInitLines.map((l) => [l.worker, l.c128StatePoolSize])).toEqual([
      ["target", 65_792],
      ["draft", 0],
    ]);
    expect(r.warnings.find((w) => w.kind === "draft-layers")!.message).toContain("3 SWA layers allocated");
  });
});
