/**
 * The write pad: the single source of truth for how many trailing positions a plan always writes.
 * memory-pool, server-config and the CUDA addon import these functions; nothing else restates the formula.
 */

/** Compression ratios the compress planner serves. (The memory pool also knows ratio 2; see `windowSize`.) */
export type CompressRatio = 4 | 128;

export const SUPPORTED_RATIOS: readonly CompressRatio[] = [4, 128];

/** Ring sizes SGLang allocates per ratio: speculative rings are twice the window. */
export const SPECULATIVE_RING_SIZE = { 4: 16, 128: 256 } as const;
export const NON_SPECULATIVE_RING_SIZE = { 4: 8, 128: 128 } as const;

/**
 * Raw tokens one compression consumes. c4 overlaps consecutive chunks (each window is the previous chunk plus
 * the current one), so its window is two chunks; every other ratio consumes exactly one chunk.
 */
export function windowSize(compressRatio: number): number {
  return compressRatio * (compressRatio === 4 ? 2 : 1);
}

/**
 * Write pad (`mtp_pad` upstream) of a ring: a plan always writes the last `writePad` positions of a batch.
 *
 * Why `ringSize - window + 2`: a verify batch of D drafts at [P, P+D) keeps an unknown prefix of them, so
 * all D must be written (coverage: S - pad <= P needs pad >= D). The batch's last write, position P+D-1,
 * lands in the slot of P+D-1-ringSize; the next batch's first compression reads from position
 * q-window+1 >= P-window+2 on (its event q is at least P+1). No live position is clobbered while
 * P+D-1-ringSize < P-window+2, i.e. D <= ringSize-window+2. Both bounds meet at D = pad, so a ring serves
 * at most `writePad` draft tokens and `writePad + 1` provably corrupts (see the residency checker).
 * A ring no larger than its window has no room for drafts: the pad is 0 and only the plain rule applies.
 */
export function writePad(compressRatio: number, ringSize: number): number {
  const window = windowSize(compressRatio);
  return ringSize > window ? ringSize - window + 2 : 0;
}

/** The most draft tokens per verify a ring serves without corrupting committed positions (equals the pad). */
export function maxServedDraftTokens(compressRatio: number, ringSize: number): number {
  return writePad(compressRatio, ringSize);
}

/** Historical and injectable pad formulas, for the residency checker and its regression tests. */
export type PadFormula = "derived" | "pre-fix-device" | "pre-fix-host";

/**
 * - `derived`: the current rule, `writePad` above.
 * - `pre-fix-device`: the GPU planner before SGLang PR #34189, `min(ringSize - ratio, 4)`.
 * - `pre-fix-host`: the CPU host loop before that PR, which had no pad at all.
 */
export function padForFormula(formula: PadFormula, compressRatio: number, ringSize: number): number {
  switch (formula) {
    case "derived":
      return writePad(compressRatio, ringSize);
    case "pre-fix-device":
      return Math.min(ringSize - compressRatio, 4);
    case "pre-fix-host":
      return 0;
  }
}

/**
 * Earliest position any future compression (at a position >= seqLen) reads: the start of the last complete
 * chunk, minus one chunk for c4's overlap half.
 */
export function earliestFutureRead(compressRatio: number, seqLen: number): number {
  const lastCompressPos = Math.trunc(seqLen / compressRatio) * compressRatio;
  return lastCompressPos - (compressRatio === 4 ? compressRatio : 0);
}

/** First position of a batch ending at `seqLen` that must be written: the future-read bound or the pad. */
export function firstWritePos(compressRatio: number, seqLen: number, pad: number): number {
  return Math.min(earliestFutureRead(compressRatio, seqLen), seqLen - pad);
}
