// DeepSeek-V4.1's ratio-1 and ratio-2 compression on the CPU (docs/reference/deepseek-v4.1.md §10).
export {
  type V41EntryLayout,
  type EntryLayoutTraits,
  V41_ENTRY_LAYOUTS,
  V41_LATENT_DIM,
  V41_ROPE_DIM,
  ENTRY_LAYOUT_TRAITS,
  entryPageBytes,
  entryOffsets,
  encodeEntry,
  decodeEntry,
} from "./v41/layouts.js";
export { type LatentParams, type CompressedLatent, compressRatio1, compressRatio2 } from "./v41/latent.js";
export { type V41Oracle, oracleRatio1, oracleRatio2, v41EntryTolerance } from "./v41/oracle.js";
export { plainRopeTable } from "./v41/rope.js";
