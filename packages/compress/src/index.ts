export type {
  RingRatio,
  StateDtype,
  CompressGeometry,
  PrefillBatch,
  DecodeBatch,
  RingCompressBackend,
} from "./backend.js";
export { CompressError, type CompressErrorCode } from "./errors.js";
export { rowBlocks } from "./geometry.js";
export { validatePrefillBatch, validateDecodeBatch } from "./validate.js";
export { CpuCompressBackend } from "./cpu-backend.js";
export { type WindowElement, type OfflineCompressInput, offlineCompress, windowOf } from "./oracle.js";
export {
  type EntryToleranceInput,
  type EntryTolerance,
  type ArithmeticModel,
  ARITHMETIC_MODELS,
  entryTolerance,
} from "./tolerance.js";
export { OnlineC128Driver } from "./online/driver.js";
export type { OnlineC128DriverOptions, OnlineEntry, OnlineRequestStep, OnlineStepKind } from "./online/types.js";
export {
  type CompressScenarioOptions,
  MAX_SCENARIO_DRAFT_TOKENS,
  MAX_ONLINE_DRAFT_TOKENS,
} from "./scenario/options.js";
export {
  type ScenarioBackends,
  runCompressScenario,
  scenarioStateRows,
} from "./scenario/run.js";
export {
  type ScenarioBatchKind,
  type WrongEntry,
  type WrongRingRow,
  type OnlineMismatch,
  type MirrorReport,
  type CompressScenarioReport,
  describeWrongEntry,
  describeWrongRingRow,
} from "./scenario/report.js";
export * from "./v41.js";
export {
  type Ratio2ScenarioOptions,
  type Ratio2VerifyWriter,
  MAX_RATIO2_DRAFT_TOKENS,
  MAX_RATIO2_RING_SIZE,
} from "./scenario/ratio2-options.js";
export { ratio2StateRows, runRatio2Scenario } from "./scenario/ratio2-run.js";
export {
  type Ratio2BatchKind,
  type Ratio2WrongEntry,
  type Ratio2WrongRingRow,
  type Ratio2ScenarioReport,
  describeRatio2WrongEntry,
  describeRatio2WrongRingRow,
} from "./scenario/ratio2-report.js";
