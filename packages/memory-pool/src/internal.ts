// What the other packages of this repository share with this one. Released in step with them (one changesets
// fixed group, docs/decisions.md#d36-internal-subpaths-are-released-in-step); no promise to anyone else.
export {
  type ConfiguratorGenerationId,
  type GenerationSizing,
  type GenerationOptions,
  sizeForGeneration,
  sizesFromMaxTokensForGeneration,
  capCoefficients,
  genABytesPerFullToken,
  genAStage,
  generationStage,
  isSwaScopedC128,
  npuStatePoolSize,
  finalizedC128StatePoolSize,
} from "./generations/configurator.js";
export { compressedPoolSizes } from "./sizing.js";
export { GIB } from "./bytes.js";
export { type StageFacts, stageFacts, numReqSlots, computeSizes } from "./sizing.js";
export { minimumViableMemFraction } from "./budget.js";
