/**
 * DeepSeek-V4.1 checkpoints (docs/reference/deepseek-v4.1.md §1). Kept apart from the V4 presets on purpose: a V4
 * name never resolves to a V4.1 model (the layouts differ), and the V4 registry, its messages and its reconciliation
 * alternatives stay exactly as they were.
 */
import type { V41ModelShape } from "@dsv4-kv/memory-pool";

export interface V41ModelPreset extends V41ModelShape {
  name: string;
  generation: "V4.1";
  /** The Hugging Face id of the released checkpoint. */
  hfId: string;
  /** head_dim (512); qk_nope = head_dim − qk_rope. */
  headDim: number;
  maxPositionEmbeddings: number;
  contextLen: number;
  /** `index_source_layer_ids`: layers that run an indexer (the ones that are not KV sources re-score a source's keys). */
  indexSourceLayerIds: readonly number[];
  /** `candidate_source_layer_id`: the layer that picks candidate blocks for the later index sources (-1: none). */
  candidateSourceLayerId: number;
  /** `dspark_target_layer_ids`: the target layers whose hidden states feed DSpark stage 0. */
  dsparkTargetLayerIds: readonly number[];
  /** DSpark γ (`dspark_block_size`, 5). */
  dsparkBlockSize: number;
  numAttentionHeads: number;
  oGroups: number;
  nRoutedExperts: number;
  moeIntermediateSize: number;
  /** Whole checkpoint in GiB (third-party: 510.313 GB from the Hugging Face API blob sum). */
  checkpointGiB: number;
}

/**
 * 40 target layers: 0-1 SWA only, 2-19 ratio 2, 20-39 ratio 1, then three DSpark stages (SWA only). Written out,
 * with no call at module level, so that bundles which never use V4.1 (the HTML report page) drop it.
 */
// biome-ignore format: one entry per layer, 10 a row
const FLASH_RATIOS: readonly number[] = [
  0, 0, 2, 2, 2, 2, 2, 2, 2, 2,
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  0, 0, 0,
];

export const V41_MODEL_PRESETS: Readonly<Record<string, V41ModelPreset>> = {
  "DeepSeek-V4.1-Flash": {
    name: "DeepSeek-V4.1-Flash",
    generation: "V4.1",
    hfId: "deepseek-ai/DeepSeek-V4.1-Flash",
    numHiddenLayers: 40,
    headDim: 512,
    qkRopeHeadDim: 64,
    qkNopeHeadDim: 448,
    indexHeadDim: 128,
    slidingWindow: 128,
    compressRatios: FLASH_RATIOS,
    kvSourceLayerIds: [2, 8, 14, 20],
    indexSourceLayerIds: [2, 8, 14, 20, 24, 28, 32, 36],
    candidateSourceLayerId: 20,
    dsparkTargetLayerIds: [37, 38, 39],
    draftLayers: 3,
    dsparkBlockSize: 5,
    maxPositionEmbeddings: 1_048_576,
    contextLen: 1_048_576,
    numAttentionHeads: 64,
    oGroups: 8,
    nRoutedExperts: 384,
    moeIntermediateSize: 2304,
    checkpointGiB: 475.2660170197487, // 510.313 GB / 2^30, written out (no expression at module level)
  },
};
