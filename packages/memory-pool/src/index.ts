export { MemoryPoolError, type MemoryPoolErrorCode } from "./errors.js";
export {
  ONLINE_C128_RING_SIZE,
  onlineC128RowElements,
  onlineC128RowBytes,
  onlineC128DraftBankCount,
  onlineC128BankStrideRows,
  onlineC128TotalRows,
  onlineC128BankOffsetRows,
  onlineC128StateRow,
  onlineC128BankLayout,
  type OnlineC128BankLayout,
  type OnlineC128BankLayoutOptions,
} from "./banks.js";
export {
  SENTINEL_STATE_ROW,
  swaLocToC4StateRow,
  c128OfflineStateRow,
  c128OfflineRequestRows,
  c128OnlineStateRow,
  unifiedC4StateRow,
  fullLocToC4CompressedIndex,
} from "./slots.js";
export {
  type StateRatio,
  type RingSizeOptions,
  compressStateRingSize,
  compressStateWritePad,
  swaRingSize,
  writePad,
  windowSize,
  maxServedDraftTokens,
} from "./rings.js";
