/**
 * The planner kernels' status records (native/planner/plan_kernels.cuh, PlanStatus), read back from the device. The
 * codes are PlanErr's (the generated src/plan-err.ts); what each one means to a caller, the PlannerError it stands
 * for, is the planner package's (`@dsv4-kv/planner/gpu`).
 */
import { KernelsCudaError } from "./errors.js";

/**
 * Status region after the tables: 256 records of 48 bytes (code, index, value, aux, numCompress, numWrite, grid),
 * one per launched block for prefill and one per warp for decode, each rewritten by every launch; record 0's
 * `grid` says how many to read. Device-resident calls need a status buffer of this size; it never needs zeroing.
 */
export const PLAN_STATUS_RECORD_BYTES = 48;
export const PLAN_STATUS_BYTES = 256 * PLAN_STATUS_RECORD_BYTES;

export interface PlanStatus {
  code: number;
  index: number;
  value: number;
  aux: number;
  numCompress: number;
  numWrite: number;
}

/** Decodes a status region read back from the device: a Uint8Array of at least PLAN_STATUS_BYTES. */
export function decodePlanStatus(bytes: Uint8Array): PlanStatus {
  if (!(bytes instanceof Uint8Array))
    throw new KernelsCudaError("INVALID_TYPE", "bytes", bytes, "must be a Uint8Array (the status region read back)");
  if (bytes.byteLength < PLAN_STATUS_BYTES)
    throw new KernelsCudaError(
      "DEVICE_BUFFER",
      "bytes.byteLength",
      bytes.byteLength,
      `must be at least PLAN_STATUS_BYTES = ${PLAN_STATUS_BYTES} (256 records of ${PLAN_STATUS_RECORD_BYTES} bytes)`,
    );
  const v = new DataView(bytes.buffer, bytes.byteOffset, PLAN_STATUS_BYTES);
  const R = PLAN_STATUS_RECORD_BYTES;
  const grid = Math.min(256, Math.max(1, v.getInt32(32, true)));
  let at = 0;
  for (let b = 0; b < grid; b++) {
    if (v.getInt32(b * R, true) !== 0) {
      at = b * R;
      break;
    }
  }
  return {
    code: v.getInt32(at, true),
    index: v.getInt32(at + 4, true),
    value: Number(v.getBigInt64(at + 8, true)),
    aux: Number(v.getBigInt64(at + 16, true)),
    numCompress: v.getInt32(24, true),
    numWrite: v.getInt32(28, true),
  };
}
