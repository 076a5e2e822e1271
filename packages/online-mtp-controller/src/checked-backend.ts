/**
 * The public surface both backends share: every call is validated here (the kernel parameters by validate.ts, the
 * host copies and allocations below) before the backend's own implementation runs, so the CPU and the GPU refuse
 * the same inputs with the same error and nothing is launched or copied for a refused call.
 */
import type {
  CommitPendingParams,
  IndexVector,
  MarkPendingParams,
  MatrixF32,
  OnlineDecodeParams,
  OnlineMtpBackend,
  OnlinePrefillParams,
  ResetSlotsParams,
  StateBuffer,
  WritePrefixParams,
} from "./backend.js";
import { I32_MAX, I32_MIN, check, checkFiniteElements, checkInt, checkOneOf, checkTypedArray } from "./check.js";
import { STATE_ROW_ELEMS, type StateDtype } from "./constants.js";
import {
  checkHandle,
  validateCommitPending,
  validateMarkPending,
  validateOnlineDecode,
  validateOnlinePrefill,
  validateResetSlots,
  validateWritePrefix,
} from "./validate.js";

const STATE_DTYPES: readonly StateDtype[] = ["fp32", "bf16"];

/** A backend's launches; `CheckedBackend` runs one only after validate.ts accepted its parameters. */
export type BackendKernels = Pick<
  OnlineMtpBackend,
  "writePrefix" | "markPending" | "commitPending" | "resetSlots" | "onlineDecode" | "onlinePrefill"
>;

/** How a backend keeps and moves its buffers; called only with checked arguments. */
export interface BackendStorage {
  newIndex(values: Int32Array): IndexVector;
  storeIndex(dst: IndexVector, values: Int32Array): void;
  /** `values` null: zero-filled. */
  newMatrix(values: Float32Array | null, rows: number, cols: number): MatrixF32;
  newState(rows: number, dtype: StateDtype): StateBuffer;
  loadIndex(v: IndexVector): Int32Array;
  loadMatrix(m: MatrixF32): Float32Array;
  loadStateBits(s: StateBuffer, firstRow: number, count: number): Uint32Array | Uint16Array;
  loadStateRows(s: StateBuffer, firstRow: number, count: number): Float32Array;
  storeStateRows(s: StateBuffer, firstRow: number, values: Float32Array): void;
}

export abstract class CheckedBackend implements OnlineMtpBackend {
  abstract readonly name: string;

  /** Host copies of the vectors the host filled (uploadIndex, writeIndex); kernels never write into those. */
  private readonly hostCopies = new WeakMap<IndexVector, Int32Array>();

  uploadIndex(values: Int32Array): IndexVector {
    checkTypedArray(values, Int32Array, "values");
    const v = this.storage.newIndex(values);
    this.hostCopies.set(v, values.slice());
    return v;
  }
  writeIndex(dst: IndexVector, values: Int32Array): void {
    checkHandle(dst, "index", "dst");
    checkTypedArray(values, Int32Array, "values");
    check(values.length <= dst.length, "SHAPE", "values.length", values.length, `must be <= ${dst.length}`);
    this.storage.storeIndex(dst, values);
    const copy = this.hostCopies.get(dst);
    if (copy) copy.set(values);
    else if (values.length === dst.length) this.hostCopies.set(dst, values.slice());
  }
  hostIndex(v: IndexVector): Int32Array | undefined {
    return this.hostCopies.get(v);
  }
  allocIndex(length: number, value: number): IndexVector {
    checkInt(length, 0, I32_MAX, "SHAPE", "length", "must be a non-negative int32 element count");
    checkInt(value, I32_MIN, I32_MAX, "INVALID_ARGUMENT", "value", "must be an int32 (never wrapped)");
    return this.storage.newIndex(new Int32Array(length).fill(value));
  }
  uploadMatrix(values: Float32Array, rows: number, cols: number): MatrixF32 {
    checkMatrixShape(rows, cols);
    checkTypedArray(values, Float32Array, "values");
    check(values.length === rows * cols, "SHAPE", "values.length", values.length, `must be rows·cols = ${rows * cols}`);
    checkFiniteElements(values, "values");
    return this.storage.newMatrix(values, rows, cols);
  }
  allocMatrix(rows: number, cols: number): MatrixF32 {
    checkMatrixShape(rows, cols);
    return this.storage.newMatrix(null, rows, cols);
  }
  allocState(rows: number, dtype: StateDtype): StateBuffer {
    checkInt(rows, 0, I32_MAX, "STATE_ROWS", "rows", "must be a non-negative int32 row count");
    checkOneOf(dtype, STATE_DTYPES, "DTYPE", "dtype");
    return this.storage.newState(rows, dtype);
  }

  writePrefix(p: WritePrefixParams): void {
    if (validateWritePrefix(p)) this.kernels.writePrefix(p);
  }
  markPending(p: MarkPendingParams): void {
    if (validateMarkPending(p)) this.kernels.markPending(p);
  }
  commitPending(p: CommitPendingParams): void {
    if (validateCommitPending(p)) this.kernels.commitPending(p);
  }
  resetSlots(p: ResetSlotsParams): void {
    if (validateResetSlots(p)) this.kernels.resetSlots(p);
  }
  onlineDecode(p: OnlineDecodeParams): void {
    if (validateOnlineDecode(p)) this.kernels.onlineDecode(p);
  }
  onlinePrefill(p: OnlinePrefillParams): void {
    if (validateOnlinePrefill(p)) this.kernels.onlinePrefill(p);
  }

  readIndex(v: IndexVector): Int32Array {
    checkHandle(v, "index", "v");
    return this.storage.loadIndex(v);
  }
  readMatrix(m: MatrixF32): Float32Array {
    checkHandle(m, "matrix", "m");
    return this.storage.loadMatrix(m);
  }
  readStateRows(s: StateBuffer, firstRow: number, count: number): Float32Array {
    checkRowRange(s, firstRow, count);
    return this.storage.loadStateRows(s, firstRow, count);
  }
  readStateBits(s: StateBuffer, firstRow: number, count: number): Uint32Array | Uint16Array {
    checkRowRange(s, firstRow, count);
    return this.storage.loadStateBits(s, firstRow, count);
  }
  writeStateRows(s: StateBuffer, firstRow: number, values: Float32Array): void {
    checkTypedArray(values, Float32Array, "values");
    const count = values.length / STATE_ROW_ELEMS;
    check(
      Number.isInteger(count),
      "SHAPE",
      "values.length",
      values.length,
      `must be a whole number of rows (${STATE_ROW_ELEMS} elements each)`,
    );
    checkRowRange(s, firstRow, count);
    this.storage.storeStateRows(s, firstRow, values);
  }
  abstract synchronize(): void;
  protected abstract readonly storage: BackendStorage;
  protected abstract readonly kernels: BackendKernels;
}

function checkMatrixShape(rows: number, cols: number): void {
  checkInt(rows, 0, I32_MAX, "SHAPE", "rows", "must be a non-negative int32");
  checkInt(cols, 0, I32_MAX, "SHAPE", "cols", "must be a non-negative int32");
  check(rows * cols <= I32_MAX, "SHAPE", "rows·cols", rows * cols, "must be at most 2^31 − 1 elements");
}

function checkRowRange(s: StateBuffer, firstRow: number, count: number): void {
  checkHandle(s, "state", "s");
  checkInt(firstRow, 0, I32_MAX, "STATE_ROWS", "firstRow", "must be a non-negative integer row");
  checkInt(count, 0, I32_MAX, "STATE_ROWS", "count", "must be a non-negative integer row count");
  check(firstRow + count <= s.rows, "STATE_ROWS", "rows", [firstRow, count], `must lie in [0, ${s.rows})`);
}
