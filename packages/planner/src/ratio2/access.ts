/**
 * What one batch of one request does to its ratio-2 pair-state ring, position by position (docs/reference/
 * ratio2-pair-ring.md): the ring read of its first row and the ring writes of its rows, by SGLang's write rules. The
 * pair-ring simulator and the pair-ring proof both take their reads and writes from here, so they cannot disagree on
 * a rule.
 */
import { PlannerError } from "../errors.js";
import { INT32_MAX, requireInteger } from "../inputs.js";
import { type PairStateWriter, pairReadsRing, pairStateSlot, pairStateWrittenRows } from "./addressing.js";

/** The writers a verify batch can take: SGLang routes target-verify to `torch`; `verify-fused` is the c2 grid. */
export type PairVerifyWriter = Exclude<PairStateWriter, "decode">;

export const PAIR_VERIFY_WRITERS: readonly PairVerifyWriter[] = ["torch", "verify-fused"];

/** One request's ratio-2 pair-state ring (request slot 0). */
export interface PairRingConfig {
  compressRatio: 2;
  /** R₂, slots per request. */
  ringSize: number;
  /** Who writes a verify block's state; default `torch` (SGLang's routing). */
  verifyWriter?: PairVerifyWriter;
}

/** The most ring slots the pair-ring model takes (the ring is tracked slot by slot). */
export const MAX_PAIR_RING_SIZE = 65536;

/** The batches of a pair-ring run: an extend chunk, a verify block, a decode step. */
export type PairBatch =
  | { kind: "prefill"; tokens: number }
  | { kind: "verify"; draftTokens: number }
  | { kind: "decode" };

export interface PairRingRead {
  /** The odd position that pools (the batch's first row). */
  reader: number;
  /** Its partner, `reader - 1`, whose committed state the ring must hold. */
  position: number;
  slot: number;
}

export interface PairRingWrite {
  position: number;
  slot: number;
}

export interface PairBatchAccess {
  writer: PairStateWriter;
  /** The ring read whose value is pooled (an odd first row), or null (an even first row needs no partner). */
  read: PairRingRead | null;
  /**
   * Whether the read and the writes are unordered: the c2 verify grid runs a block's rows concurrently, so a write to
   * the slot being read races with it. The decode and torch writers read before they write.
   */
  concurrent: boolean;
  /** Ring writes in row order (torch: distinct slots; verify-fused: two even rows may share one when R₂ ≤ D). */
  writes: PairRingWrite[];
}

/** The checked ring config, with its default writer. */
export function pairRingConfig(config: PairRingConfig): Required<PairRingConfig> {
  if (typeof config !== "object" || config === null) {
    throw new PlannerError("INVALID_TYPE", "config", config, "must be a pair-ring config object");
  }
  if (config.compressRatio !== 2) {
    throw new PlannerError("INVALID_RATIO", "compressRatio", config.compressRatio, "must be 2 for the pair-state ring");
  }
  const ringSize = requireInteger("ringSize", config.ringSize, 1, MAX_PAIR_RING_SIZE);
  const verifyWriter = config.verifyWriter ?? "torch";
  if (!(PAIR_VERIFY_WRITERS as readonly string[]).includes(verifyWriter)) {
    const rule = `must be one of ${PAIR_VERIFY_WRITERS.join(", ")}`;
    throw new PlannerError("INVALID_ARGUMENT", "verifyWriter", verifyWriter, rule);
  }
  return { compressRatio: 2, ringSize, verifyWriter };
}

function rowsOf(batch: PairBatch): number {
  if (typeof batch !== "object" || batch === null) {
    throw new PlannerError("INVALID_TYPE", "batch", batch, "must be a prefill, verify or decode batch");
  }
  if (batch.kind === "decode") return 1;
  if (batch.kind === "prefill") return requireInteger("tokens", batch.tokens, 1, INT32_MAX);
  if (batch.kind === "verify") return requireInteger("draftTokens", batch.draftTokens, 1, INT32_MAX);
  const kind = (batch as { kind?: unknown }).kind;
  throw new PlannerError("INVALID_ARGUMENT", "batch.kind", kind, "must be prefill, verify or decode");
}

/** The reads and writes of `batch` at committed length `prefix` on the ring of `config`. */
export function pairBatchAccess(ring: PairRingConfig, batch: PairBatch, prefix: number): PairBatchAccess {
  const config = pairRingConfig(ring);
  requireInteger("prefix", prefix, 0, INT32_MAX);
  const rows = rowsOf(batch);
  const writer: PairStateWriter =
    batch.kind === "decode" ? "decode" : batch.kind === "prefill" ? "torch" : config.verifyWriter;
  const r = config.ringSize;
  const read =
    pairReadsRing(0, prefix) && prefix % 2 === 1
      ? { reader: prefix, position: prefix - 1, slot: pairStateSlot(0, prefix - 1, r) }
      : null;
  const writes = pairStateWrittenRows(writer, prefix, rows, r).map((k) => ({
    position: prefix + k,
    slot: pairStateSlot(0, prefix + k, r),
  }));
  return { writer, read, concurrent: writer === "verify-fused", writes };
}
