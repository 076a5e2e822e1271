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

  abstract row(index: number): R;
  abstract isInvalid(index: number): boolean;
  abstract set(index: number, r: R): void;

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
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString("hex");
  }

  [Symbol.iterator](): Iterator<R> {
    return this.records()[Symbol.iterator]();
  }
}

export class CompressPlanTable extends PlanTable<CompressPlanRecord> {
  constructor(bytes: Uint8Array) {
    super(bytes, COMPRESS_PLAN_BYTES, "CompressPlan");
  }
  static readonly ROW_BYTES = COMPRESS_PLAN_BYTES;
  row(index: number): CompressPlanRecord {
    this.checkRow(index);
    const w = index * 4;
    const word1 = this.u32[w + 1]!;
    return {
      seqLen: this.u32[w]!,
      raggedId: word1 & 0xffff,
      bufferLen: word1 >>> 16,
      readPage0: this.i32[w + 2]!,
      readPage1: this.i32[w + 3]!,
    };
  }
  isInvalid(index: number): boolean {
    this.checkRow(index);
    return this.u32[index * 4] === INVALID_SEQ_LEN;
  }
  set(index: number, r: CompressPlanRecord): void {
    this.checkRow(index);
    const w = index * 4;
    this.u32[w] = this.recordField(index, r, "seqLen", 0, U32_MAX);
    const raggedId = this.recordField(index, r, "raggedId", 0, U16_MAX);
    this.u32[w + 1] = (raggedId | (this.recordField(index, r, "bufferLen", 0, U16_MAX) << 16)) >>> 0;
    this.i32[w + 2] = this.recordField(index, r, "readPage0", INT32_MIN, INT32_MAX);
    this.i32[w + 3] = this.recordField(index, r, "readPage1", INT32_MIN, INT32_MAX);
  }
  setInvalid(index: number): void {
    this.set(index, INVALID_COMPRESS_PLAN);
  }
}

export class WritePlanTable extends PlanTable<WritePlanRecord> {
  constructor(bytes: Uint8Array) {
    super(bytes, WRITE_PLAN_BYTES, "WritePlan");
  }
  static readonly ROW_BYTES = WRITE_PLAN_BYTES;
  row(index: number): WritePlanRecord {
    this.checkRow(index);
    return { raggedId: this.u32[index * 2]!, writeLoc: this.i32[index * 2 + 1]! };
  }
  isInvalid(index: number): boolean {
    this.checkRow(index);
    return this.u32[index * 2] === INVALID_RAGGED_ID;
  }
  set(index: number, r: WritePlanRecord): void {
    this.checkRow(index);
    this.u32[index * 2] = this.recordField(index, r, "raggedId", 0, U32_MAX);
    this.i32[index * 2 + 1] = this.recordField(index, r, "writeLoc", INT32_MIN, INT32_MAX);
  }
  setInvalid(index: number): void {
    this.set(index, INVALID_WRITE_PLAN);
  }
}

export class DecodePlanTable extends PlanTable<DecodePlanRecord> {
  constructor(bytes: Uint8Array) {
    super(bytes, DECODE_PLAN_BYTES, "DecodePlan");
  }
  static readonly ROW_BYTES = DECODE_PLAN_BYTES;
  row(index: number): DecodePlanRecord {
    this.checkRow(index);
    const w = index * 4;
    return {
      seqLen: this.u32[w]!,
      writeLoc: this.i32[w + 1]!,
      readPage0: this.i32[w + 2]!,
      readPage1: this.i32[w + 3]!,
    };
  }
  /** Every decode request gets a plan: there is no invalid sentinel. */
  isInvalid(_index: number): boolean {
    return false;
  }
  set(index: number, r: DecodePlanRecord): void {
    this.checkRow(index);
    const w = index * 4;
    this.u32[w] = this.recordField(index, r, "seqLen", 0, U32_MAX);
    this.i32[w + 1] = this.recordField(index, r, "writeLoc", INT32_MIN, INT32_MAX);
    this.i32[w + 2] = this.recordField(index, r, "readPage0", INT32_MIN, INT32_MAX);
    this.i32[w + 3] = this.recordField(index, r, "readPage1", INT32_MIN, INT32_MAX);
  }
}
