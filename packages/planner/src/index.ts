export { PlannerError, type PlannerErrorCode } from "./errors.js";
export {
  type CompressRatio,
  SUPPORTED_RATIOS,
  SPECULATIVE_RING_SIZE,
  NON_SPECULATIVE_RING_SIZE,
  windowSize,
  writePad,
  maxServedDraftTokens,
  type PadFormula,
  padForFormula,
  earliestFutureRead,
  firstWritePos,
} from "./pad.js";
export {
  COMPRESS_PLAN_BYTES,
  WRITE_PLAN_BYTES,
  DECODE_PLAN_BYTES,
  INVALID_SEQ_LEN,
  INVALID_RAGGED_ID,
  INVALID_COMPRESS_PLAN,
  INVALID_WRITE_PLAN,
  type CompressPlanRecord,
  type WritePlanRecord,
  type DecodePlanRecord,
  packWriteRaggedId,
  unpackWriteRaggedId,
  CompressPlanTable,
  WritePlanTable,
  DecodePlanTable,
} from "./records.js";
export {
  type IntegerArray,
  type ReqToToken,
  type FullToState,
  type RingOptions,
  DEFAULT_IDENTITY_TOKENS_PER_REQ,
  MAX_NUM_Q_TOKENS,
  UPSTREAM_DEVICE_BATCH_LIMIT,
  validateRing,
} from "./inputs.js";
export { type SlotMaps, pagedRingSlot, requestRingSlot, legacySlot, legacyPage } from "./addressing.js";
export {
  type PlannerPath,
  type PrefillPlanOptions,
  type PrefillPlan,
  type LegacyPrefillPlanOptions,
  planPrefill,
  planPrefillLegacy,
} from "./prefill.js";
export { type DecodePlanOptions, type LegacyDecodePlanOptions, planDecode, planDecodeLegacy } from "./decode.js";
export {
  type ResidencyConfig,
  type ResidencyViolation,
  type ViolationKind,
  type ResidencyScenario,
  type ResidencyReport,
  type RingSlotContent,
  RingResidencySimulator,
  runResidencyScenario,
} from "./residency.js";
export {
  type ResidencyProof,
  type MaxDraftTokens,
  type ProofCounts,
  proveResidency,
  findMaxDraftTokens,
} from "./prove/prove.js";
export type {
  ResidencyProofOptions,
  SearchControl,
  ProofProgress,
} from "./prove/search.js";

export {
  type ResidencyBatch,
  type ReplayControl,
  type ReplayResult,
  replayResidency,
} from "./prove/replay.js";
export {
  type ShippedResidencyProof,
  SHIPPED_RESIDENCY_PROOFS,
} from "./prove/table.js";
export {
  type ResidencyProofStatus,
  residencyProofStatus,
} from "./prove/status.js";
export {
  type PlanCase,
  type PlanCaseKind,
  type PlanEngine,
  type PlanCaseTables,
  PLAN_CASE_KINDS,
  cpuPlanEngine,
  planCase,
} from "./cases.js";
export {
  type LowCompressRatio,
  type PairStateWriter,
  LOW_COMPRESS_RATIOS,
  PAIR_STATE_WRITERS,
  completesGroup,
  lowRatioOutLoc,
  lowRatioStoreSlot,
  lowRatioVisibleLength,
  lowRatioRowsPerPage,
  lowRatioPageRead,
  pairGroupPosition,
  pairPartnerPosition,
  pairStateSlot,
  pairStateWrittenRows,
  pairReadsRing,
  fusedVerifyAccepts,
} from "./ratio2/addressing.js";
export {
  type PairVerifyWriter,
  type PairRingConfig,
  type PairBatch,
  type PairRingRead,
  type PairRingWrite,
  type PairBatchAccess,
  PAIR_VERIFY_WRITERS,
  MAX_PAIR_RING_SIZE,
  pairBatchAccess,
} from "./ratio2/access.js";
export {
  type PairRingScenario,
  type PairRingReport,
  PairRingSimulator,
  runPairRingScenario,
  replayPairRing,
} from "./ratio2/simulator.js";
export {
  type PairRingProofOptions,
  type PairRingGuards,
  type PairRingProof,
  type PairRingMaxDraftTokens,
  pairRingServedDraftTokens,
  provePairRing,
  findPairRingMaxDraftTokens,
} from "./ratio2/prove.js";
