/**
 * Segment records of the online prefill kernel (docs/reference/online-mtp.md §6.2): a request's run of tokens is cut
 * at 128-aligned boundaries, one record `[seqLen, lastRow, len, loadRow, storeRow]` per piece. A piece ending at a
 * chunk boundary closes its chunk (the kernel emits the entry into output row = record index); the trailing piece
 * stores its partial state.
 */
import { CHUNK_TOKENS } from "@dsv4-kv/online-mtp-controller";
import { SEGMENT_FIELDS } from "@dsv4-kv/online-mtp-controller/internal";

/** A record that closes a chunk: its output row and the position of the chunk's last token. */
export interface SegmentClose {
  outRow: number;
  slot: number;
  position: number;
}

export interface SegmentPlan {
  records: number[];
  closes: SegmentClose[];
}

/** One request's tokens in the batch input. */
export interface SegmentRun {
  slot: number;
  /** Position of the first token (the committed length before the forward). */
  prefix: number;
  count: number;
  /** Input row of the first token. */
  firstRow: number;
  /** State row merged into a piece that starts inside a chunk (bank 0 of the slot). */
  loadRow: number;
  /** State row that receives the trailing partial (bank 0 for an extend, bank 1 scratch for a verify). */
  storeRow: number;
}

/** Appends the records of `run` to `plan`. */
export function appendSegments(plan: SegmentPlan, run: SegmentRun): void {
  const end = run.prefix + run.count;
  let p = run.prefix;
  while (p < end) {
    const chunkEnd = (Math.floor(p / CHUNK_TOKENS) + 1) * CHUNK_TOKENS;
    const last = Math.min(end, chunkEnd);
    const outRow = plan.records.length / SEGMENT_FIELDS;
    if (last === chunkEnd) plan.closes.push({ outRow, slot: run.slot, position: last - 1 });
    // only a piece that starts inside a chunk merges a stored partial (−1: none)
    const load = p % CHUNK_TOKENS === 0 ? -1 : run.loadRow;
    plan.records.push(last, run.firstRow + (last - 1 - run.prefix), last - p, load, run.storeRow);
    p = last;
  }
}
