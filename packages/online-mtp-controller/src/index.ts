export {
  HEAD_DIM,
  STATE_ROW_ELEMS,
  CHUNK_TOKENS,
  MAX_VERIFY_TOKENS,
  KV_SCORE_COLS,
  type StateDtype,
} from "./constants.js";
export { OnlineMtpError, type OnlineMtpErrorCode } from "./errors.js";
export * from "./math.js";
export { bankRow, onlineC128BankStrideRows, onlineC128StateRow, onlineC128TotalRows } from "./layout.js";
export * from "./backend.js";
export * from "./validate.js";
export { CpuBackend, type CpuFaults } from "./cpu-backend.js";
export * from "./forward-mode.js";
export {
  OnlineMtpController,
  UpstreamOnlineMtpController,
  type OnlineMtpControllerOptions,
  type OnlineMtpFlags,
  type VerifyContext,
  type ControllerCounters,
} from "./controller.js";
export { runSimulation, type SimulationOptions, type SimulationReport } from "./simulate.js";
export { GpuBackend, createGpuBackend, probeGpuBackend } from "./gpu-backend.js";
