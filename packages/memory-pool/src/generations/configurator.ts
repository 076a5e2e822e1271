/**
 * The sizing arithmetic of each SGLang DSV4 configurator generation whose start-up logs differ
 * (docs/reference/configurator-generations.md): the earliest calculator ("gen-a"), Gen B ("gen-b", what
 * `sglang-gen-b` sizes), the cap-mode SWA sizing ("gen-b-cap") and the Ascend NPU pool ("npu"). Each function
 * reproduces what that generation computes and logs from a budget, with its own quirks; none of them refuses what
 * the generation itself accepted (the NPU bf16 KV cache, page size 128).
 *
 * Units: `...Bytes` bytes; `...Tokens`/`size` tokens or entries.
 */
import { attentionHeadDim, configuratorKvBytesPerToken, offlineStateRowBytes } from "../bytes.js";
import { requireSizingConfig } from "../config.js";
import { MemoryPoolError, requireInt } from "../errors.js";
import {
  type BytesPerFullToken,
  type SizingConfig,
  type StageFacts,
  bytesPerFullToken,
  computeSizes,
  genBFixedBytes,
  genBStageCapacity,
  poolSizesAt,
  stageFacts,
  type PoolSizes,
} from "../sizing.js";

export type ConfiguratorGenerationId = "gen-a" | "gen-a-pools" | "gen-b" | "gen-b-cap" | "npu";

/** The generations that price the c128 state per SWA token (no fixed bytes): the earliest two. */
export const isSwaScopedC128 = (generation: ConfiguratorGenerationId) =>
  generation === "gen-a" || generation === "gen-a-pools";

/** The stage a generation sizes: the earliest calculator's own (genAStage), else the config's first stage. */
export function generationStage(
  generation: ConfiguratorGenerationId,
  config: SizingConfig,
  options: GenerationOptions = {},
): StageFacts {
  return generation === "gen-a" ? genAStage(config, options) : firstStage(config, options);
}

/** What a generation's configurator computes (and logs) from one budget, for the first pipeline stage. */
/**
 * The pool figures come from the shared arithmetic (`PoolSizes`, F renamed `fullTokens` as the log names it); the
 * c4 state is the size the configurator logs (`DSV4 pool sizes: … c4_state=`), the c128 state 0 in Gen B and later
 * (finalized from the request count).
 */
export interface GenerationSizing extends Omit<PoolSizes, "maxTotalNumTokens"> {
  generation: ConfiguratorGenerationId;
  /** The coefficient the generation divides the budget by (`bytes_per_full_token`, draft factor included). */
  bytesPerFullToken: number;
  /** Fixed request-scoped c128 state bytes subtracted first (0 in gen-a, which has none). */
  c128StateFixedBytes: number;
  /** Fixed SWA reservation of cap mode (SWA KV and its c4 state); 0 elsewhere. */
  swaFixedBytes: number;
  /** F, page-aligned (`full_token`). */
  fullTokens: number;
}

/** The pool figures a generation logs, from the shared pool arithmetic's sizes. */
function poolFigures(sizes: PoolSizes, c128StatePoolSize: number) {
  const { maxTotalNumTokens: fullTokens, swaTokens, c4Size, c128Size, c4LogicalSize, c4StatePoolSize } = sizes;
  return { fullTokens, swaTokens, c4Size, c128Size, c4LogicalSize, c4StatePoolSize, c128StatePoolSize };
}

export interface GenerationOptions {
  /** Cap mode: the SWA tokens the cap reserves (`request_cap+headroom`, already page-aligned upstream). */
  swaCapTokens?: number;
  /**
   * Replaces the stage's layer counts or ring sizes (the alternatives a log's reconciliation tries: rings with or
   * without MTP, the draft layer counted or not). Applied after the generation's own choice.
   */
  stage?: Partial<Pick<StageFacts, "layers" | "layersC4" | "layersC128" | "ringSizeC4" | "ringSizeC128">>;
}

function firstStage(config: SizingConfig, options: GenerationOptions = {}): StageFacts {
  return { ...stageFacts(config)[0]!, ...options.stage };
}

/**
 * The stage as the earliest calculator saw it: every `compress_ratios` entry is a layer (the MTP draft layer's
 * entry too: 44 SWA layers for Flash, not 43), and its rings are the other mode's: 8/128 with MTP on, 16/256
 * without (the speculative flag reached its ring function inverted; two public logs show both cases, see
 * docs/reference/configurator-generations.md §3). Online c128 keeps its ring of 1.
 */
export function genAStage(config: SizingConfig, options: GenerationOptions = {}): StageFacts {
  const base = stageFacts(config)[0]!;
  const all = config.model.compressRatios;
  const plain = stageFacts({ ...config, isSpeculative: !config.isSpeculative, ppSize: 1 })[0]!;
  return {
    ...base,
    layers: all.length,
    layersC4: all.filter((r) => r === 4).length,
    layersC128: all.filter((r) => r === 128).length,
    ringSizeC4: config.ringSizeOverrides?.[4] ?? plain.ringSizeC4,
    ringSizeC128: config.ringSizeOverrides?.[128] ?? plain.ringSizeC128,
    ...options.stage,
  };
}

/**
 * Gen A's coefficient: Gen B's terms (state dtype fixed at fp32, c4 state over the window) plus a c128 state term
 * `r · (R128 / W) · row · L128` (row `2A` fp32 offline, `3A` online), and no draft factor: Gen A scales the budget
 * by `L / (L + 1)` before it logs it instead.
 */
export function genABytesPerFullToken(config: SizingConfig, stage: StageFacts): number {
  const fp32 = { ...config, stateDtypeBytes: 4 as const };
  const b = bytesPerFullToken(fp32, stage, config.model.slidingWindow);
  const A = attentionHeadDim(config.model);
  const c128Row = (config.onlineC128 ? 3 * A : 2 * A) * 4;
  const c128State = config.swaFullTokensRatio * (stage.ringSizeC128 / config.model.slidingWindow) * c128Row;
  // Summed in upstream's order so the float is the one it printed.
  return (
    b.swaKv + b.c4Kv + b.c128Kv + b.c4Indexer + b.c4AttentionState + c128State * stage.layersC128 + b.c4IndexerState
  );
}

/**
 * Gen A (and the calculator after it that also logs the pool sizes): `F = int(avail / bpft) // P · P`, state pools
 * from SWA tokens over the window.
 */
function sizeGenA(
  config: SizingConfig,
  availableBytes: number,
  options: GenerationOptions,
  generation: "gen-a" | "gen-a-pools",
): GenerationSizing {
  const stage = generationStage(generation, config, options);
  const W = config.model.slidingWindow;
  const bpft = genABytesPerFullToken(config, stage);
  const sizes = computeSizes(config, stage, Math.trunc(availableBytes / bpft), W);
  return {
    generation,
    bytesPerFullToken: bpft,
    c128StateFixedBytes: 0,
    swaFixedBytes: 0,
    ...poolFigures(sizes, Math.floor(sizes.swaTokens / W) * stage.ringSizeC128),
  };
}

/** Gen B (CUDA) and the NPU pool (same configurator, page size 128): fixed c128 bytes, then F. */
function sizeGenB(
  config: SizingConfig,
  availableBytes: number,
  generation: "gen-b" | "npu",
  options: GenerationOptions,
): GenerationSizing {
  const stage = firstStage(config, options);
  const W = config.model.slidingWindow;
  const bpft = bytesPerFullToken(config, stage, W);
  const { fullTokens, fixedBytes } = genBStageCapacity(config, stage, availableBytes, bpft);
  const sizes = computeSizes(config, stage, fullTokens, W);
  return {
    generation,
    bytesPerFullToken: bpft.total,
    c128StateFixedBytes: fixedBytes,
    swaFixedBytes: 0,
    ...poolFigures(sizes, 0),
  };
}

/** Cap mode's two coefficients: per full token (compressed KV and indexer only) and per SWA token. */
export function capCoefficients(
  config: SizingConfig,
  stage: StageFacts,
): { bytesPerFullToken: number; bytesPerSwaToken: number; terms: BytesPerFullToken } {
  const W = config.model.slidingWindow;
  const terms = bytesPerFullToken(config, stage, W);
  const kv = configuratorKvBytesPerToken(config.model);
  const sd = config.stateDtypeBytes ?? 4;
  const A = attentionHeadDim(config.model);
  const stateRows =
    (stage.ringSizeC4 / W) *
    (offlineStateRowBytes(A, true, sd) + offlineStateRowBytes(config.model.indexHeadDim, true, sd));
  return {
    bytesPerFullToken: (terms.c4Kv + terms.c128Kv + terms.c4Indexer) * terms.draftFactor,
    bytesPerSwaToken: (kv * stage.layers + stateRows * stage.layersC4) * terms.draftFactor,
    terms,
  };
}

/** Cap mode: SWA and its c4 state become `swaFixed = S_cap · bytesPerSwaToken`; F from what is left. */
function sizeCap(config: SizingConfig, availableBytes: number, options: GenerationOptions): GenerationSizing {
  const swaCapTokens = options.swaCapTokens!;
  const stage = firstStage(config, options);
  const W = config.model.slidingWindow;
  const P = config.pageSize;
  const coef = capCoefficients(config, stage);
  const fixed = genBFixedBytes(config, stage, availableBytes, coef.bytesPerFullToken);
  const swaFixedBytes = swaCapTokens * coef.bytesPerSwaToken;
  const F =
    Math.floor(Math.trunc(Math.max(availableBytes - fixed - swaFixedBytes, 0) / coef.bytesPerFullToken) / P) * P;
  return {
    generation: "gen-b-cap",
    bytesPerFullToken: coef.bytesPerFullToken,
    c128StateFixedBytes: fixed,
    swaFixedBytes,
    ...poolFigures(poolSizesAt(config, stage, F, swaCapTokens, W), 0),
  };
}

/** Sizes `availableBytes` (as the generation logs it) with the generation's own arithmetic. */
export function sizeForGeneration(
  generation: ConfiguratorGenerationId,
  config: SizingConfig,
  availableBytes: number,
  options: GenerationOptions = {},
): GenerationSizing {
  requireSizingConfig(config);
  requireInt("availableBytes", availableBytes, 0);
  switch (generation) {
    case "gen-a":
    case "gen-a-pools":
      return sizeGenA(config, availableBytes, options, generation);
    case "gen-b":
    case "npu":
      return sizeGenB(config, availableBytes, generation, options);
    case "gen-b-cap": {
      const cap = options.swaCapTokens;
      if (cap == null) {
        throw new MemoryPoolError(
          "INVALID_ARGUMENT",
          "swaCapTokens",
          cap ?? null,
          "cap mode sizes SWA from its request cap: give swaCapTokens (the logged request_cap+headroom)",
        );
      }
      requireInt("swaCapTokens", cap, 0);
      return sizeCap(config, availableBytes, options);
    }
    default:
      throw new MemoryPoolError(
        "INVALID_ARGUMENT",
        "generation",
        generation,
        "generation must be one of gen-a, gen-a-pools, gen-b, gen-b-cap, npu",
      );
  }
}

/**
 * The pool sizes a generation recomputes from a token count (`calculate_pool_sizes_from_max_tokens`, after a
 * `--max-total-tokens` cap): F = T // P · P, SWA from the ratio (or the cap), no fixed bytes subtracted again.
 */
export function sizesFromMaxTokensForGeneration(
  generation: ConfiguratorGenerationId,
  config: SizingConfig,
  maxTokens: number,
  options: GenerationOptions = {},
): GenerationSizing {
  requireInt("maxTokens", maxTokens, 0);
  const base = sizeForGeneration(generation, config, 0, options);
  const stage = generationStage(generation, config, options);
  const W = config.model.slidingWindow;
  if (generation === "gen-b-cap") {
    const P = config.pageSize;
    const F = Math.floor(maxTokens / P) * P;
    return { ...base, ...poolFigures(poolSizesAt(config, stage, F, base.swaTokens, W), 0) };
  }
  const sizes = computeSizes(config, stage, maxTokens, W);
  return {
    ...base,
    ...poolFigures(sizes, isSwaScopedC128(generation) ? Math.floor(sizes.swaTokens / W) * stage.ringSizeC128 : 0),
  };
}

/**
 * The Ascend paged state pool's size (`npu_state_pool_size`): `max(2, ceil(1.8 · ratio / P) + 1)` pages per request,
 * `P` tokens a page, for `maxNumReqs` requests.
 */
export function npuStatePoolSize(ratio: 4 | 128, pageSize: number, maxNumReqs: number): number {
  requireInt("pageSize", pageSize, 2);
  requireInt("maxNumReqs", maxNumReqs, 0);
  if (ratio !== 4 && ratio !== 128) {
    throw new MemoryPoolError("INVALID_RATIO", "ratio", ratio, "the NPU state pool exists for ratios 4 and 128");
  }
  const pagesPerRequest = Math.max(2, Math.ceil((1.8 * ratio) / pageSize) + 1);
  return pagesPerRequest * maxNumReqs * pageSize;
}

/** The c128 state pool size a generation finalizes once the request count is known (Gen B and later). */
export function finalizedC128StatePoolSize(
  config: SizingConfig,
  numReqSlots: number,
  options: GenerationOptions = {},
): number {
  requireInt("numReqSlots", numReqSlots, 1);
  const stage = firstStage(config, options);
  return config.onlineC128 ? numReqSlots : numReqSlots * stage.ringSizeC128;
}
