/**
 * Bank layout of the online state buffer (docs/reference/online-mtp.md §7.2). The sizes come from @dsv4-kv/memory-pool
 * (docs/reference/pools-and-sizing.md): bank stride O = N + 2, rows = O·(1 + Dmax), row(r, b) = r + b·O.
 */
import { checkInt } from "./check.js";
import { MAX_VERIFY_TOKENS } from "./constants.js";

/** Row of request slot `r` in bank `b` (0 = committed, 1..Dmax = draft banks), given the stride O. */
export function bankRow(r: number, b: number, bankStrideRows: number): number {
  checkInt(bankStrideRows, 1, 0x7fffffff, "BANK_STRIDE", "bankStrideRows", "must be a positive integer");
  checkInt(
    r,
    0,
    bankStrideRows - 1,
    "REQ_INDEX",
    "r",
    `must be a request slot in [0, bankStrideRows) = [0, ${bankStrideRows})`,
  );
  checkInt(b, 0, MAX_VERIFY_TOKENS, "DRAFT_TOKENS", "b", `must be a bank in [0, ${MAX_VERIFY_TOKENS}]`);
  return r + b * bankStrideRows;
}
