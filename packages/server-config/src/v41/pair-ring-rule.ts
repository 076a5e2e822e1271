/**
 * V41-R1: the ratio-2 pair-state ring a DeepSeek-V4.1 server allocates serves the verify width it runs
 * (docs/reference/ratio2-pair-ring.md). SGLang sizes the ring from the draft count (`get_compress_state_ring_size(2,
 * …)`: the smallest power of two ≥ 2 + D) and has no start-up guard for it (its guard loops ratios 4 and 128 only);
 * the planner's pair-ring proof says which widths a ring serves. A ring sized from a smaller count than the block
 * DSpark verifies loses a committed partner as soon as a block is accepted after its first row.
 */
import { v41PairRingSize } from "@dsv4-kv/memory-pool";
import { pairRingServedDraftTokens, provePairRing } from "@dsv4-kv/planner";
import { describeBatches } from "@dsv4-kv/planner/internal";
import { type ConfigIssue, issuesOf } from "../rules/issue.js";

/** What the rule reads: the ring's sizing count and the widest verify block, with where each came from. */
export interface V41PairRingFacts {
  isSpeculative: boolean;
  /** The draft count SGLang sizes the ring from (`speculative_num_draft_tokens`). */
  ringDraftTokens: number;
  /** The widest verify block the server runs (DSpark: block size + 1). */
  verifyWidth: number;
  /** The input the ring count came from, as the user wrote it (`--speculative-num-draft-tokens 2`). */
  ringSource: string;
  /** The input the width came from (`--speculative-dspark-block-size 5`). */
  widthSource: string;
  /** The field the refusal names. */
  field: string;
  /** What to change, in the flags' words (`drop --speculative-num-draft-tokens or set it to 6`). */
  fix: string;
}

export interface V41PairRingStatus {
  /** Without speculation the ring only serves decode steps and extend chunks (every ring serves them). */
  isSpeculative: boolean;
  /** R₂ as SGLang allocates it. */
  ringSize: number;
  verifyWidth: number;
  /** The widest verify block R₂ serves on SGLang's target-verify writer (torch: the last R₂ rows are kept). */
  servedDraftTokens: number;
  ok: boolean;
  /** A shortest batch sequence that loses a committed partner, in words, when not ok. */
  counterexample: string[] | null;
}

/** R₂ as SGLang allocates it for a verify width (null: no speculation), memory-pool's `v41PairRingSize`. */
export function sglangPairRingSize(draftTokens: number | null): number {
  return draftTokens === null ? v41PairRingSize(false, 0) : v41PairRingSize(true, draftTokens);
}

/** The ring R₂ SGLang allocates for these facts and whether it serves the verify width (proved by the planner). */
export function v41PairRingStatus(f: V41PairRingFacts): V41PairRingStatus {
  const ringSize = sglangPairRingSize(f.isSpeculative ? f.ringDraftTokens : null);
  const verifyWidth = f.isSpeculative ? f.verifyWidth : 1;
  const servedDraftTokens = pairRingServedDraftTokens(ringSize, "torch");
  if (!f.isSpeculative || verifyWidth <= servedDraftTokens) {
    return { isSpeculative: f.isSpeculative, ringSize, verifyWidth, servedDraftTokens, ok: true, counterexample: null };
  }
  const proof = provePairRing({ compressRatio: 2, ringSize, verifyWriter: "torch", draftTokens: verifyWidth });
  const cx = proof.counterexample;
  const counterexample = cx === null ? null : [...describeBatches(cx.batches), cx.violation.message];
  return { isSpeculative: true, ringSize, verifyWidth, servedDraftTokens, ok: proof.proved, counterexample };
}

/** V41-R1's issues for one deployment: an error naming the ring, the width, the limit and the fix. */
export function v41PairRingRule(f: V41PairRingFacts): ConfigIssue[] {
  const { out, add } = issuesOf("V41-R1");
  const s = v41PairRingStatus(f);
  if (s.ok) return out;
  const steps =
    s.counterexample === null ? "" : ` (a shortest failing run: ${s.counterexample.slice(0, -1).join("; ")})`;
  add(
    "error",
    "DRAFT_EXCEEDS_RING",
    f.field,
    f.ringDraftTokens,
    `the ratio-2 pair-state ring R₂ = ${s.ringSize}, which SGLang sizes from ${f.ringSource} (the smallest power of ` +
      `two ≥ 2 + ${f.ringDraftTokens}), serves verify blocks of at most ${s.servedDraftTokens} tokens (its ` +
      `target-verify writer keeps a block's last R₂ rows), but ${f.widthSource} verifies ${s.verifyWidth}: a block ` +
      `accepted after its first row loses the committed partner the next odd position pools with${steps}; ` +
      `size the ring from the verify width: ${f.fix}`,
    {
      ringSize: s.ringSize,
      ringDraftTokens: f.ringDraftTokens,
      verifyWidth: s.verifyWidth,
      servedDraftTokens: s.servedDraftTokens,
      verifyWriter: "torch",
    },
  );
  return out;
}
