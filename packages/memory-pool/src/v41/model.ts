/**
 * DeepSeek-V4.1's layer roles (docs/reference/deepseek-v4.1.md §2): which layers own compressed storage and which
 * read another layer's. Ratios 1 and 2 are owned by `kv_source_layer_ids` only; every later layer of the same ratio
 * reads the nearest source before it. Ratios 4 and 128 would own their own storage, but no released V4.1 checkpoint
 * has them and their pools are not modelled here, so they are refused.
 */
import type { KvHeadDims } from "../bytes.js";
import { requireHeadDims } from "../bytes.js";
import { requireRatioPerLayer } from "../config.js";
import { MemoryPoolError, requireArray, requireInt, requireObject } from "../errors.js";

/** What V4.1 sizing needs of a model: head dims, target layers, their ratios, the KV sources and the draft stages. */
export interface V41ModelShape extends KvHeadDims {
  /** Target layers L (V4.1-Flash: 40). */
  numHiddenLayers: number;
  /** Sliding window W (128). */
  slidingWindow: number;
  /** One ratio per target layer (0, 1 or 2); entries beyond `numHiddenLayers` (the DSpark stages) are ignored. */
  compressRatios: readonly number[];
  /** config.json `kv_source_layer_ids`: the layers that store compressed latents and index keys. */
  kvSourceLayerIds: readonly number[];
  /** DSpark draft stages (`len(dspark_target_layer_ids)`, else `num_nextn_predict_layers`; V4.1-Flash: 3). */
  draftLayers: number;
}

/** Ratios a V4.1 target layer may have in the pools modelled here. */
export const V41_LOW_RATIOS = [1, 2] as const;
export type V41LowRatio = (typeof V41_LOW_RATIOS)[number];

/** The owners of each low ratio, in layer order (V4.1-Flash: ratio 2 → [2, 8, 14], ratio 1 → [20]). */
export interface V41Sources {
  1: number[];
  2: number[];
}

/** Validates the shape and returns the source layers per ratio; every refusal names the field and the layer. */
export function v41Sources(model: V41ModelShape): V41Sources {
  requireV41Model(model);
  const L = model.numHiddenLayers;
  const ratios = model.compressRatios.slice(0, L);
  const sources: V41Sources = { 1: [], 2: [] };
  const seen = new Set<number>();
  model.kvSourceLayerIds.forEach((layer, i) => {
    const field = `kvSourceLayerIds[${i}]`;
    requireInt(field, layer, 0, L - 1);
    if (seen.has(layer)) throw new MemoryPoolError("INVALID_ARGUMENT", field, layer, "is listed twice", { layer });
    seen.add(layer);
    const ratio = ratios[layer]!;
    if (ratio !== 1 && ratio !== 2)
      throw new MemoryPoolError(
        "INVALID_ARGUMENT",
        field,
        layer,
        `names layer ${layer}, whose ratio is ${ratio}: a KV source must be a ratio-1 or ratio-2 layer`,
        { layer, ratio },
      );
    sources[ratio].push(layer);
  });
  sources[1].sort((a, b) => a - b);
  sources[2].sort((a, b) => a - b);
  ratios.forEach((ratio, layer) => {
    if (ratio === 1 || ratio === 2) v41SourceLayerOf(sources, ratio, layer);
  });
  return sources;
}

/**
 * The layer whose compressed latents, index keys and pair state `layer` reads: the nearest source of the same ratio
 * at or before it. A reader before its source is refused naming `kvSourceLayerIds`.
 */
export function v41SourceLayerOf(sources: V41Sources, ratio: V41LowRatio, layer: number): number {
  const before = sources[ratio].filter((s) => s <= layer);
  if (before.length === 0)
    throw new MemoryPoolError(
      "INVALID_ARGUMENT",
      "kvSourceLayerIds",
      sources[ratio],
      `has no ratio-${ratio} source at or before layer ${layer}: a layer reads the compressed KV of an earlier ` +
        "source of its own ratio, so list one",
      { layer, ratio },
    );
  return before[before.length - 1]!;
}

function requireV41Model(model: V41ModelShape): void {
  requireObject("model", model);
  requireHeadDims(model);
  requireInt("numHiddenLayers", model.numHiddenLayers, 1);
  requireInt("slidingWindow", model.slidingWindow, 1);
  requireInt("draftLayers", model.draftLayers, 0);
  requireRatioPerLayer(model);
  requireArray("kvSourceLayerIds", model.kvSourceLayerIds);
  model.compressRatios.forEach((ratio, i) => {
    const field = `compressRatios[${i}]`;
    requireInt(field, ratio, 0);
    const draft = i >= model.numHiddenLayers;
    if (draft ? ratio !== 0 : ratio !== 0 && ratio !== 1 && ratio !== 2)
      throw new MemoryPoolError(
        "INVALID_RATIO",
        field,
        ratio,
        draft
          ? "a DSpark draft stage is SWA only (ratio 0)"
          : "DeepSeek-V4.1 target layers have ratio 0, 1 or 2 here (ratios 4 and 128 in a V4.1 model are not modelled)",
        { allowed: draft ? [0] : [0, 1, 2] },
      );
  });
}
