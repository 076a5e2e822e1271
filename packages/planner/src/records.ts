/**
 * Byte-exact plan records (little-endian), as the compress and write kernels consume them.
 *
 *   CompressPlan (16 B): u32 seqLen | u16 raggedId | u16 bufferLen | i32 readPage0 | i32 readPage1
 *   WritePlan     (8 B): u32 raggedId (stage 0: ragged | batch << 16)  | i32 writeLoc
 *   DecodePlan   (16 B): u32 seqLen | i32 writeLoc | i32 readPage0 | i32 readPage1
 *
 * Tables keep the bytes in one buffer and read them through 32-bit views; they are plain `Uint8Array`s
 * underneath (`table.bytes`), so they can be copied to a device or hashed as they are.
 */
import { PlannerError } from "./errors.js";
import { INT32_MAX, requireInteger } from "./inputs.js";

export const COMPRESS_PLAN_BYTES = 16;
export const WRITE_PLAN_BYTES = 8;
export const DECODE_PLAN_BYTES = 16;

/** `seqLen` of an invalid CompressPlan: the only field `isInvalid` tests. */
export const INVALID_SEQ_LEN = 0xffffffff;
/** `raggedId` of an invalid WritePlan: the only field `isInvalid` tests. */
export const INVALID_RAGGED_ID = 0xffffffff;

export interface CompressPlanRecord {
  seqLen: number;
  raggedId: number;
  bufferLen: number;
  readPage0: number;
  readPage1: number;
}
export interface WritePlanRecord {
  raggedId: number;
  writeLoc: number;
}
export interface DecodePlanRecord {
  seqLen: number;
  writeLoc: number;
  readPage0: number;
  readPage1: number;
}

export const INVALID_COMPRESS_PLAN: Readonly<CompressPlanRecord> = Object.freeze({
  seqLen: INVALID_SEQ_LEN,
  raggedId: 0,
  bufferLen: 0,
  readPage0: -1,
  readPage1: -1,
});
export const INVALID_WRITE_PLAN: Readonly<WritePlanRecord> = Object.freeze({
  raggedId: INVALID_RAGGED_ID,
  writeLoc: -1,
});

const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;
const INT32_MIN = -INT32_MAX - 1;

/** Stage-0 packing of a write row's ragged id: ragged row in the low 16 bits, batch index in the high 16. */
export function packWriteRaggedId(raggedId: number, batchId: number): number {
  requireInteger("raggedId", raggedId, 0, U16_MAX);
  requireInteger("batchId", batchId, 0, U16_MAX);
  return (raggedId | (batchId << 16)) >>> 0;
}
export function unpackWriteRaggedId(packed: number): { raggedId: number; batchId: number } {
  requireInteger("packed", packed, 0, U32_MAX);
  return { raggedId: packed & U16_MAX, batchId: (packed >>> 16) & U16_MAX };
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function assertLittleEndianHost(): void {
  // The tables read and write through host-order typed arrays; the record format is little-endian.
  if (!LITTLE_ENDIAN_HOST) {
    throw new PlannerError(
      "RECORD_LAYOUT",
      "host endianness",
      "big-endian",
      "plan records are little-endian; this host is not supported",
    );
  }
}

/** Where a record field lives: a whole 32-bit word (unsigned or signed) or one 16-bit half of a word. */
interface RecordField {
  readonly name: string;
  readonly word: number;
  readonly kind: "u32" | "i32" | "lo16" | "hi16";
}

const FIELD_RANGE: Readonly<Record<RecordField["kind"], readonly [number, number]>> = {
  u32: [0, U32_MAX],
  i32: [INT32_MIN, INT32_MAX],
  lo16: [0, U16_MAX],
  hi16: [0, U16_MAX],
};

/** "00".."ff": toHex without Node's Buffer, so the planner also runs in a browser. */
const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** A table class: what the shared statics construct. */
interface PlanTableClass<T> {
  new (bytes: Uint8Array): T;
  readonly ROW_BYTES: number;
}

abstract class PlanTable<R> {
  /** A zeroed table of `rows` rows. */
  static allocate<T>(this: PlanTableClass<T>, rows: number): T {
    requireInteger("rows", rows, 0, Math.floor(Number.MAX_SAFE_INTEGER / this.ROW_BYTES));
    return new this(new Uint8Array(rows * this.ROW_BYTES));
  }
  /** A table holding `records`, in order (each record validated as `set` does). */
  static fromRecords<T extends PlanTable<R>, R>(this: PlanTableClass<T>, records: readonly R[]): T {
    if (!Array.isArray(records)) throw new PlannerError("INVALID_TYPE", "records", records, "must be an array");
    const t = new this(new Uint8Array(records.length * this.ROW_BYTES));
    for (let i = 0; i < records.length; i++) t.set(i, records[i]!);
    return t;
  }

  readonly bytes: Uint8Array;
  readonly rowCount: number;
  protected readonly u32: Uint32Array;
  protected readonly i32: Int32Array;
  private readonly rowWords: number;

  protected constructor(
    bytes: Uint8Array,
    rowBytes: number,
    protected readonly what: string,
  ) {
    assertLittleEndianHost();
    if (!(bytes instanceof Uint8Array)) {
      throw new PlannerError("INVALID_TYPE", `${what} bytes`, bytes, "must be a Uint8Array");
    }
    if (bytes.byteLength % rowBytes !== 0) {
      throw new PlannerError(
        "RECORD_LAYOUT",
        `${what}.byteLength`,
        bytes.byteLength,
        `must be a multiple of ${rowBytes} (one ${what} row is ${rowBytes} bytes)`,
      );
    }
    if (bytes.byteOffset % 4 !== 0) {
      // Copy rather than refuse: 32-bit views need 4-byte alignment.
      bytes = bytes.slice();
    }
    this.bytes = bytes;
    this.rowCount = bytes.byteLength / rowBytes;
    this.rowWords = rowBytes / 4;
    this.u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    this.i32 = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  }

  protected checkRow(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.rowCount) {
      throw new PlannerError("INDEX_OUT_OF_RANGE", "row", index, `must be an integer in [0, ${this.rowCount})`);
    }
  }

  /** Field `name` of a record given to `set`, refused unless an integer in [min, max] (never wrapped). */
  protected recordField(index: number, r: object, name: string, min: number, max: number): number {
    if (typeof r !== "object" || r === null) {
      throw new PlannerError("INVALID_TYPE", `${this.what}[${index}]`, r, "must be a record object");
    }
    return requireInteger(`${this.what}[${index}].${name}`, (r as Record<string, unknown>)[name], min, max);
  }

  /** The record's fields, in the order of the byte layout at the top of this file. */
  protected abstract readonly layout: readonly RecordField[];
  abstract isInvalid(index: number): boolean;

  row(index: number): R {
    this.checkRow(index);
    const base = (index * this.rowWords) | 0;
    const out: Record<string, number> = {};
    for (const f of this.layout) {
      const word = this.u32[base + f.word]!;
      out[f.name] =
        f.kind === "i32" ? word | 0 : f.kind === "lo16" ? word & 0xffff : f.kind === "hi16" ? word >>> 16 : word;
    }
    return out as R;
  }

  /** Writes record `r` at row `index`; every field must be an integer its slot holds (never wrapped). */
  set(index: number, r: R): void {
    this.checkRow(index);
    const base = (index * this.rowWords) | 0;
    for (const f of this.layout) {
      const [min, max] = FIELD_RANGE[f.kind];
      const v = this.recordField(index, r as object, f.name, min, max);
      const at = base + f.word;
      if (f.kind === "i32") this.i32[at] = v;
      else if (f.kind === "lo16") this.u32[at] = ((this.u32[at]! & 0xffff0000) | v) >>> 0;
      else if (f.kind === "hi16") this.u32[at] = ((this.u32[at]! & 0xffff) | (v << 16)) >>> 0;
      else this.u32[at] = v;
    }
  }

  /** Word view (4 words per compress/decode row, 2 per write row) for hot loops; callers own the layout. */
  get words(): Uint32Array {
    return this.u32;
  }
  get signedWords(): Int32Array {
    return this.i32;
  }

  /** Every row, decoded (invalid rows included, as their sentinel values). */
  records(): R[] {
    const out: R[] = [];
    for (let i = 0; i < this.rowCount; i++) out.push(this.row(i));
    return out;
  }

  /** Rows that are not the invalid sentinel. */
  validRecords(): R[] {
    const out: R[] = [];
    for (let i = 0; i < this.rowCount; i++) if (!this.isInvalid(i)) out.push(this.row(i));
    return out;
  }

  validCount(): number {
    let n = 0;
    for (let i = 0; i < this.rowCount; i++) if (!this.isInvalid(i)) n++;
    return n;
  }

  /** The exact bytes as lowercase hex, rows concatenated. */
  toHex(): string {
    let hex = "";
    for (const byte of this.bytes) hex += HEX_BYTES[byte];
    return hex;
  }

  [Symbol.iterator](): Iterator<R> {
    return this.records()[Symbol.iterator]();
  }
}

const COMPRESS_LAYOUT: readonly RecordField[] = [
  { name: "seqLen", word: 0, kind: "u32" },
  { name: "raggedId", word: 1, kind: "lo16" },
  { name: "bufferLen", word: 1, kind: "hi16" },
  { name: "readPage0", word: 2, kind: "i32" },
  { name: "readPage1", word: 3, kind: "i32" },
];

const WRITE_LAYOUT: readonly RecordField[] = [
  { name: "raggedId", word: 0, kind: "u32" },
  { name: "writeLoc", word: 1, kind: "i32" },
];

const DECODE_LAYOUT: readonly RecordField[] = [
  { name: "seqLen", word: 0, kind: "u32" },
  { name: "writeLoc", word: 1, kind: "i32" },
  { name: "readPage0", word: 2, kind: "i32" },
  { name: "readPage1", word: 3, kind: "i32" },
];

export class CompressPlanTable extends PlanTable<CompressPlanRecord> {
  static readonly ROW_BYTES = COMPRESS_PLAN_BYTES;
  protected readonly layout = COMPRESS_LAYOUT;
  constructor(bytes: Uint8Array) {
    super(bytes, COMPRESS_PLAN_BYTES, "CompressPlan");
  }
  isInvalid(index: number): boolean {
    this.checkRow(index);
    return this.u32[index * 4] === INVALID_SEQ_LEN;
  }
  setInvalid(index: number): void {
    this.set(index, INVALID_COMPRESS_PLAN);
  }
}

export class WritePlanTable extends PlanTable<WritePlanRecord> {
  static readonly ROW_BYTES = WRITE_PLAN_BYTES;
  protected readonly layout = WRITE_LAYOUT;
  constructor(bytes: Uint8Array) {
    super(bytes, WRITE_PLAN_BYTES, "WritePlan");
  }
  isInvalid(index: number): boolean {
    this.checkRow(index);
    return this.u32[index * 2] === INVALID_RAGGED_ID;
  }
  setInvalid(index: number): void {
    this.set(index, INVALID_WRITE_PLAN);
  }
}

export class DecodePlanTable extends PlanTable<DecodePlanRecord> {
  static readonly ROW_BYTES = DECODE_PLAN_BYTES;
  protected readonly layout = DECODE_LAYOUT;
  constructor(bytes: Uint8Array) {
    super(bytes, DECODE_PLAN_BYTES, "DecodePlan");
  }
  /** Every decode request gets a plan: there is no invalid sentinel. */
  isInvalid(_index: number): boolean {
    return false;
  }
}
