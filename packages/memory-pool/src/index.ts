export { MemoryPoolError, MemoryPoolCapacityErrors, type MemoryPoolErrorCode } from "./errors.js";
export {
  onlineC128RowBytes,
  onlineC128DraftBankCount,
  onlineC128BankStrideRows,
  onlineC128TotalRows,
  onlineC128BankOffsetRows,
  onlineC128StateRow,
  onlineC128BankLayout,
  type OnlineC128BankLayout,
  type OnlineC128BankLayoutOptions,
} from "./banks.js";
export {
  swaLocToC4StateRow,
  c128OfflineStateRow,
  c128OfflineRequestRows,
  c128OnlineStateRow,
  fullLocToC4CompressedIndex,
} from "./slots.js";
export {
  type StateRatio,
  type RingSizeOptions,
  compressStateRingSize,
  compressStateWritePad,
  swaRingSize,
} from "./rings.js";
export {
  type KvHeadDims,
  kvBytesPerToken,
  kvPageAlignBytes,
  indexerBytesPerToken,
  attentionHeadDim,
  offlineStateRowBytes,
} from "./bytes.js";
export {
  type PoolDtype,
  type PoolId,
  type PoolShape,
  type PagedPoolOptions,
  POOL_NAMES,
  type SingleKvPoolOptions,
  type IndexerPoolOptions,
  type CompressStatePoolOptions,
  type CompositePoolOptions,
  type CompositePool,
  singleKvPool,
  indexerPool,
  compressStatePool,
  compositePool,
  draftWorkerPool,
} from "./pools.js";
export {
  type SizingMode,
  type KvModelShape,
  type SizingConfig,
  type BytesPerFullToken,
  type PoolSizes,
  type PoolReport,
  type StageSizing,
  type SizingResult,
  ppStageLayerRanges,
  ringDraftViolations,
  draftExceedsRingText,
  type DraftExceedsRingParams,
  bytesPerFullToken,
  c128FixedBytes,
  resolveMaxRunningRequests,
  sizeKvCache,
  poolSizesFromMaxTokens,
} from "./sizing.js";
export {
  type GpuBudgetInput,
  type GpuBudget,
  kvBudgetFromGpu,
} from "./budget.js";
export {
  type RingChoice,
  type RingAdvice,
  type AdviseRingSizesOptions,
  validRingSizes,
  smallestRingForDraftTokens,
  adviseRingSizes,
} from "./advisor.js";
export * from "./v41/index.js";
