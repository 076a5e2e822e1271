/**
 * Host-side preconditions of every kernel (§6, invariant 12), shared by both backends so the CPU and the GPU
 * refuse the same inputs with the same error. Only sizes known on the host are checked here; device-resident
 * values (request indices, lengths, segment rows) are range-checked inside the kernels.
 */
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS, MAX_VERIFY_TOKENS } from "./constants.js";
import { check, checkInt } from "./errors.js";
import type {
  CommitPendingParams,
  MarkPendingParams,
  MatrixF32,
  OnlineDecodeParams,
  OnlinePrefillParams,
  ResetSlotsParams,
  StateBuffer,
  WritePrefixParams,
} from "./backend.js";
import { SEGMENT_FIELDS } from "./backend.js";

const I32_MAX = 0x7fffffff;

function checkBatch(field: string, bs: number): boolean {
  checkInt(bs, 0, I32_MAX, "BATCH_SIZE", field, "must be a non-negative integer (0 is a no-op)");
  return bs > 0;
}

function checkKvScore(field: string, m: MatrixF32, needRows: number): void {
  check(
    m.cols === KV_SCORE_COLS,
    "SHAPE",
    `${field}.cols`,
    m.cols,
    `must be ${KV_SCORE_COLS} ([kv(512) | score(512)])`,
  );
  check(m.rows >= needRows, "SHAPE", `${field}.rows`, m.rows, `must be >= ${needRows} (rows the batch reads)`);
}

function checkApe(m: MatrixF32): void {
  check(
    m.rows === CHUNK_TOKENS && m.cols === HEAD_DIM,
    "SHAPE",
    "ape",
    [m.rows, m.cols],
    `must be [${CHUNK_TOKENS}, ${HEAD_DIM}] (one bias row per in-chunk position)`,
  );
}

function checkLayout(state: StateBuffer, O: number, N: number, banks: number, banksField: string): void {
  checkInt(N, 1, I32_MAX, "REQ_INDEX", "numReqSlots", "must be >= 1");
  // Rows r + b·O of different banks must not overlap: r < N ≤ O.
  checkInt(O, N, I32_MAX, "BANK_STRIDE", "bankStrideRows", `must be >= numReqSlots = ${N} so banks do not overlap`);
  // The highest row touched is (N − 1) + banks·O < O·(banks + 1).
  check(
    state.rows >= O * (banks + 1),
    "STATE_ROWS",
    "state.rows",
    state.rows,
    `must be >= bankStrideRows·(${banksField} + 1) = ${O}·${banks + 1} = ${O * (banks + 1)}`,
  );
}

function checkD(D: number, field = "numVerifyTokens"): void {
  checkInt(D, 1, MAX_VERIFY_TOKENS, "DRAFT_TOKENS", field, `must be in [1, ${MAX_VERIFY_TOKENS}] (kMaxVerifyTokens)`);
}

function checkLen(field: string, len: number, bs: number): void {
  check(len >= bs, "SHAPE", `${field}.length`, len, `must be >= batchSize = ${bs}`);
}

/** Returns false when the launch is a no-op (batch size 0). */
export function validateWritePrefix(p: WritePrefixParams): boolean {
  if (!checkBatch("batchSize", p.batchSize)) return false;
  checkD(p.numVerifyTokens);
  checkLen("seqLens", p.seqLens.length, p.batchSize);
  checkLen("reqPoolIndices", p.reqPoolIndices.length, p.batchSize);
  checkKvScore("kvScore", p.kvScore, p.batchSize * p.numVerifyTokens);
  checkApe(p.ape);
  checkLayout(p.state, p.bankStrideRows, p.numReqSlots, p.numVerifyTokens, "numVerifyTokens");
  return true;
}

export function validateMarkPending(p: MarkPendingParams): boolean {
  checkInt(p.numReqSlots, 1, I32_MAX, "REQ_INDEX", "numReqSlots", "must be >= 1");
  check(
    p.pendingSeqLens.length >= p.numReqSlots,
    "SHAPE",
    "pendingSeqLens.length",
    p.pendingSeqLens.length,
    `must be >= numReqSlots = ${p.numReqSlots}`,
  );
  check(
    p.pendingWidths.length >= p.numReqSlots,
    "SHAPE",
    "pendingWidths.length",
    p.pendingWidths.length,
    `must be >= numReqSlots = ${p.numReqSlots}`,
  );
  if (!checkBatch("batchSize", p.batchSize)) return false;
  checkD(p.numVerifyTokens);
  checkLen("seqLens", p.seqLens.length, p.batchSize);
  checkLen("reqPoolIndices", p.reqPoolIndices.length, p.batchSize);
  return true;
}

export function validateCommitPending(p: CommitPendingParams): boolean {
  if (!checkBatch("batchSize", p.batchSize)) return false;
  checkD(p.maxDraftTokens, "maxDraftTokens");
  if (p.clampWidth !== null) checkD(p.clampWidth, "clampWidth");
  checkLen("curSeqLens", p.curSeqLens.length, p.batchSize);
  checkLen("reqPoolIndices", p.reqPoolIndices.length, p.batchSize);
  check(
    p.pendingSeqLens.length >= p.numReqSlots,
    "SHAPE",
    "pendingSeqLens.length",
    p.pendingSeqLens.length,
    `must be >= numReqSlots = ${p.numReqSlots}`,
  );
  check(
    p.pendingWidths.length >= p.numReqSlots,
    "SHAPE",
    "pendingWidths.length",
    p.pendingWidths.length,
    `must be >= numReqSlots = ${p.numReqSlots}`,
  );
  checkLayout(p.state, p.bankStrideRows, p.numReqSlots, p.maxDraftTokens, "maxDraftTokens");
  if (p.mark) {
    checkLen("mark.seqLens", p.mark.seqLens.length, p.batchSize);
    checkInt(
      p.mark.width,
      1,
      Math.min(MAX_VERIFY_TOKENS, p.maxDraftTokens),
      "DRAFT_TOKENS",
      "mark.width",
      `must be in [1, min(${MAX_VERIFY_TOKENS}, maxDraftTokens)]`,
    );
  }
  return true;
}

export function validateResetSlots(p: ResetSlotsParams): boolean {
  if (!checkBatch("count", p.count)) return false;
  checkLen("slots", p.slots.length, p.count);
  checkInt(
    p.maxDraftTokens,
    0,
    MAX_VERIFY_TOKENS,
    "DRAFT_TOKENS",
    "maxDraftTokens",
    `must be in [0, ${MAX_VERIFY_TOKENS}]`,
  );
  checkLayout(p.state, p.bankStrideRows, p.numReqSlots, p.maxDraftTokens, "maxDraftTokens");
  if (p.pending) {
    check(
      p.pending.seqLens.length >= p.numReqSlots,
      "SHAPE",
      "pending.seqLens.length",
      p.pending.seqLens.length,
      `must be >= numReqSlots = ${p.numReqSlots}`,
    );
    check(
      p.pending.widths.length >= p.numReqSlots,
      "SHAPE",
      "pending.widths.length",
      p.pending.widths.length,
      `must be >= numReqSlots = ${p.numReqSlots}`,
    );
  }
  return true;
}

export function validateOnlineDecode(p: OnlineDecodeParams): boolean {
  if (!checkBatch("batchSize", p.batchSize)) return false;
  checkLen("seqLens", p.seqLens.length, p.batchSize);
  checkLen("reqPoolIndices", p.reqPoolIndices.length, p.batchSize);
  checkKvScore("kvScore", p.kvScore, p.batchSize);
  checkApe(p.ape);
  checkInt(p.numReqSlots, 1, I32_MAX, "REQ_INDEX", "numReqSlots", "must be >= 1");
  checkInt(p.slotOffsetRows, 0, I32_MAX, "BANK_STRIDE", "slotOffsetRows", "must be >= 0");
  // Highest row touched: (N − 1) + slotOffsetRows.
  check(
    p.state.rows >= p.numReqSlots + p.slotOffsetRows,
    "STATE_ROWS",
    "state.rows",
    p.state.rows,
    `must be >= numReqSlots + slotOffsetRows = ${p.numReqSlots + p.slotOffsetRows}`,
  );
  check(
    p.out.cols === HEAD_DIM && p.out.rows >= p.batchSize,
    "SHAPE",
    "out",
    [p.out.rows, p.out.cols],
    `must be [>= ${p.batchSize}, ${HEAD_DIM}]`,
  );
  return true;
}

export function validateOnlinePrefill(p: OnlinePrefillParams): boolean {
  if (!checkBatch("numSegments", p.numSegments)) return false;
  check(
    p.segments.length >= p.numSegments * SEGMENT_FIELDS,
    "SHAPE",
    "segments.length",
    p.segments.length,
    `must be >= numSegments·${SEGMENT_FIELDS} = ${p.numSegments * SEGMENT_FIELDS}`,
  );
  checkKvScore("kvScore", p.kvScore, 1);
  checkApe(p.ape);
  check(
    p.out.cols === HEAD_DIM && p.out.rows >= p.numSegments,
    "SHAPE",
    "out",
    [p.out.rows, p.out.cols],
    `must be [>= numSegments = ${p.numSegments}, ${HEAD_DIM}]`,
  );
  return true;
}
