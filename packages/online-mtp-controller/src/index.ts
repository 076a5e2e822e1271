export {
  HEAD_DIM,
  STATE_ROW_ELEMS,
  CHUNK_TOKENS,
  MAX_REQ_SLOTS,
  MAX_VERIFY_TOKENS,
  KV_SCORE_COLS,
  type StateDtype,
} from "./constants.js";
export { OnlineMtpError, type OnlineMtpErrorCode } from "./errors.js";
export {
  type Precision,
  type TokenInput,
  type ErrorStats,
  clearedRow,
  updateRow,
  foldRow,
  segmentStats,
  mergeRows,
  offlinePool,
  chunkPos,
  toBf16Bits,
  fromBf16Bits,
  roundBf16,
  compareRows,
  STATE_TOLERANCE,
} from "./math.js";
export { bankRow } from "./layout.js";
export {
  type IndexVector,
  type MatrixF32,
  type StateBuffer,
  type WritePrefixParams,
  type MarkPendingParams,
  type CommitPendingParams,
  type ResetSlotsParams,
  type OnlineDecodeParams,
  type OnlinePrefillParams,
  type OnlineMtpBackend,
  SEGMENT_FIELDS,
} from "./backend.js";
export {
  validateWritePrefix,
  validateMarkPending,
  validateCommitPending,
  validateResetSlots,
  validateOnlineDecode,
  validateOnlinePrefill,
} from "./validate.js";
export { CpuBackend } from "./cpu-backend.js";
export { type ForwardMode, FORWARD_MODES, logicalForwardMode, targetVerifyBatchSize } from "./forward-mode.js";
export {
  OnlineMtpController,
  UpstreamOnlineMtpController,
  type OnlineMtpControllerOptions,
  type OnlineMtpFlags,
  type VerifyContext,
  type ControllerCounters,
} from "./controller.js";
export {
  runSimulation,
  type SimulationOptions,
  type SimulationReport,
  type SimulationViolation,
} from "./simulate.js";
