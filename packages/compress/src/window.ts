/**
 * Where each of a compression's W window elements comes from (docs/reference/planner.md §8.1, §8.2, §8.4): masked,
 * a ring (state) row, or a ragged input row, as spans of consecutive elements. The validator range-checks the spans
 * and the CPU backend gathers through them, so both read the addressing from this one place.
 *
 * Element `e` stands for position `q − W + 1 + e`. c4: elements e < 4 use the overlap half of their row, e >= 4 the
 * main half; with q = 3 (seqLen 4) the overlap elements lie before position 0 and are masked.
 */
import type { Layout } from "./geometry.js";

/** A record field a span's rows derive from. */
export type SpanSource = "readPage0" | "readPage1" | "raggedId";

/** Elements [e0, e1) read rows firstRow, firstRow + 1, … of the state (ring) or the ragged input. */
export interface ElementSpan {
  readonly e0: number;
  readonly e1: number;
  readonly firstRow: number;
  readonly source: SpanSource;
}

export interface WindowSpans {
  /** Elements [0, maskedEnd) are masked (excluded from the softmax): c4 with q = 3 only. */
  readonly maskedEnd: number;
  /** Ring spans, readPage0's first (only non-empty ones). */
  readonly ring: readonly ElementSpan[];
  /** The ragged input span, or null when the whole window comes from the ring. */
  readonly input: ElementSpan | null;
}

/** c4: the q = 3 mask of the overlap half (seqLen <= 4; the callers pass a valid seqLen, a multiple of 4). */
function maskedEndOf(layout: Layout, seqLen: number): number {
  return layout.compressRatio === 4 && seqLen <= 4 ? 4 : 0;
}

/** Pages → ring spans over elements [lo, hi): c4 readPage0 for e < 4 and readPage1 for e >= 4; c128 readPage1. */
function ringSpans(layout: Layout, lo: number, hi: number, readPage0: number, readPage1: number): ElementSpan[] {
  const cr = layout.compressRatio;
  const spans: ElementSpan[] = [];
  if (cr === 4) {
    const ov1 = Math.min(hi, 4);
    if (lo < ov1) spans.push({ e0: lo, e1: ov1, firstRow: readPage0 * 4 + lo, source: "readPage0" });
    const m0 = Math.max(lo, 4);
    if (m0 < hi) spans.push({ e0: m0, e1: hi, firstRow: readPage1 * 4 + (m0 - 4), source: "readPage1" });
  } else if (lo < hi) {
    spans.push({ e0: lo, e1: hi, firstRow: readPage1 * cr + lo, source: "readPage1" });
  }
  return spans;
}

/**
 * A prefill compression `{seqLen = q + 1, raggedId r, bufferLen L, readPage0, readPage1}`: elements e < L from the
 * ring (c4: state row readPage0·4 + e for e < 4, readPage1·4 + e − 4 otherwise; c128: readPage1·128 + e), the rest
 * from ragged input row r − W + 1 + e. `bufferLen` must already be at most W.
 */
export function prefillSpans(
  layout: Layout,
  seqLen: number,
  raggedId: number,
  bufferLen: number,
  readPage0: number,
  readPage1: number,
): WindowSpans {
  const w = layout.window;
  const maskedEnd = maskedEndOf(layout, seqLen);
  const ring = ringSpans(layout, maskedEnd, bufferLen, readPage0, readPage1);
  const i0 = Math.max(bufferLen, maskedEnd);
  const input = i0 < w ? { e0: i0, e1: w, firstRow: raggedId - (w - 1) + i0, source: "raggedId" as const } : null;
  return { maskedEnd, ring, input };
}

/** A decode compression (seqLen % cr == 0): every element from the ring. */
export function decodeSpans(layout: Layout, seqLen: number, readPage0: number, readPage1: number): WindowSpans {
  const maskedEnd = maskedEndOf(layout, seqLen);
  return { maskedEnd, ring: ringSpans(layout, maskedEnd, layout.window, readPage0, readPage1), input: null };
}

/** The half of a c4 row element `e` reads: 0 overlap (e < 4), 1 main; c128 rows have one half. */
export function halfOf(layout: Layout, e: number): 0 | 1 {
  return layout.compressRatio === 4 && e >= 4 ? 1 : 0;
}
