/** Validation of a `SizingConfig`: every sizing entry point refuses garbage before any arithmetic. */
import { requireHeadDims } from "./bytes.js";
import {
  MemoryPoolError,
  optional,
  requireArray,
  requireBoolean,
  requireInt,
  requireKnownKeys,
  requireNumber,
  requireObject,
  requireOneOf,
} from "./errors.js";
import { PLATFORMS } from "./pools.js";
import type { SizingConfig } from "./sizing.js";

const SIZING_KEYS = [
  "model",
  "pageSize",
  "swaFullTokensRatio",
  "isSpeculative",
  "maxDraftTokens",
  "maxRunningRequests",
  "attnDpSize",
  "ppSize",
  "disaggregationMode",
  "disaggregationDecodeExtraSlots",
  "hisparseRatio",
  "onlineC128",
  "onlineC128Mtp",
  "stateDtypeBytes",
  "indexerFp4",
  "maxTotalTokens",
  "mode",
  "ringSizeOverrides",
  "platform",
];

const positive = (field: string, value: number) => requireInt(field, value, 1);
const nonNegative = (field: string, value: number) => requireInt(field, value, 0);

/** Throws a MemoryPoolError naming the first field of `config` that is missing, mistyped or out of range. */
export function requireSizingConfig(config: SizingConfig): void {
  requireKnownKeys("config", config, SIZING_KEYS);
  requireModel(config.model);
  requirePageSize(config.pageSize);
  requireSwaRatio(config.swaFullTokensRatio);
  requireBoolean("isSpeculative", config.isSpeculative);
  nonNegative("maxDraftTokens", config.maxDraftTokens);
  if (config.maxRunningRequests !== null) positive("maxRunningRequests", config.maxRunningRequests);
  optional("attnDpSize", config.attnDpSize, positive);
  optional("ppSize", config.ppSize, positive);
  optional("disaggregationMode", config.disaggregationMode, (f, v) =>
    requireOneOf(f, v, ["null", "prefill", "decode"]),
  );
  optional("disaggregationDecodeExtraSlots", config.disaggregationDecodeExtraSlots, nonNegative);
  optional("hisparseRatio", config.hisparseRatio, requireHisparseRatio);
  optional("onlineC128", config.onlineC128, requireBoolean);
  optional("onlineC128Mtp", config.onlineC128Mtp, requireBoolean);
  optional("stateDtypeBytes", config.stateDtypeBytes, (f, v) => requireOneOf(f, v, [4, 2]));
  optional("indexerFp4", config.indexerFp4, requireBoolean);
  optional("maxTotalTokens", config.maxTotalTokens, nonNegative);
  optional("mode", config.mode, (f, v) => requireOneOf(f, v, ["sglang-gen-b", "exact"]));
  optional("ringSizeOverrides", config.ringSizeOverrides, requireRingOverrides);
  optional("platform", config.platform, (f, v) => requireOneOf(f, v, PLATFORMS));
}

/** Compressed attention pages whole c128 entries: P must be a multiple of 128 (V-P2). */
export function requirePageSize(pageSize: number): void {
  requireInt("pageSize", pageSize, 1);
  if (pageSize % 128 !== 0) {
    throw new MemoryPoolError(
      "PAGE_SIZE",
      "pageSize",
      pageSize,
      "page_size must be multiple of 128 for compressed attention (use --page-size 256)",
      { multipleOf: 128 },
      "V-P2",
    );
  }
}

function requireModel(model: SizingConfig["model"]): void {
  // A model preset carries more facts (name, checkpoint size), so extra keys are allowed here.
  requireObject("model", model);
  requireHeadDims(model);
  positive("slidingWindow", model.slidingWindow);
  positive("numHiddenLayers", model.numHiddenLayers);
  positive("contextLen", model.contextLen);
  requireRatioPerLayer(model);
}

/** `compressRatios` is an array with one ratio per hidden layer (V4 and V4.1 models alike). */
export function requireRatioPerLayer(model: { compressRatios: unknown; numHiddenLayers: number }): void {
  requireArray("compressRatios", model.compressRatios);
  const ratios = model.compressRatios as unknown[];
  if (ratios.length < model.numHiddenLayers) {
    throw new MemoryPoolError(
      "KV_LAYOUT",
      "compressRatios",
      ratios,
      `must give one ratio per layer: ${ratios.length} entries for ${model.numHiddenLayers} layers`,
      { numHiddenLayers: model.numHiddenLayers, entries: ratios.length },
    );
  }
}

function requireSwaRatio(ratio: number): void {
  requireNumber("swaFullTokensRatio", ratio, 0, true);
  if (ratio > 1) {
    throw new MemoryPoolError(
      "INVALID_ARGUMENT",
      "swaFullTokensRatio",
      ratio,
      "must be in (0, 1]: the SWA pool cannot hold more tokens than the full pool",
      { min: 0, max: 1 },
    );
  }
}

function requireHisparseRatio(field: string, ratio: number): void {
  requireNumber(field, ratio, Number.NEGATIVE_INFINITY);
  if (ratio < 1) {
    const rule = "HiSparse host_to_device_ratio must be >= 1";
    throw new MemoryPoolError("HISPARSE_RATIO", field, ratio, rule, { min: 1 }, "V-H1");
  }
}

function requireRingOverrides(field: string, overrides: NonNullable<SizingConfig["ringSizeOverrides"]>): void {
  requireKnownKeys(field, overrides, ["4", "128"]);
  optional(`${field}.4`, overrides[4], positive);
  optional(`${field}.128`, overrides[128], positive);
}
