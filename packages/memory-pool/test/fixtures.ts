import type { KvModelShape, SizingConfig } from "../src/index.js";

/** DeepSeek-V4-Flash (docs/reference/pools-and-sizing.md §2.2): `[0, 0, (4, 128) × 20, 4, 0]`, 43 layers. */
export const FLASH: KvModelShape = {
  qkNopeHeadDim: 448,
  qkRopeHeadDim: 64,
  indexHeadDim: 128,
  slidingWindow: 128,
  compressRatios: [0, 0, ...Array.from({ length: 20 }, () => [4, 128]).flat(), 4, 0],
  numHiddenLayers: 43,
  contextLen: 1_048_576,
};

/** DeepSeek-V4-Pro (docs/reference/pools-and-sizing.md §2.2): `[128, 128, (4, 128) × 29, 4, 0]`, 61 layers. */
export const PRO: KvModelShape = {
  ...FLASH,
  compressRatios: [128, 128, ...Array.from({ length: 29 }, () => [4, 128]).flat(), 4, 0],
  numHiddenLayers: 61,
};

/** docs/reference/pools-and-sizing.md §12: EAGLE 3/1/4, P = 256, r = 0.1, mrr 256, fp32 state. */
export function flashSpec(overrides: Partial<SizingConfig> = {}): SizingConfig {
  return {
    model: FLASH,
    pageSize: 256,
    swaFullTokensRatio: 0.1,
    isSpeculative: true,
    maxDraftTokens: 4,
    maxRunningRequests: 256,
    ...overrides,
  };
}

/** The budget of docs/reference/pools-and-sizing.md §12.2 (118 GiB free after load). */
export const SCENARIO_B_BYTES = 104_314_018_201;
