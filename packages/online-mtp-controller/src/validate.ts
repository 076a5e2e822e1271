/**
 * Host-side preconditions of every kernel (docs/reference/online-mtp.md §8.6, §15 invariant 12), shared by both
 * backends so the CPU and the GPU refuse the same inputs with the same error, before anything is launched. Each
 * validator checks every field of its parameter object (unknown keys, handle kinds, integers, booleans) and returns
 * false when the launch is a no-op (batch size 0). Only what the host knows is checked here; device-resident values
 * (request indices, lengths, segment rows) are range-checked inside the kernels, where padding rows are no-ops by
 * design.
 */
import type {
  CommitPendingParams,
  IndexVector,
  MarkPendingParams,
  MatrixF32,
  OnlineDecodeParams,
  OnlinePrefillParams,
  ResetSlotsParams,
  StateBuffer,
  WritePrefixParams,
} from "./backend.js";
import { SEGMENT_FIELDS } from "./backend.js";
import { typeOf } from "@dsv4-kv/errors/internal";
import { I32_MAX, check, checkBoolean, checkInt, checkKeys, checkObject } from "./check.js";
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS, MAX_VERIFY_TOKENS } from "./constants.js";

type HandleKind = "index" | "matrix" | "state";
const HANDLE_NAMES: Record<HandleKind, string> = {
  index: "an index vector (from uploadIndex / allocIndex)",
  matrix: "a matrix (from uploadMatrix / allocMatrix)",
  state: "a state buffer (from allocState)",
};

/** A handle of `kind` made by a backend (its provenance is the backend's own check). */
export function checkHandle(h: unknown, kind: "index", field: string): asserts h is IndexVector;
export function checkHandle(h: unknown, kind: "matrix", field: string): asserts h is MatrixF32;
export function checkHandle(h: unknown, kind: "state", field: string): asserts h is StateBuffer;
export function checkHandle(h: unknown, kind: HandleKind, field: string): void {
  const given = typeof h === "object" && h !== null ? (h as { kind?: unknown }).kind : undefined;
  check(given === kind, "INVALID_TYPE", field, given ?? typeOf(h), `must be ${HANDLE_NAMES[kind]}`);
}

function checkParams(p: unknown, keys: readonly string[]): void {
  checkObject(p, "params");
  checkKeys(p, keys, "");
}

function checkBatch(field: string, bs: number): boolean {
  checkInt(bs, 0, I32_MAX, "BATCH_SIZE", field, "must be a non-negative integer (0 is a no-op)");
  return bs > 0;
}

function checkKvScore(field: string, m: MatrixF32, needRows: number): void {
  checkHandle(m, "matrix", field);
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
  checkHandle(m, "matrix", "ape");
  check(
    m.rows === CHUNK_TOKENS && m.cols === HEAD_DIM,
    "SHAPE",
    "ape",
    [m.rows, m.cols],
    `must be [${CHUNK_TOKENS}, ${HEAD_DIM}] (one bias row per in-chunk position)`,
  );
}

function checkOut(m: MatrixF32, rows: number, rowsRule: string): void {
  checkHandle(m, "matrix", "out");
  check(
    m.cols === HEAD_DIM && m.rows >= rows,
    "SHAPE",
    "out",
    [m.rows, m.cols],
    `must be [>= ${rowsRule}, ${HEAD_DIM}]`,
  );
}

function checkSlotCount(N: number): void {
  checkInt(N, 1, I32_MAX, "REQ_INDEX", "numReqSlots", "must be >= 1");
}

function checkLayout(state: StateBuffer, O: number, N: number, banks: number, banksField: string): void {
  checkHandle(state, "state", "state");
  checkSlotCount(N);
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

/** An index vector of at least `bs` elements (one per batch row). */
function checkBatchVector(field: string, v: IndexVector, bs: number): void {
  checkHandle(v, "index", field);
  check(v.length >= bs, "SHAPE", `${field}.length`, v.length, `must be >= batchSize = ${bs}`);
}

/** The two marker vectors, at least one element per request slot. */
function checkPendingVectors(seqLens: IndexVector, widths: IndexVector, N: number, seqField: string, wField: string) {
  for (const [v, field] of [
    [seqLens, seqField],
    [widths, wField],
  ] as const) {
    checkHandle(v, "index", field);
    check(v.length >= N, "SHAPE", `${field}.length`, v.length, `must be >= numReqSlots = ${N}`);
  }
}

const WRITE_PREFIX_KEYS = [
  "kvScore",
  "seqLens",
  "reqPoolIndices",
  "ape",
  "state",
  "batchSize",
  "numVerifyTokens",
  "bankStrideRows",
  "numReqSlots",
];

export function validateWritePrefix(p: WritePrefixParams): boolean {
  checkParams(p, WRITE_PREFIX_KEYS);
  const live = checkBatch("batchSize", p.batchSize);
  checkD(p.numVerifyTokens);
  checkBatchVector("seqLens", p.seqLens, p.batchSize);
  checkBatchVector("reqPoolIndices", p.reqPoolIndices, p.batchSize);
  checkKvScore("kvScore", p.kvScore, p.batchSize * p.numVerifyTokens);
  checkApe(p.ape);
  checkLayout(p.state, p.bankStrideRows, p.numReqSlots, p.numVerifyTokens, "numVerifyTokens");
  return live;
}

const MARK_PENDING_KEYS = [
  "seqLens",
  "reqPoolIndices",
  "pendingSeqLens",
  "pendingWidths",
  "batchSize",
  "numVerifyTokens",
  "numReqSlots",
  "clearAll",
];

export function validateMarkPending(p: MarkPendingParams): boolean {
  checkParams(p, MARK_PENDING_KEYS);
  checkSlotCount(p.numReqSlots);
  checkPendingVectors(p.pendingSeqLens, p.pendingWidths, p.numReqSlots, "pendingSeqLens", "pendingWidths");
  const live = checkBatch("batchSize", p.batchSize);
  checkD(p.numVerifyTokens);
  checkBatchVector("seqLens", p.seqLens, p.batchSize);
  checkBatchVector("reqPoolIndices", p.reqPoolIndices, p.batchSize);
  checkBoolean(p.clearAll, "clearAll");
  return live;
}

const COMMIT_PENDING_KEYS = [
  "curSeqLens",
  "reqPoolIndices",
  "pendingSeqLens",
  "pendingWidths",
  "state",
  "batchSize",
  "maxDraftTokens",
  "clampWidth",
  "bankStrideRows",
  "numReqSlots",
  "consume",
  "mark",
];

export function validateCommitPending(p: CommitPendingParams): boolean {
  checkParams(p, COMMIT_PENDING_KEYS);
  const live = checkBatch("batchSize", p.batchSize);
  checkD(p.maxDraftTokens, "maxDraftTokens");
  if (p.clampWidth !== null) checkD(p.clampWidth, "clampWidth");
  checkBatchVector("curSeqLens", p.curSeqLens, p.batchSize);
  checkBatchVector("reqPoolIndices", p.reqPoolIndices, p.batchSize);
  checkPendingVectors(p.pendingSeqLens, p.pendingWidths, p.numReqSlots, "pendingSeqLens", "pendingWidths");
  checkLayout(p.state, p.bankStrideRows, p.numReqSlots, p.maxDraftTokens, "maxDraftTokens");
  checkBoolean(p.consume, "consume");
  if (p.mark !== undefined && p.mark !== null) validateMark(p.mark, p.batchSize, p.maxDraftTokens);
  return live;
}

/** The fused mark of a commit: `{ seqLens, width }`, width in [1, min(8, Dmax)]. */
export function validateMark(mark: { seqLens: IndexVector; width: number }, bs: number, dmax: number): void {
  checkObject(mark, "mark");
  checkKeys(mark, ["seqLens", "width"], "mark");
  checkBatchVector("mark.seqLens", mark.seqLens, bs);
  checkInt(
    mark.width,
    1,
    Math.min(MAX_VERIFY_TOKENS, dmax),
    "DRAFT_TOKENS",
    "mark.width",
    `must be in [1, min(${MAX_VERIFY_TOKENS}, maxDraftTokens)]`,
  );
}

const RESET_SLOTS_KEYS = ["state", "slots", "count", "bankStrideRows", "maxDraftTokens", "numReqSlots", "pending"];

export function validateResetSlots(p: ResetSlotsParams): boolean {
  checkParams(p, RESET_SLOTS_KEYS);
  const live = checkBatch("count", p.count);
  checkHandle(p.slots, "index", "slots");
  check(p.slots.length >= p.count, "SHAPE", "slots.length", p.slots.length, `must be >= count = ${p.count}`);
  checkInt(
    p.maxDraftTokens,
    0,
    MAX_VERIFY_TOKENS,
    "DRAFT_TOKENS",
    "maxDraftTokens",
    `must be in [0, ${MAX_VERIFY_TOKENS}]`,
  );
  checkLayout(p.state, p.bankStrideRows, p.numReqSlots, p.maxDraftTokens, "maxDraftTokens");
  check(p.pending !== undefined, "INVALID_TYPE", "pending", p.pending, "must be { seqLens, widths } or null");
  if (p.pending !== null) {
    checkObject(p.pending, "pending");
    checkKeys(p.pending, ["seqLens", "widths"], "pending");
    checkPendingVectors(p.pending.seqLens, p.pending.widths, p.numReqSlots, "pending.seqLens", "pending.widths");
  }
  return live;
}

const ONLINE_DECODE_KEYS = [
  "state",
  "kvScore",
  "ape",
  "seqLens",
  "reqPoolIndices",
  "batchSize",
  "slotOffsetRows",
  "numReqSlots",
  "out",
];

export function validateOnlineDecode(p: OnlineDecodeParams): boolean {
  checkParams(p, ONLINE_DECODE_KEYS);
  const live = checkBatch("batchSize", p.batchSize);
  checkBatchVector("seqLens", p.seqLens, p.batchSize);
  checkBatchVector("reqPoolIndices", p.reqPoolIndices, p.batchSize);
  checkKvScore("kvScore", p.kvScore, p.batchSize);
  checkApe(p.ape);
  checkSlotCount(p.numReqSlots);
  checkInt(p.slotOffsetRows, 0, I32_MAX, "BANK_STRIDE", "slotOffsetRows", "must be >= 0");
  checkHandle(p.state, "state", "state");
  // Highest row touched: (N − 1) + slotOffsetRows.
  check(
    p.state.rows >= p.numReqSlots + p.slotOffsetRows,
    "STATE_ROWS",
    "state.rows",
    p.state.rows,
    `must be >= numReqSlots + slotOffsetRows = ${p.numReqSlots + p.slotOffsetRows}`,
  );
  checkOut(p.out, p.batchSize, `${p.batchSize}`);
  return live;
}

const ONLINE_PREFILL_KEYS = ["state", "kvScore", "ape", "segments", "numSegments", "out"];

export function validateOnlinePrefill(p: OnlinePrefillParams): boolean {
  checkParams(p, ONLINE_PREFILL_KEYS);
  const live = checkBatch("numSegments", p.numSegments);
  checkHandle(p.state, "state", "state");
  checkHandle(p.segments, "index", "segments");
  check(
    p.segments.length >= p.numSegments * SEGMENT_FIELDS,
    "SHAPE",
    "segments.length",
    p.segments.length,
    `must be >= numSegments·${SEGMENT_FIELDS} = ${p.numSegments * SEGMENT_FIELDS}`,
  );
  checkKvScore("kvScore", p.kvScore, live ? 1 : 0);
  checkApe(p.ape);
  checkOut(p.out, p.numSegments, `numSegments = ${p.numSegments}`);
  return live;
}
