/**
 * Slot and location math of the DSV4 pools (docs/reference/pools-and-sizing.md §6). Units: locations and rows are
 * indices, never bytes. The sentinel row of an offline compress-state pool is its last row, addressed as -1
 * (docs/reference/pools-and-sizing.md §5.3): every negative input location maps to -1.
 */
import { MemoryPoolError, requireInt } from "./errors.js";

const INT32_MAX = 0x7fffffff;

/**
 * A row the kernels index with: SGLang and our kernels hold state rows and locations as int32, so a row past
 * 2^31 - 1 is refused, naming the input that drove it there, rather than returned (it would wrap where used).
 */
function int32Row(field: string, value: number, row: number, how: string): number {
  if (row <= INT32_MAX) return row;
  throw new MemoryPoolError("INT32_OVERFLOW", field, value, `gives row ${how} = ${row}, past int32 (${INT32_MAX})`, {
    row,
    max: INT32_MAX,
  });
}

/** -1 addresses the sentinel (always-cleared) last row of a compress-state pool. */
export const SENTINEL_STATE_ROW = -1;

/**
 * SWA location -> c4 compress-state row (paged ring): each SWA page of `swaPageSize` tokens owns one ring of
 * `ringSize` rows, so `row = (swaLoc // swaPageSize) * ringSize + swaLoc mod ringSize`. Negative -> -1.
 */
export function swaLocToC4StateRow(swaLoc: number, swaPageSize: number, ringSize: number): number {
  requireInt("swaPageSize", swaPageSize, 1);
  return ringRow("swaLoc", swaLoc, ringSize, (loc) => Math.floor(loc / swaPageSize), `(swaLoc // ${swaPageSize})`);
}

/**
 * (request slot, position) -> offline c128 compress-state row (request-scoped ring):
 * `reqIdx * ringSize + pos mod ringSize`. Negative position -> -1.
 */
export function c128OfflineStateRow(reqIdx: number, position: number, ringSize: number): number {
  requireInt("reqIdx", reqIdx, 0);
  return ringRow("position", position, ringSize, () => reqIdx, String(reqIdx), "reqIdx", reqIdx);
}

/**
 * Row `loc mod ringSize` of ring `ringOf(loc)`; a negative location addresses the sentinel row. `ringText` says how
 * the ring is found, and the int32 refusal names `field` (default the location).
 */
function ringRow(
  locField: string,
  loc: number,
  ringSize: number,
  ringOf: (loc: number) => number,
  ringText: string,
  field = locField,
  value = loc,
): number {
  requireInt("ringSize", ringSize, 1);
  requireInt(locField, loc, Number.MIN_SAFE_INTEGER);
  if (loc < 0) return SENTINEL_STATE_ROW;
  const how = `${ringText} × ringSize ${ringSize} + ${locField} mod ${ringSize}`;
  return int32Row(field, value, ringOf(loc) * ringSize + (loc % ringSize), how);
}

/** Rows `[start, end)` cleared (kv 0, score -inf) when request `reqIdx` is freed: its whole c128 ring. */
export function c128OfflineRequestRows(reqIdx: number, ringSize: number): { startRow: number; endRow: number } {
  requireInt("reqIdx", reqIdx, 0);
  requireInt("ringSize", ringSize, 1);
  // endRow is exclusive: the last row, endRow - 1, must fit int32.
  int32Row("reqIdx", reqIdx, (reqIdx + 1) * ringSize - 1, `(reqIdx + 1) × ringSize ${ringSize} - 1`);
  return { startRow: reqIdx * ringSize, endRow: (reqIdx + 1) * ringSize };
}

/** Online c128 without MTP: one accumulator row per request slot, `row = reqIdx` (bank 0; see banks.ts). */
export function c128OnlineStateRow(reqIdx: number): number {
  requireInt("reqIdx", reqIdx, 0);
  return int32Row("reqIdx", reqIdx, reqIdx, "reqIdx");
}

/** Unified-KV (Gen C) c4 state row: `reqIdx * ringSize + pos mod ringSize`. */
export function unifiedC4StateRow(reqIdx: number, position: number, ringSize: number): number {
  return c128OfflineStateRow(reqIdx, position, ringSize);
}

/**
 * HiSparse: full location `f` produces a c4 compressed entry iff `(f + 1) mod 4 == 0` (the 4th token of a chunk
 * completes it), and that entry's index is `f // 4`. Returns null when `f` completes no entry.
 */
export function fullLocToC4CompressedIndex(fullLoc: number): number | null {
  requireInt("fullLoc", fullLoc, 0);
  return (fullLoc + 1) % 4 === 0 ? Math.floor(fullLoc / 4) : null;
}
