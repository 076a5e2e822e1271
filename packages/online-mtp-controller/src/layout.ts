/**
 * Bank layout of the online state buffer (§3.3), taken from @dsv4-kv/memory-pool (spec memory-pool §5.5) rather
 * than restated: bank stride O = N + 2, rows = O·(1 + Dmax), row(r, b) = r + b·O.
 */
import { onlineC128BankStrideRows, onlineC128StateRow, onlineC128TotalRows } from "@dsv4-kv/memory-pool";

export { onlineC128BankStrideRows, onlineC128StateRow, onlineC128TotalRows };

/** Row of request slot `r` in bank `b`, given the stride O (no range checks: the hot path validates up front). */
export function bankRow(r: number, b: number, bankStrideRows: number): number {
  return r + b * bankStrideRows;
}
