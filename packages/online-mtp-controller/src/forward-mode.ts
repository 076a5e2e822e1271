/** Forward modes the controller distinguishes, and the helpers of docs/reference/online-mtp.md §11. */
import { I32_MAX, checkInt, checkKeys, checkObject, checkOneOf } from "./check.js";

export type ForwardMode = "idle" | "decode" | "extend" | "mixed" | "target_verify" | "draft_extend";

export const FORWARD_MODES: readonly ForwardMode[] = [
  "idle",
  "decode",
  "extend",
  "mixed",
  "target_verify",
  "draft_extend",
];

/** Refuses anything but a known mode (a misspelt one gets a suggestion); `nullable` also accepts null / absent. */
export function checkForwardMode(mode: unknown, field: string, nullable = false): asserts mode is ForwardMode {
  if (nullable && (mode === null || mode === undefined)) return;
  checkOneOf(mode, FORWARD_MODES, "INVALID_ARGUMENT", field);
}

/**
 * `_get_logical_forward_mode` (docs/reference/online-mtp.md §11): IDLE stays IDLE, EXTEND stays EXTEND; otherwise the
 * original mode wins (DP attention may rewrite a verify batch's mode to pad it, but a real idle rank stays idle).
 */
export function logicalForwardMode(batch: {
  forwardMode: ForwardMode;
  originalForwardMode?: ForwardMode | null;
}): ForwardMode {
  checkObject(batch, "batch");
  checkKeys(batch, ["forwardMode", "originalForwardMode"], "batch");
  checkForwardMode(batch.forwardMode, "batch.forwardMode");
  checkForwardMode(batch.originalForwardMode, "batch.originalForwardMode", true);
  if (batch.forwardMode === "idle") return "idle";
  if (batch.forwardMode === "extend") return "extend";
  return batch.originalForwardMode ?? batch.forwardMode;
}

const VERIFY_BS_KEYS = ["actualForwardMode", "draftTokenCount", "draftTokenNum", "batchSize"];

/**
 * `_get_target_verify_bs` (docs/reference/online-mtp.md §11): the number of REAL verify rows, excluding CUDA-graph
 * padding. 0 on an idle rank, with no draft tokens per request, or with a draft-token count that is not a whole number
 * of requests (upstream's answers to those cases).
 */
export function targetVerifyBatchSize(batch: {
  actualForwardMode?: ForwardMode | null;
  /** len(spec_info.draft_token), or null when there is no draft token tensor. */
  draftTokenCount: number | null;
  /** draft_token_num = D. */
  draftTokenNum: number;
  batchSize: number;
}): number {
  checkObject(batch, "batch");
  checkKeys(batch, VERIFY_BS_KEYS, "batch");
  checkForwardMode(batch.actualForwardMode, "batch.actualForwardMode", true);
  if (batch.draftTokenCount !== null) {
    checkInt(batch.draftTokenCount, 0, I32_MAX, "INVALID_ARGUMENT", "batch.draftTokenCount");
  }
  checkInt(batch.draftTokenNum, 0, I32_MAX, "DRAFT_TOKENS", "batch.draftTokenNum");
  checkInt(batch.batchSize, 0, I32_MAX, "BATCH_SIZE", "batch.batchSize");
  if (batch.actualForwardMode === "idle") return 0;
  if (batch.draftTokenCount === null) return batch.batchSize;
  if (batch.draftTokenNum === 0) return 0;
  if (batch.draftTokenCount % batch.draftTokenNum !== 0) return 0;
  return batch.draftTokenCount / batch.draftTokenNum;
}
