/**
 * Online c128 compress-state layout with MTP banks (docs/reference/pools-and-sizing.md §5.3, §6.3, §8.4).
 *
 * With `SGLANG_OPT_USE_ONLINE_COMPRESS` the c128 compress state is a running (max, sum, kv) accumulator per
 * request instead of a ring of raw tokens: ring size 1, one row per request slot. With
 * `SGLANG_EXPERIMENTAL_ONLINE_C128_MTP` the pool keeps `maxDraftTokens` extra copies ("banks") of that table so a
 * verify pass can record the accumulator after each draft token and commit the accepted prefix afterwards:
 *
 *   bank 0                     committed state (what the request has after its last accepted token)
 *   bank k (1..maxDraftTokens) state after the k-th draft token of the current verify (a per-draft prefix state)
 *
 * Every bank has the same number of rows, `bankStrideRows = statePoolSize + ringSize(1) + 1`, the pool's logical
 * row count (`size + ringSize + 1`: the request rows, one dummy ring, one sentinel row). Bank k starts at row
 * `k * bankStrideRows` (upstream `mtp_state_slot_offset = logical rows`), so request q's row in bank k is
 * `k * bankStrideRows + q`. The bank address formula is inferred from the allocation layout
 * (docs/reference/pools-and-sizing.md §14).
 *
 * Units: every `...Rows` value counts rows of one layer's state tensor; every `...Bytes` value is bytes.
 */
import { MemoryPoolError, requireInt, requireKnownKeys } from "./errors.js";

/** The online c128 ring holds one accumulator row per request (docs/reference/pools-and-sizing.md §4.1). */
export const ONLINE_C128_RING_SIZE = 1;

/**
 * Elements in one online c128 state row: `[max (A) | sum (A) | kv (A)]` with A = attention head dim
 * (docs/reference/pools-and-sizing.md §3).
 */
export function onlineC128RowElements(attentionHeadDim: number): number {
  requireInt("attentionHeadDim", attentionHeadDim, 1);
  return 3 * attentionHeadDim;
}

/** Bytes of one online c128 state row (6144 B for A = 512 in fp32). */
export function onlineC128RowBytes(attentionHeadDim: number, stateDtypeBytes: number): number {
  requireStateDtypeBytes(stateDtypeBytes);
  return onlineC128RowElements(attentionHeadDim) * stateDtypeBytes;
}

/**
 * Banks beyond the committed bank 0: one per draft token the verify can write (upstream
 * `online_mtp_max_draft_tokens`, the server's `max_speculative_num_draft_tokens`, 0 without MTP).
 */
export function onlineC128DraftBankCount(maxDraftTokens: number): number {
  requireInt("maxDraftTokens", maxDraftTokens, 0);
  return maxDraftTokens;
}

/**
 * Rows in one bank = rows between the starts of consecutive banks.
 * `statePoolSize` is the c128 state pool size in online mode, i.e. the number of request slots
 * (`max(given, numReqSlots)`, docs/reference/pools-and-sizing.md §5.4); +1 for the one-row dummy ring, +1 for the
 * sentinel row.
 */
export function onlineC128BankStrideRows(statePoolSize: number): number {
  requireInt("statePoolSize", statePoolSize, 0);
  return statePoolSize + ONLINE_C128_RING_SIZE + 1;
}

/** Total rows of one layer's online c128 state tensor: `bankStrideRows * (1 + draftBanks)`. */
export function onlineC128TotalRows(statePoolSize: number, maxDraftTokens: number): number {
  return onlineC128BankStrideRows(statePoolSize) * (1 + onlineC128DraftBankCount(maxDraftTokens));
}

/** First row of bank `bank` (0 = committed, 1..maxDraftTokens = after draft k). */
export function onlineC128BankOffsetRows(bank: number, statePoolSize: number, maxDraftTokens: number): number {
  requireBank(bank, maxDraftTokens);
  return bank * onlineC128BankStrideRows(statePoolSize);
}

/**
 * State row of request slot `reqIdx` in bank `bank`: `bank * bankStrideRows + reqIdx`.
 * `reqIdx` must be a request slot, `0 <= reqIdx < statePoolSize` (the dummy ring and the sentinel row that follow
 * are not request rows). Bank 0 row of request q is q, as in the non-MTP online pool.
 */
export function onlineC128StateRow(
  reqIdx: number,
  bank: number,
  statePoolSize: number,
  maxDraftTokens: number,
): number {
  requireInt("reqIdx", reqIdx, 0);
  requireInt("statePoolSize", statePoolSize, 0);
  if (reqIdx >= statePoolSize) {
    throw new MemoryPoolError(
      "OUT_OF_RANGE",
      "reqIdx",
      reqIdx,
      `must be a request slot below statePoolSize = ${statePoolSize}`,
      { statePoolSize },
    );
  }
  return onlineC128BankOffsetRows(bank, statePoolSize, maxDraftTokens) + reqIdx;
}

/** The whole online c128 layout of one layer, for callers that want every number at once. */
export interface OnlineC128BankLayout {
  /** Request slots covered by every bank (rows 0..statePoolSize-1 of each bank). */
  statePoolSize: number;
  /** Draft banks after the committed bank 0. */
  draftBankCount: number;
  /** Rows per bank (distance between bank starts). */
  bankStrideRows: number;
  /** `bankOffsetRows[k]` = first row of bank k, k = 0..draftBankCount. */
  bankOffsetRows: number[];
  /** Rows of the whole tensor = bankStrideRows * (1 + draftBankCount). */
  totalRows: number;
  /** Elements per row (3 * attention head dim). */
  rowElements: number;
  /** Bytes per row. */
  rowBytes: number;
  /** Bytes per bank (bankStrideRows * rowBytes). */
  bankStrideBytes: number;
  /** Bytes of one layer's tensor. */
  bytesPerLayer: number;
}

export interface OnlineC128BankLayoutOptions {
  statePoolSize: number;
  maxDraftTokens: number;
  /** Attention head dim A = qk_nope + qk_rope; 512 for DeepSeek-V4. */
  attentionHeadDim?: number;
  /** 4 (fp32). Online state must stay fp32 upstream (V-D1); 2 is accepted here only for what-if arithmetic. */
  stateDtypeBytes?: number;
}

export function onlineC128BankLayout(options: OnlineC128BankLayoutOptions): OnlineC128BankLayout {
  requireKnownKeys("options", options, ["statePoolSize", "maxDraftTokens", "attentionHeadDim", "stateDtypeBytes"]);
  const { statePoolSize, maxDraftTokens } = options;
  const attentionHeadDim = options.attentionHeadDim ?? 512;
  const stateDtypeBytes = options.stateDtypeBytes ?? 4;
  const bankStrideRows = onlineC128BankStrideRows(statePoolSize);
  const draftBankCount = onlineC128DraftBankCount(maxDraftTokens);
  const rowElements = onlineC128RowElements(attentionHeadDim);
  const rowBytes = onlineC128RowBytes(attentionHeadDim, stateDtypeBytes);
  const totalRows = bankStrideRows * (1 + draftBankCount);
  return {
    statePoolSize,
    draftBankCount,
    bankStrideRows,
    bankOffsetRows: Array.from({ length: draftBankCount + 1 }, (_, k) => k * bankStrideRows),
    totalRows,
    rowElements,
    rowBytes,
    bankStrideBytes: bankStrideRows * rowBytes,
    bytesPerLayer: totalRows * rowBytes,
  };
}

function requireBank(bank: number, maxDraftTokens: number): void {
  requireInt("bank", bank, 0);
  const draftBanks = onlineC128DraftBankCount(maxDraftTokens);
  if (bank > draftBanks) {
    throw new MemoryPoolError(
      "OUT_OF_RANGE",
      "bank",
      bank,
      `must be 0 (committed) or a draft bank 1..${draftBanks} (maxDraftTokens = ${maxDraftTokens})`,
      { maxDraftTokens },
    );
  }
}

export function requireStateDtypeBytes(stateDtypeBytes: number): void {
  if (stateDtypeBytes !== 4 && stateDtypeBytes !== 2) {
    throw new MemoryPoolError(
      "STATE_DTYPE",
      "stateDtypeBytes",
      stateDtypeBytes,
      "must be 4 (float32) or 2 (bfloat16)",
      {
        allowed: [4, 2],
      },
    );
  }
}
