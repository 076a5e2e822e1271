/**
 * The host validator both backends run before any work (records: docs/reference/planner.md §2; consumption:
 * docs/reference/planner.md §8): the batch's shape (keys, typed arrays, sizes, table byte lengths) and every rule of
 * the plan checks the kernels re-check on the device. A refusal is a CompressError naming the row and field
 * (`planC[7].bufferLen`). The row rules are exported one field at a time so the GPU backend maps a device error word
 * to the same error the host would raise.
 */
import {
  COMPRESS_PLAN_BYTES,
  CompressPlanTable,
  DECODE_PLAN_BYTES,
  DecodePlanTable,
  INVALID_RAGGED_ID,
  INVALID_SEQ_LEN,
  WRITE_PLAN_BYTES,
  WritePlanTable,
} from "@dsv4-kv/planner";
import type { CompressGeometry, DecodeBatch, PrefillBatch } from "./backend.js";
import { typeOf } from "@dsv4-kv/errors/internal";
import { check, checkFiniteElements, checkFloat32Array, checkInt, checkKeys, checkObject } from "./check.js";
import { CompressError } from "./errors.js";
import { type Layout, layoutOf } from "./geometry.js";
import { type ElementSpan, type WindowSpans, decodeSpans, prefillSpans } from "./window.js";

const PREFILL_KEYS = ["input", "inputRows", "planC", "planW"] as const;
const DECODE_KEYS = ["input", "planD", "batch"] as const;
/** Most rows of a table or of the ragged input: the kernels index them as int32. */
const MAX_ROWS = 0x7fffffff;

/** A refusal before it is thrown: what `CompressError` takes. */
export interface PlanViolation {
  readonly field: string;
  readonly value: number;
  readonly rule: string;
  readonly params: Readonly<Record<string, unknown>>;
}

export type CompressRowField = "seqLen" | "bufferLen" | "raggedId" | "readPage0" | "readPage1";
export type WriteRowField = "raggedId" | "writeLoc";
export type DecodeRowField = "seqLen" | "writeLoc" | "readPage0" | "readPage1";

/** A validated prefill batch: the layout, the tables as the planner's readers, their row counts. */
export interface CheckedPrefill {
  readonly layout: Layout;
  readonly inputRows: number;
  readonly planC: CompressPlanTable;
  readonly planW: WritePlanTable;
  readonly numPlanC: number;
  readonly numPlanW: number;
}

export interface CheckedDecode {
  readonly layout: Layout;
  readonly batch: number;
  readonly planD: DecodePlanTable;
}

export function throwViolation(v: PlanViolation): never {
  throw new CompressError("BAD_PLAN_ROW", v.field, v.value, v.rule, v.params);
}

// ---- prefill ----------------------------------------------------------------------------------------------------

/**
 * Validates a prefill batch against `geometry`: keys, `input` a Float32Array of `inputRows × rowElems` finite
 * floats, `planC` / `planW` Uint8Arrays of whole 16 / 8-byte rows, then every valid row (rules in `compressRowRule`,
 * `writeRowRule`; padding rows are skipped as the kernels skip them). Throws the first refusal, planC rows first.
 */
export function validatePrefillBatch(geometry: CompressGeometry, batch: PrefillBatch): CheckedPrefill {
  const checked = checkPrefillShape(geometry, batch);
  checkPrefillRows(checked);
  return checked;
}

/** The shape half of `validatePrefillBatch`: geometry, keys, input, table byte lengths. */
export function checkPrefillShape(geometry: CompressGeometry, batch: PrefillBatch): CheckedPrefill {
  const layout = layoutOf(geometry);
  checkObject(batch, "batch");
  checkKeys(batch, PREFILL_KEYS, "batch");
  checkInt(batch.inputRows, 0, MAX_ROWS, "inputRows");
  checkInput(layout, batch.input, batch.inputRows, "inputRows");
  const planC = new CompressPlanTable(checkTable(batch.planC, COMPRESS_PLAN_BYTES, "planC"));
  const planW = new WritePlanTable(checkTable(batch.planW, WRITE_PLAN_BYTES, "planW"));
  return { layout, inputRows: batch.inputRows, planC, planW, numPlanC: planC.rowCount, numPlanW: planW.rowCount };
}

/** The plan-row half of `validatePrefillBatch`: every valid row of planC, then of planW. */
export function checkPrefillRows(checked: CheckedPrefill): void {
  const { planC, planW } = checked;
  for (let i = 0; i < planC.rowCount; i++) {
    if (planC.isInvalid(i)) continue;
    for (const f of COMPRESS_ROW_FIELDS) {
      const v = compressRowRule(checked, i, f);
      if (v) throwViolation(v);
    }
  }
  for (let i = 0; i < planW.rowCount; i++) {
    if (planW.isInvalid(i)) continue;
    for (const f of WRITE_ROW_FIELDS) {
      const v = writeRowRule(checked, i, f);
      if (v) throwViolation(v);
    }
  }
}

/** The order the validator checks a CompressPlan row's fields in. */
export const COMPRESS_ROW_FIELDS: readonly CompressRowField[] = [
  "seqLen",
  "bufferLen",
  "readPage0",
  "readPage1",
  "raggedId",
];
export const WRITE_ROW_FIELDS: readonly WriteRowField[] = ["raggedId", "writeLoc"];
export const DECODE_ROW_FIELDS: readonly DecodeRowField[] = ["seqLen", "writeLoc", "readPage0", "readPage1"];

/**
 * One rule of a valid CompressPlan row `i` (the earlier fields of `COMPRESS_ROW_FIELDS` assumed to pass), or null:
 *   seqLen    = q + 1 of an event: a positive multiple of cr;
 *   bufferLen <= W;
 *   readPage0 / readPage1  the state rows the ring part reads (window.ts) lie in [0, stateRows);
 *   raggedId  the input rows the window reads, r − W + 1 + e for e in [max(L, masked), W), lie in [0, inputRows).
 * The order is the device re-check's (native/compress/compress_device.cuh `CheckCompressRow`).
 */
export function compressRowRule(c: CheckedPrefill, i: number, field: CompressRowField): PlanViolation | null {
  const { layout } = c;
  const r = c.planC.row(i);
  const at = `planC[${i}].${field}`;
  if (field === "seqLen") return seqLenRule(layout, r.seqLen, at, i, "a compression event");
  if (field === "bufferLen") {
    if (r.bufferLen <= layout.window) return null;
    return {
      field: at,
      value: r.bufferLen,
      rule: `must be at most the window W = ${layout.window}`,
      params: { row: i },
    };
  }
  const spans = prefillSpans(layout, r.seqLen, r.raggedId, r.bufferLen, r.readPage0, r.readPage1);
  if (field === "raggedId")
    return spans.input ? spanRule(spans.input, c.inputRows, "inputRows", at, r.raggedId, i) : null;
  return ringRule(layout, spans, field, at, r[field], i);
}

/** WritePlan row `i`: raggedId an input row, writeLoc a state row. */
export function writeRowRule(c: CheckedPrefill, i: number, field: WriteRowField): PlanViolation | null {
  const r = c.planW.row(i);
  const at = `planW[${i}].${field}`;
  if (field === "raggedId") {
    if (r.raggedId < c.inputRows) return null;
    const pad = INVALID_RAGGED_ID.toString(16);
    const rule = `must be an input row in [0, inputRows = ${c.inputRows}) (or 0x${pad}, padding)`;
    return { field: at, value: r.raggedId, rule, params: { row: i, inputRows: c.inputRows } };
  }
  return writeLocRule(c.layout, r.writeLoc, at, i);
}

// ---- decode -----------------------------------------------------------------------------------------------------

/**
 * Validates a decode batch: keys, `batch` rows, `input` a Float32Array of `batch × rowElems` finite floats (row b is
 * batch row b's token), `planD` exactly `batch` 16-byte rows, then every non-padding row (`decodeRowRule`).
 */
export function validateDecodeBatch(geometry: CompressGeometry, batch: DecodeBatch): CheckedDecode {
  const checked = checkDecodeShape(geometry, batch);
  checkDecodeRows(checked);
  return checked;
}

/** The shape half of `validateDecodeBatch`. */
export function checkDecodeShape(geometry: CompressGeometry, batch: DecodeBatch): CheckedDecode {
  const layout = layoutOf(geometry);
  checkObject(batch, "batch");
  checkKeys(batch, DECODE_KEYS, "batch");
  checkInt(batch.batch, 0, MAX_ROWS, "batch");
  checkInput(layout, batch.input, batch.batch, "batch");
  const bytes = checkTable(batch.planD, DECODE_PLAN_BYTES, "planD");
  const n = batch.batch * DECODE_PLAN_BYTES;
  const rule = `must be batch × ${DECODE_PLAN_BYTES} = ${n} (a row per batch row)`;
  check(bytes.byteLength === n, "PLAN_TABLE", "planD.byteLength", bytes.byteLength, rule);
  return { layout, batch: batch.batch, planD: new DecodePlanTable(bytes) };
}

/** The plan-row half of `validateDecodeBatch`: every non-padding row. */
export function checkDecodeRows(checked: CheckedDecode): void {
  for (let b = 0; b < checked.batch; b++) {
    if (checked.planD.row(b).seqLen === INVALID_SEQ_LEN) continue;
    for (const f of DECODE_ROW_FIELDS) {
      const v = decodeRowRule(checked, b, f);
      if (v) throwViolation(v);
    }
  }
}

/**
 * One rule of a non-padding DecodePlan row `b`: seqLen >= 1, writeLoc a state row, and when it compresses
 * (seqLen % cr == 0) the ring rows of readPage0 (c4, unless masked) and readPage1 inside the state.
 */
export function decodeRowRule(c: CheckedDecode, b: number, field: DecodeRowField): PlanViolation | null {
  const { layout } = c;
  const r = c.planD.row(b);
  const at = `planD[${b}].${field}`;
  if (field === "seqLen") {
    if (r.seqLen !== 0) return null;
    const pad = INVALID_SEQ_LEN.toString(16);
    const rule = `must be the sequence length including the decoded token (>= 1; 0x${pad}, padding)`;
    return { field: at, value: 0, rule, params: { row: b } };
  }
  if (field === "writeLoc") return writeLocRule(layout, r.writeLoc, at, b);
  if (r.seqLen % layout.compressRatio !== 0) return null;
  return ringRule(layout, decodeSpans(layout, r.seqLen, r.readPage0, r.readPage1), field, at, r[field], b);
}

/** Whether decode row `b` compresses this step (valid seqLen, a multiple of cr). */
export function decodeCompresses(layout: Layout, seqLen: number): boolean {
  return seqLen !== INVALID_SEQ_LEN && seqLen !== 0 && seqLen % layout.compressRatio === 0;
}

// ---- shared rules -----------------------------------------------------------------------------------------------

function seqLenRule(layout: Layout, seqLen: number, at: string, row: number, what: string): PlanViolation | null {
  const cr = layout.compressRatio;
  if (seqLen !== 0 && seqLen % cr === 0) return null;
  const rule = `must be q + 1 of ${what}: a positive multiple of ${cr} (0x${INVALID_SEQ_LEN.toString(16)}, padding)`;
  return { field: at, value: seqLen, rule, params: { row, compressRatio: cr } };
}

function writeLocRule(layout: Layout, writeLoc: number, at: string, row: number): PlanViolation | null {
  if (writeLoc >= 0 && writeLoc < layout.stateRows) return null;
  const rule = `must be a state row in [0, stateRows = ${layout.stateRows})`;
  return { field: at, value: writeLoc, rule, params: { row, stateRows: layout.stateRows } };
}

function ringRule(
  layout: Layout,
  spans: WindowSpans,
  field: "readPage0" | "readPage1",
  at: string,
  value: number,
  row: number,
): PlanViolation | null {
  const span = spans.ring.find((s) => s.source === field);
  return span ? spanRule(span, layout.stateRows, "stateRows", at, value, row) : null;
}

/** The rows a span reads, [firstRow, firstRow + e1 − e0), inside [0, limit). */
function spanRule(
  s: ElementSpan,
  limit: number,
  limitName: string,
  at: string,
  value: number,
  row: number,
): PlanViolation | null {
  const last = s.firstRow + (s.e1 - s.e0) - 1;
  if (s.firstRow >= 0 && last < limit) return null;
  const what = s.source === "raggedId" ? "input" : "state";
  const rows = `${what} rows [${s.firstRow}, ${last}]`;
  const rule = `window elements [${s.e0}, ${s.e1}) read ${rows}, which must lie in [0, ${limitName} = ${limit})`;
  return { field: at, value, rule, params: { row, firstRow: s.firstRow, lastRow: last, [limitName]: limit } };
}

function checkInput(layout: Layout, input: unknown, rows: number, rowsField: string): void {
  checkFloat32Array(input, "input");
  const n = rows * layout.rowElems;
  const rule = `must hold ${rowsField} × rowElems = ${rows} × ${layout.rowElems} = ${n} floats`;
  check(input.length === n, "BUFFER_SHAPE", "input.length", input.length, rule, { expected: n });
  checkFiniteElements(input, "input");
}

function checkTable(bytes: unknown, rowBytes: number, field: string): Uint8Array {
  check(
    bytes instanceof Uint8Array,
    "INVALID_TYPE",
    field,
    bytes,
    `must be a Uint8Array of plan rows (got ${typeOf(bytes)})`,
  );
  const rule = `must be a multiple of ${rowBytes} (one row is ${rowBytes} bytes)`;
  check(bytes.byteLength % rowBytes === 0, "PLAN_TABLE", `${field}.byteLength`, bytes.byteLength, rule);
  check(
    bytes.byteLength / rowBytes <= MAX_ROWS,
    "PLAN_TABLE",
    `${field}.byteLength`,
    bytes.byteLength,
    `must hold at most ${MAX_ROWS} rows`,
  );
  return bytes;
}
