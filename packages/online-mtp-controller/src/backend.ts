/**
 * The device interface the controller drives. Two implementations: `CpuBackend` (typed arrays, the reference
 * math) and `GpuBackend` (kernels-cuda). Every handle is opaque: the controller only passes handles and host-known
 * sizes to kernels; the only device→host reads are the `read*` methods, which the controller never calls (a
 * counting backend in the tests proves it).
 *
 * Units: `...Rows` count rows of a 2-D buffer; lengths count elements.
 */
import type { StateDtype } from "./constants.js";

/** int32 vector in device memory. */
export interface IndexVector {
  readonly kind: "index";
  readonly length: number;
}

/** Row-major fp32 matrix in device memory. */
export interface MatrixF32 {
  readonly kind: "matrix";
  readonly rows: number;
  readonly cols: number;
}

/** One c128 layer's online state buffer `[rows, 3H]` of fp32 or bf16. Contents start uninitialized. */
export interface StateBuffer {
  readonly kind: "state";
  readonly rows: number;
  readonly dtype: StateDtype;
}

/** docs/reference/online-mtp.md §8.1. Verify rows are request-major: input row of (batch b, step i) = b·D + i. */
export interface WritePrefixParams {
  kvScore: MatrixF32;
  /** Pre-verify committed lengths S, ≥ batchSize long. */
  seqLens: IndexVector;
  reqPoolIndices: IndexVector;
  ape: MatrixF32;
  state: StateBuffer;
  batchSize: number;
  numVerifyTokens: number;
  bankStrideRows: number;
  numReqSlots: number;
}

/**
 * docs/reference/online-mtp.md §8.2, hardened: `clearAll = false` keeps other requests' markers
 * (docs/reference/online-mtp.md §10); `true` is upstream's global reset.
 */
export interface MarkPendingParams {
  seqLens: IndexVector;
  reqPoolIndices: IndexVector;
  pendingSeqLens: IndexVector;
  /** Verify width D recorded per marker (adaptive D: the commit clamps by the width of ITS verify). */
  pendingWidths: IndexVector;
  batchSize: number;
  numVerifyTokens: number;
  numReqSlots: number;
  clearAll: boolean;
}

/**
 * docs/reference/online-mtp.md §8.3. One call per layer; `consume` (last layer) clears the marker of every batch
 * request it read.
 */
export interface CommitPendingParams {
  curSeqLens: IndexVector;
  reqPoolIndices: IndexVector;
  pendingSeqLens: IndexVector;
  pendingWidths: IndexVector;
  state: StateBuffer;
  batchSize: number;
  /** Banks allocated (Dmax): bound for a recorded width. */
  maxDraftTokens: number;
  /** null: clamp by the recorded width; a number: clamp by this width (upstream: the current D). */
  clampWidth: number | null;
  bankStrideRows: number;
  numReqSlots: number;
  consume: boolean;
  /**
   * Fused mark of the same batch (target verify): after reading a request's old marker, set it to
   * (markSeqLens[b], markWidth). Saves the separate mark launch; same result as commit then mark.
   */
  mark?: { seqLens: IndexVector; width: number } | null;
}

/** docs/reference/online-mtp.md §9.5: rows r + b·O (b = 0..Dmax) ← (−∞, 0, 0); with `pending`, pending[r] ← −1. */
export interface ResetSlotsParams {
  state: StateBuffer;
  slots: IndexVector;
  count: number;
  bankStrideRows: number;
  maxDraftTokens: number;
  numReqSlots: number;
  pending: { seqLens: IndexVector; widths: IndexVector } | null;
}

/**
 * docs/reference/online-mtp.md §5.1 decode: one new token per batch row; `seqLens` INCLUDES the new token.
 * Output row b = entry when closed.
 */
export interface OnlineDecodeParams {
  state: StateBuffer;
  kvScore: MatrixF32;
  ape: MatrixF32;
  seqLens: IndexVector;
  reqPoolIndices: IndexVector;
  batchSize: number;
  /** 0 = bank 0; O = bank 1 (both load and store rows are r + slotOffsetRows). */
  slotOffsetRows: number;
  numReqSlots: number;
  out: MatrixF32;
}

/** Fields of one prefill segment record (int32 ×5, our own compact form: docs/reference/online-mtp.md §6.2). */
export const SEGMENT_FIELDS = 5;
/**
 * docs/reference/online-mtp.md §5.2 prefill: segments `[seqLen, lastRow, len, loadRow, storeRow]` (int32 each),
 * seqLen = last position + 1, lastRow = input row of the segment's last token, its tokens are rows
 * lastRow−len+1 .. lastRow; loadRow = state row merged in when the segment does not start its chunk (−1: none);
 * storeRow = state row of a trailing segment. Pass 1: segments that close their chunk (c1 == 128) emit into
 * out[segment index]; pass 2: the others store.
 */
export interface OnlinePrefillParams {
  state: StateBuffer;
  kvScore: MatrixF32;
  ape: MatrixF32;
  segments: IndexVector;
  numSegments: number;
  out: MatrixF32;
}

export interface OnlineMtpBackend {
  readonly name: string;
  uploadIndex(values: Int32Array): IndexVector;
  /** Overwrites a device vector from the host (host→device; allowed in the loop: the scheduler's own uploads). */
  writeIndex(dst: IndexVector, values: Int32Array): void;
  uploadMatrix(values: Float32Array, rows: number, cols: number): MatrixF32;
  allocMatrix(rows: number, cols: number): MatrixF32;
  allocState(rows: number, dtype: StateDtype): StateBuffer;
  /** A vector of `length` elements, all `value`. */
  allocIndex(length: number, value: number): IndexVector;
  /**
   * The values a vector was last given from the host (`uploadIndex`, `writeIndex` over the whole vector), without a
   * device read; undefined when the backend does not keep them. The controller checks request slots and sequence
   * lengths against them, so a slot outside the pool is refused instead of skipped by the kernels.
   */
  hostIndex?(v: IndexVector): Int32Array | undefined;

  writePrefix(p: WritePrefixParams): void;
  markPending(p: MarkPendingParams): void;
  commitPending(p: CommitPendingParams): void;
  resetSlots(p: ResetSlotsParams): void;
  onlineDecode(p: OnlineDecodeParams): void;
  onlinePrefill(p: OnlinePrefillParams): void;

  // ---- device → host (never called by the controller) ----
  readIndex(v: IndexVector): Int32Array;
  readMatrix(m: MatrixF32): Float32Array;
  /** Rows [firstRow, firstRow + count) widened to float (bf16 → exact float). */
  readStateRows(s: StateBuffer, firstRow: number, count: number): Float32Array;
  /** Raw bits of rows (Uint32 per fp32 element, Uint16 per bf16 element), for bitwise comparisons. */
  readStateBits(s: StateBuffer, firstRow: number, count: number): Uint32Array | Uint16Array;
  /** Host → device fill of rows (tests / simulate initialisation). */
  writeStateRows(s: StateBuffer, firstRow: number, values: Float32Array): void;
  /** Waits for queued work; throws a device-side bounds error recorded since the last call. */
  synchronize(): void;
  dispose?(): void;
}
