/** Head dim of a c128 compressor (qk_nope 448 + qk_rope 64), §3.2. The kernels are compiled for this value. */
export const HEAD_DIM = 512;
/** Elements of one online state row: `[max | sum | acc]`, each HEAD_DIM long (§3.2). */
export const STATE_ROW_ELEMS = 3 * HEAD_DIM;
/** Tokens pooled into one compressed entry (§1). */
export const CHUNK_TOKENS = 128;
/** Widest verify window a kernel accepts (`kMaxVerifyTokens`, §2). */
export const MAX_VERIFY_TOKENS = 8;
/** Columns of one compressor input row: `[kv(512) | score(512)]` (§3.1). */
export const KV_SCORE_COLS = 2 * HEAD_DIM;

export type StateDtype = "fp32" | "bf16";
