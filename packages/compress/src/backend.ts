/**
 * The ring compress backends (docs/reference/compress-kernels.md): `CpuCompressBackend` (typed arrays, the fp32
 * reference of the kernels' math) and `GpuCompressBackend` (kernels-cuda, on the `./gpu` subpath). Both consume the
 * planner's records byte for byte (CompressPlan 16 B, WritePlan 8 B, DecodePlan 16 B; docs/reference/planner.md §2)
 * and own one layer's state pool of `stateRows` rows.
 *
 * Layout: a state row and an input row hold `rowBlocks(cr) * headDim` floats, c4 `| kv_overlap | kv | score_overlap |
 * score |` and c128 `| kv | score |`; ape is `[window(cr), headDim]`; an entry is `headDim` floats.
 */
export type RingRatio = 4 | 128;
export type StateDtype = "fp32" | "bf16";

export interface CompressGeometry {
  compressRatio: RingRatio;
  /** 128 or 512. */
  headDim: number;
  stateDtype: StateDtype;
  /** Rows of the state pool (a slot per row; page = row / compressRatio). */
  stateRows: number;
}

/** One prefill / extend / verify batch: ragged input rows and the batch's plan tables (stage 1, final). */
export interface PrefillBatch {
  /** inputRows × rowElems fp32, row-major. */
  input: Float32Array;
  inputRows: number;
  /** numPlanC × 16 bytes. */
  planC: Uint8Array;
  /** numPlanW × 8 bytes. */
  planW: Uint8Array;
}

/** One decode batch: input row b is batch row b's new token. */
export interface DecodeBatch {
  input: Float32Array;
  /** batch × 16 bytes. */
  planD: Uint8Array;
  batch: number;
}

export interface RingCompressBackend {
  readonly name: "cpu" | "gpu";
  readonly geometry: Readonly<CompressGeometry>;
  /** Floats per state / input row. */
  readonly rowElems: number;
  /** `[window, headDim]` positional bias, used by every later call. */
  setApe(ape: Float32Array): void;
  /**
   * Compress every valid CompressPlan row (reading the pre-batch ring), then write every valid WritePlan row.
   * Returns `numPlanC × headDim` floats: row i is plan row i's entry; rows of padding are NaN.
   * A bad plan row throws a CompressError naming the row and field (`planC[7].bufferLen`) before any work: both
   * backends validate the tables on the host with one shared validator; the GPU kernels re-check on the device.
   */
  prefill(batch: PrefillBatch): Float32Array;
  /** Write each row's token, then compress where seq_len % cr == 0. Returns batch × headDim (NaN where not). */
  decode(batch: DecodeBatch): Float32Array;
  /** Rows widened to fp32 (bf16 exactly). */
  readStateRows(firstRow: number, count: number): Float32Array;
  /** Raw bits: Uint32 per fp32 element, Uint16 per bf16 element. */
  readStateBits(firstRow: number, count: number): Uint32Array | Uint16Array;
  /** Fill rows (rounded to the state dtype); scenario initialisation and tests. */
  writeStateRows(firstRow: number, values: Float32Array): void;
  dispose(): void;
}
