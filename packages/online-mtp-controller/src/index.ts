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

export type {
  IndexVector,
  MatrixF32,
  StateBuffer,
  WritePrefixParams,
  MarkPendingParams,
  CommitPendingParams,
  ResetSlotsParams,
  OnlineDecodeParams,
  OnlinePrefillParams,
  OnlineMtpBackend,
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
