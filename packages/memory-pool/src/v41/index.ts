// DeepSeek-V4.1 (docs/reference/deepseek-v4.1.md): layer roles, pools, the configurator and the sizing report.
export {
  type V41ModelShape,
  type V41Sources,
  type V41LowRatio,
  V41_LOW_RATIOS,
  v41Sources,
  v41SourceLayerOf,
} from "./model.js";
export {
  type V41PoolId,
  type V41PoolShape,
  type V41PoolOptions,
  type V41Pools,
  type PairStatePoolOptions,
  V41_POOL_NAMES,
  V41_INDEX_PAGE_SIZES,
  v41PairRingSize,
  pairStatePool,
  v41Pools,
} from "./pools.js";
export {
  type V41SizingConfig,
  type V41Coefficients,
  type V41ConfiguratorSizing,
  type V41LoggedPoolSizes,
  v41Coefficients,
  v41PairStateFixedBytes,
  v41LoggedPoolSizes,
  sizeV41Configurator,
} from "./configurator.js";
export {
  type V41PoolReport,
  type V41PoolInitLine,
  type V41GapWarning,
  type V41SizingResult,
  type V41SizingOptions,
  sizeV41,
  v41PoolInitLines,
} from "./sizing.js";
