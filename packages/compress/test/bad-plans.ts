/**
 * One bad plan row per rule of the host validator (and of the kernels' device re-check), each with the error it must
 * raise: the CPU refusal tests and the GPU error-word mapping test share the table.
 */
import {
  type CompressPlanRecord,
  CompressPlanTable,
  type DecodePlanRecord,
  DecodePlanTable,
  type WritePlanRecord,
  WritePlanTable,
} from "@dsv4-kv/planner";
import type { CompressGeometry, DecodeBatch, PrefillBatch } from "../src/backend.js";
import { rowBlocks } from "../src/geometry.js";

export const BAD_STATE_ROWS = 64;
export const BAD_INPUT_ROWS = 16;

export function badGeometry(cr: 4 | 128): CompressGeometry {
  return { compressRatio: cr, headDim: 128, stateDtype: "fp32", stateRows: cr === 4 ? BAD_STATE_ROWS : 512 };
}

export interface BadCase {
  name: string;
  cr: 4 | 128;
  op: "prefill" | "decode";
  prefill?: PrefillBatch;
  decode?: DecodeBatch;
  field: string;
  value: number;
}

function inputOf(cr: 4 | 128, rows: number): Float32Array {
  const a = new Float32Array(rows * rowBlocks(cr) * 128);
  for (let i = 0; i < a.length; i++) a[i] = Math.sin(i);
  return a;
}

/** A valid c4 compression: q = 7 from ragged rows 0..7. */
const C4_OK: CompressPlanRecord = { seqLen: 8, raggedId: 7, bufferLen: 0, readPage0: -1, readPage1: 0 };
/** q = 11 with 5 ring elements: overlap rows readPage0·4 + [0, 4), main row readPage1·4, ragged rows 0..2. */
const C4_RING: CompressPlanRecord = { seqLen: 12, raggedId: 2, bufferLen: 5, readPage0: 0, readPage1: 1 };
const W_OK: WritePlanRecord = { raggedId: 3, writeLoc: 5 };

function prefillCase(
  name: string,
  cr: 4 | 128,
  planC: CompressPlanRecord[],
  planW: WritePlanRecord[],
  field: string,
  value: number,
): BadCase {
  const batch = {
    input: inputOf(cr, BAD_INPUT_ROWS),
    inputRows: BAD_INPUT_ROWS,
    planC: CompressPlanTable.fromRecords(planC).bytes,
    planW: WritePlanTable.fromRecords(planW).bytes,
  };
  return { name, cr, op: "prefill", prefill: batch, field, value };
}

function decodeCase(name: string, cr: 4 | 128, rows: DecodePlanRecord[], field: string, value: number): BadCase {
  const batch = { input: inputOf(cr, rows.length), planD: DecodePlanTable.fromRecords(rows).bytes, batch: rows.length };
  return { name, cr, op: "decode", decode: batch, field, value };
}

const D_OK: DecodePlanRecord = { seqLen: 9, writeLoc: 8, readPage0: 1, readPage1: 2 };

export const BAD_CASES: readonly BadCase[] = [
  prefillCase("seqLen 0", 4, [C4_OK, { ...C4_OK, seqLen: 0 }], [W_OK], "planC[1].seqLen", 0),
  prefillCase("seqLen not a multiple of cr", 4, [{ ...C4_OK, seqLen: 6 }], [], "planC[0].seqLen", 6),
  prefillCase("c128 seqLen not a multiple of 128", 128, [{ ...C4_OK, seqLen: 64 }], [], "planC[0].seqLen", 64),
  prefillCase("bufferLen above the window", 4, [{ ...C4_RING, bufferLen: 9 }], [], "planC[0].bufferLen", 9),
  prefillCase("readPage0 rows past the state", 4, [{ ...C4_RING, readPage0: 16 }], [], "planC[0].readPage0", 16),
  prefillCase("readPage0 negative", 4, [{ ...C4_RING, readPage0: -1 }], [], "planC[0].readPage0", -1),
  prefillCase("readPage1 rows past the state", 4, [{ ...C4_RING, readPage1: 16 }], [], "planC[0].readPage1", 16),
  prefillCase(
    "c128 readPage1 rows past the state",
    128,
    [{ seqLen: 256, raggedId: 10, bufferLen: 117, readPage0: -1, readPage1: 4 }],
    [],
    "planC[0].readPage1",
    4,
  ),
  prefillCase("ragged rows before row 0", 4, [{ ...C4_OK, raggedId: 6 }], [], "planC[0].raggedId", 6),
  prefillCase("ragged rows past the input", 4, [{ ...C4_OK, raggedId: 16 }], [], "planC[0].raggedId", 16),
  prefillCase(
    "write raggedId past the input",
    4,
    [C4_OK],
    [W_OK, { raggedId: 16, writeLoc: 0 }],
    "planW[1].raggedId",
    16,
  ),
  prefillCase("write writeLoc past the state", 4, [C4_OK], [{ raggedId: 0, writeLoc: 64 }], "planW[0].writeLoc", 64),
  prefillCase("write writeLoc negative", 4, [], [{ raggedId: 0, writeLoc: -2 }], "planW[0].writeLoc", -2),
  decodeCase("decode seqLen 0", 4, [D_OK, { ...D_OK, seqLen: 0 }], "planD[1].seqLen", 0),
  decodeCase("decode writeLoc past the state", 4, [{ ...D_OK, writeLoc: 64 }], "planD[0].writeLoc", 64),
  decodeCase("decode readPage0 past the state", 4, [{ ...D_OK, seqLen: 12, readPage0: 16 }], "planD[0].readPage0", 16),
  decodeCase("decode readPage1 negative", 4, [{ ...D_OK, seqLen: 12, readPage1: -1 }], "planD[0].readPage1", -1),
  decodeCase(
    "c128 decode readPage1 past the state",
    128,
    [{ seqLen: 128, writeLoc: 1, readPage0: 0, readPage1: 4 }],
    "planD[0].readPage1",
    4,
  ),
];

/** Rows the rules must accept: the masked c4 overlap (q = 3) reads no page, a non-compressing decode row none. */
export const EDGE_OK: readonly BadCase[] = [
  prefillCase(
    "q = 3: readPage0 unused",
    4,
    [{ seqLen: 4, raggedId: 1, bufferLen: 6, readPage0: -1, readPage1: 0 }],
    [],
    "",
    0,
  ),
  prefillCase(
    "bufferLen = W: no ragged rows",
    4,
    [{ seqLen: 16, raggedId: 60000, bufferLen: 8, readPage0: 0, readPage1: 1 }],
    [],
    "",
    0,
  ),
  prefillCase(
    "padding rows skipped",
    4,
    [C4_OK, { seqLen: 0xffffffff, raggedId: 0, bufferLen: 0, readPage0: -1, readPage1: -1 }],
    [W_OK, { raggedId: 0xffffffff, writeLoc: -1 }],
    "",
    0,
  ),
  decodeCase("decode q = 3: readPage0 unused", 4, [{ seqLen: 4, writeLoc: 3, readPage0: -5, readPage1: 0 }], "", 0),
  decodeCase(
    "decode not compressing: pages unused",
    4,
    [{ seqLen: 7, writeLoc: 6, readPage0: -5, readPage1: 99 }],
    "",
    0,
  ),
  decodeCase("decode padding row", 4, [{ seqLen: 0xffffffff, writeLoc: -1, readPage0: -1, readPage1: -1 }], "", 0),
];
