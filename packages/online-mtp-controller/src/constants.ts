/**
 * Head dim of a c128 compressor (qk_nope 448 + qk_rope 64), docs/reference/online-mtp.md §4.1. The kernels are compiled
 * for this value.
 */
export const HEAD_DIM = 512;
/** Elements of one online state row: `[max | sum | acc]`, each HEAD_DIM long (docs/reference/online-mtp.md §4.1). */
export const STATE_ROW_ELEMS = 3 * HEAD_DIM;
/** Tokens pooled into one compressed entry (docs/reference/online-mtp.md §2). */
export const CHUNK_TOKENS = 128;
/** Widest verify window a kernel accepts (`kMaxVerifyTokens`, docs/reference/online-mtp.md §3). */
export const MAX_VERIFY_TOKENS = 8;
/** Columns of one compressor input row: `[kv(512) | score(512)]` (docs/reference/online-mtp.md §2). */
export const KV_SCORE_COLS = 2 * HEAD_DIM;

export type StateDtype = "fp32" | "bf16";
/**
 * Most request slots a controller serves (our bound, far above SGLang's request pool of max running requests + 1 plus
 * PD slots): 65,536 slots at 8 draft banks are 590k state rows, 3.6 GiB of fp32 state per layer.
 */
export const MAX_REQ_SLOTS = 65536;
