/**
 * The ratio-1/2 layer groups of a DeepSeek-V4.1 model and the pair-state ring each ratio-2 group's source keeps
 * (docs/reference/deepseek-v4.1.md §2, §4): what `check --html` draws as the ring geometry. The sources are
 * memory-pool's (`v41Sources`, `v41SourceLayerOf`); the ring and its rows are the report's own sizing.
 */
import { v41PairRingSize, v41SourceLayerOf, v41Sources } from "@dsv4-kv/memory-pool";
import type { V41CheckReport } from "./check.js";
import type { V41ModelPreset } from "./presets.js";

/** One run of layers reading the compressed KV (and pair state) of one KV source. */
export interface V41RingGroup {
  ratio: 1 | 2;
  source: number;
  firstLayer: number;
  lastLayer: number;
  /** R₂ for ratio 2 (2 without speculation, the power of two ≥ 2 + D with it); 0 for ratio 1 (no state). */
  ringSize: number;
  /** Rows of the source's pair-state pool (`ceil2(slots · R₂ + R₂ + 1)`); 0 for ratio 1 or when not sized. */
  stateRows: number;
}

/** The layer groups of `model` by source, with the ring the report sized (DSpark's, or none without speculation). */
export function v41RingGroups(
  model: V41ModelPreset,
  report: Pick<V41CheckReport, "config" | "sizing">,
): V41RingGroup[] {
  const sources = v41Sources(model);
  const config = report.config;
  const ringSize = config ? v41PairRingSize(config.isSpeculative, config.draftTokens) : 0;
  const rows = report.sizing?.pools.find((p) => p.id === "c2-pair-state")?.shapePerLayer[0] ?? 0;
  const groups: V41RingGroup[] = [];
  for (let layer = 0; layer < model.numHiddenLayers; layer++) {
    const ratio = model.compressRatios[layer];
    if (ratio !== 1 && ratio !== 2) continue;
    const source = v41SourceLayerOf(sources, ratio, layer);
    const last = groups.at(-1);
    if (last && last.ratio === ratio && last.source === source) last.lastLayer = layer;
    else
      groups.push({
        ratio,
        source,
        firstLayer: layer,
        lastLayer: layer,
        ringSize: ratio === 2 ? ringSize : 0,
        stateRows: ratio === 2 ? rows : 0,
      });
  }
  return groups;
}
