// What other packages of this repository need from this one; not for users (no semver promise).
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
