/** Forward modes the controller distinguishes, and the helpers of §8.1. */
export type ForwardMode = "idle" | "decode" | "extend" | "mixed" | "target_verify" | "draft_extend";

export const FORWARD_MODES: readonly ForwardMode[] = [
  "idle",
  "decode",
  "extend",
  "mixed",
  "target_verify",
  "draft_extend",
];

/**
 * `_get_logical_forward_mode` (§8.1): IDLE stays IDLE, EXTEND stays EXTEND; otherwise the original mode wins (DP
 * attention may rewrite a verify batch's mode to pad it, but a real idle rank stays idle).
 */
export function logicalForwardMode(batch: {
  forwardMode: ForwardMode;
  originalForwardMode?: ForwardMode | null;
}): ForwardMode {
  if (batch.forwardMode === "idle") return "idle";
  if (batch.forwardMode === "extend") return "extend";
  return batch.originalForwardMode ?? batch.forwardMode;
}

/**
 * `_get_target_verify_bs` (§8.1): the number of REAL verify rows, excluding CUDA-graph padding. 0 on an idle rank
 * or an inconsistent draft-token count.
 */
export function targetVerifyBatchSize(batch: {
  actualForwardMode?: ForwardMode | null;
  /** len(spec_info.draft_token), or null when there is no draft token tensor. */
  draftTokenCount: number | null;
  /** draft_token_num = D. */
  draftTokenNum: number;
  batchSize: number;
}): number {
  if (batch.actualForwardMode === "idle") return 0;
  if (batch.draftTokenCount === null) return batch.batchSize;
  if (batch.draftTokenNum <= 0) return 0;
  if (batch.draftTokenCount % batch.draftTokenNum !== 0) return 0;
  return batch.draftTokenCount / batch.draftTokenNum;
}
