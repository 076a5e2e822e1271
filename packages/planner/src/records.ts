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

/** Stage-0 packing of a write row's ragged id: ragged row in the low 16 bits, batch index in the high 16. */
export function packWriteRaggedId(raggedId: number, batchId: number): number {
  return ((raggedId & 0xffff) | ((batchId & 0xffff) << 16)) >>> 0;
}
export function unpackWriteRaggedId(packed: number): { raggedId: number; batchId: number } {
  return { raggedId: packed & 0xffff, batchId: (packed >>> 16) & 0xffff };
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

abstract class PlanTable<R> {
  readonly bytes: Uint8Array;
  readonly rowCount: number;
  protected readonly u32: Uint32Array;
  protected readonly i32: Int32Array;

  protected constructor(bytes: Uint8Array, rowBytes: number, what: string) {
    assertLittleEndianHost();
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

  abstract row(index: number): R;
  abstract isInvalid(index: number): boolean;

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
  static allocate(rows: number): CompressPlanTable {
    return new CompressPlanTable(new Uint8Array(rows * COMPRESS_PLAN_BYTES));
  }
  static fromRecords(records: readonly CompressPlanRecord[]): CompressPlanTable {
    const t = CompressPlanTable.allocate(records.length);
    records.forEach((r, i) => t.set(i, r));
    return t;
  }
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
    this.u32[w] = r.seqLen >>> 0;
    this.u32[w + 1] = ((r.raggedId & 0xffff) | ((r.bufferLen & 0xffff) << 16)) >>> 0;
    this.i32[w + 2] = r.readPage0 | 0;
    this.i32[w + 3] = r.readPage1 | 0;
  }
  setInvalid(index: number): void {
    this.set(index, INVALID_COMPRESS_PLAN);
  }
  /** Word view (4 words per row) for hot loops; callers own the layout. */
  get words(): Uint32Array {
    return this.u32;
  }
  get signedWords(): Int32Array {
    return this.i32;
  }
}

export class WritePlanTable extends PlanTable<WritePlanRecord> {
  constructor(bytes: Uint8Array) {
    super(bytes, WRITE_PLAN_BYTES, "WritePlan");
  }
  static allocate(rows: number): WritePlanTable {
    return new WritePlanTable(new Uint8Array(rows * WRITE_PLAN_BYTES));
  }
  static fromRecords(records: readonly WritePlanRecord[]): WritePlanTable {
    const t = WritePlanTable.allocate(records.length);
    records.forEach((r, i) => t.set(i, r));
    return t;
  }
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
    this.u32[index * 2] = r.raggedId >>> 0;
    this.i32[index * 2 + 1] = r.writeLoc | 0;
  }
  setInvalid(index: number): void {
    this.set(index, INVALID_WRITE_PLAN);
  }
  get words(): Uint32Array {
    return this.u32;
  }
  get signedWords(): Int32Array {
    return this.i32;
  }
}

export class DecodePlanTable extends PlanTable<DecodePlanRecord> {
  constructor(bytes: Uint8Array) {
    super(bytes, DECODE_PLAN_BYTES, "DecodePlan");
  }
  static allocate(rows: number): DecodePlanTable {
    return new DecodePlanTable(new Uint8Array(rows * DECODE_PLAN_BYTES));
  }
  static fromRecords(records: readonly DecodePlanRecord[]): DecodePlanTable {
    const t = DecodePlanTable.allocate(records.length);
    records.forEach((r, i) => t.set(i, r));
    return t;
  }
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
    this.u32[w] = r.seqLen >>> 0;
    this.i32[w + 1] = r.writeLoc | 0;
    this.i32[w + 2] = r.readPage0 | 0;
    this.i32[w + 3] = r.readPage1 | 0;
  }
  get words(): Uint32Array {
    return this.u32;
  }
  get signedWords(): Int32Array {
    return this.i32;
  }
}
