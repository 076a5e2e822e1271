/**
 * Address arithmetic of DeepSeek-V4.1's low compression ratios 1 and 2 (docs/reference/ratio2-pair-ring.md). These
 * ratios have no plan records: SGLang derives every address from the token's position, its sequence length and its
 * raw (FULL pool) slot, and the ratio-2 pending-pair state lives in a per-request ring `req·R₂ + pos mod R₂`.
 * Pure functions; every argument is checked (they are cheap and called per batch, never per element in a hot loop).
 */
import { PlannerError } from "../errors.js";
import { INT32_MAX, requireInteger } from "../inputs.js";

/** The low compression ratios of DeepSeek-V4.1. */
export type LowCompressRatio = 1 | 2;

export const LOW_COMPRESS_RATIOS: readonly LowCompressRatio[] = [1, 2];

/** Which code path writes a batch's pair state (what a write rule depends on). */
export type PairStateWriter = "decode" | "verify-fused" | "torch";

export const PAIR_STATE_WRITERS: readonly PairStateWriter[] = ["decode", "verify-fused", "torch"];

function requireLowRatio(ratio: unknown): LowCompressRatio {
  if (ratio !== 1 && ratio !== 2) {
    throw new PlannerError("INVALID_RATIO", "compressRatio", ratio, "must be 1 or 2 (the V4.1 low ratios)");
  }
  return ratio;
}

function requireWriter(writer: unknown): PairStateWriter {
  if (typeof writer !== "string" || !(PAIR_STATE_WRITERS as readonly string[]).includes(writer)) {
    throw new PlannerError("INVALID_ARGUMENT", "writer", writer, `must be one of ${PAIR_STATE_WRITERS.join(", ")}`);
  }
  return writer as PairStateWriter;
}

/** Whether the token that makes the sequence `seqLen` long completes a compressed group (ratio 1: every token). */
export function completesGroup(compressRatio: LowCompressRatio, seqLen: number): boolean {
  const r = requireLowRatio(compressRatio);
  requireInteger("seqLen", seqLen, 1, INT32_MAX);
  return seqLen % r === 0;
}

/**
 * Compressed-pool slot a token writes (`c1_out_loc` / `c2_out_loc`): its raw slot divided by the ratio when it
 * completes a group, else -1 (ratio 2: a token at an even position, which only parks its state).
 */
export function lowRatioOutLoc(compressRatio: LowCompressRatio, seqLen: number, rawOutLoc: number): number {
  requireInteger("rawOutLoc", rawOutLoc, 0, INT32_MAX);
  return completesGroup(compressRatio, seqLen) ? Math.floor(rawOutLoc / compressRatio) : -1;
}

/** Slot a store actually targets: a -1 out location folds onto the pool's dummy slot 0. */
export function lowRatioStoreSlot(outLoc: number): number {
  requireInteger("outLoc", outLoc, -1, INT32_MAX);
  return Math.max(outLoc, 0);
}

/** Compressed positions a token at length `seqLen` sees (`clamp1`): at least 1 so a kernel never reads 0 rows. */
export function lowRatioVisibleLength(compressRatio: LowCompressRatio, seqLen: number): number {
  const r = requireLowRatio(compressRatio);
  requireInteger("seqLen", seqLen, 0, INT32_MAX);
  return Math.max(Math.floor(seqLen / r), 1);
}

/** Compressed rows per FULL page: `pageSize / ratio` (the page must hold whole groups). */
export function lowRatioRowsPerPage(compressRatio: LowCompressRatio, pageSize: number): number {
  const r = requireLowRatio(compressRatio);
  requireInteger("pageSize", pageSize, 1, INT32_MAX);
  if (pageSize % r !== 0) {
    throw new PlannerError("INVALID_ARGUMENT", "pageSize", pageSize, `must be a multiple of the ratio ${r}`);
  }
  return pageSize / r;
}

/**
 * Compressed-pool slot of compressed position `j` of a request, through its FULL page-table row:
 * `pageTable[j // rows]·rows + j % rows`, rows = pageSize / ratio (chunked and sparse prefill reads).
 */
export function lowRatioPageRead(
  compressRatio: LowCompressRatio,
  pageSize: number,
  pageTableRow: ArrayLike<number>,
  j: number,
): number {
  const rows = lowRatioRowsPerPage(compressRatio, pageSize);
  requireInteger("j", j, 0, INT32_MAX);
  const k = Math.floor(j / rows);
  if (k >= pageTableRow.length) {
    throw new PlannerError(
      "INDEX_OUT_OF_RANGE",
      "j",
      j,
      `its page ${k} is past the page-table row (${pageTableRow.length} pages)`,
    );
  }
  const page = requireInteger(`pageTableRow[${k}]`, pageTableRow[k], 0, INT32_MAX);
  const slot = page * rows + (j % rows);
  if (slot > INT32_MAX) throw new PlannerError("INT32_OVERFLOW", "j", j, "page·rows + j % rows does not fit int32");
  return slot;
}

/** RoPE position of a pooled ratio-2 latent: the group's start, `pos - 1` at the odd position that completes it. */
export function pairGroupPosition(pos: number): number {
  requireInteger("pos", pos, 0, INT32_MAX);
  return pos % 2 === 1 ? pos - 1 : pos;
}

/** The position a ratio-2 row pools with: the previous one (its partner; only an odd position uses it). */
export function pairPartnerPosition(pos: number): number {
  requireInteger("pos", pos, 0, INT32_MAX);
  return pos - 1;
}

/** Pair-state ring slot of (request slot, position): `req·R₂ + pos mod R₂`, -1 for a negative position. */
export function pairStateSlot(reqIndex: number, pos: number, ringSize: number): number {
  requireInteger("reqIndex", reqIndex, 0, INT32_MAX);
  requireInteger("pos", pos, -INT32_MAX, INT32_MAX);
  requireInteger("ringSize", ringSize, 1, INT32_MAX);
  if (pos < 0) return -1;
  const slot = reqIndex * ringSize + (pos % ringSize);
  if (slot > INT32_MAX) {
    throw new PlannerError(
      "INT32_OVERFLOW",
      "reqIndex",
      reqIndex,
      "req·ringSize + pos mod ringSize does not fit int32",
    );
  }
  return slot;
}

/**
 * Rows of one request's run of `rows` consecutive positions from `firstPos` whose own `|kv|score|` the writer stores
 * in the ring, as offsets into the run, ascending:
 * - `decode` (one row): an even position stores its state, an odd one pools and stores nothing;
 * - `verify-fused` (the c2 verify grid): every even position of the block;
 * - `torch` (extend, and target-verify on SGLang's routing): the last `min(rows, R₂)` rows, both parities, so that
 *   every write of the batch lands in a distinct slot.
 */
export function pairStateWrittenRows(
  writer: PairStateWriter,
  firstPos: number,
  rows: number,
  ringSize: number,
): number[] {
  const w = requireWriter(writer);
  requireInteger("firstPos", firstPos, 0, INT32_MAX);
  requireInteger("rows", rows, 1, w === "decode" ? 1 : INT32_MAX);
  requireInteger("ringSize", ringSize, 1, INT32_MAX);
  const out: number[] = [];
  if (w === "torch") {
    for (let k = Math.max(0, rows - ringSize); k < rows; k++) out.push(k);
    return out;
  }
  for (let k = 0; k < rows; k++) if ((firstPos + k) % 2 === 0) out.push(k);
  return out;
}

/**
 * Whether row `k` of a run takes its partner from the ring (true) or from the batch's previous row: only the first
 * row of a request's run reads the ring, at the slot of `pos - 1` (position 0 has no partner and reads nothing).
 */
export function pairReadsRing(k: number, pos: number): boolean {
  requireInteger("k", k, 0, INT32_MAX);
  requireInteger("pos", pos, 0, INT32_MAX);
  return k === 0 && pos > 0;
}

/** The c2 verify kernel's host check: the ring must be wider than the block (`ring_size > draft_len`). */
export function fusedVerifyAccepts(ringSize: number, draftTokens: number): boolean {
  requireInteger("ringSize", ringSize, 1, INT32_MAX);
  requireInteger("draftTokens", draftTokens, 1, INT32_MAX);
  return ringSize > draftTokens;
}
