/**
 * The write pad: the single source of truth for how many trailing positions a plan always writes.
 * memory-pool, server-config and the CUDA addon import these functions; nothing else restates the formula.
 * Every function validates its arguments (they are cheap and called once per plan, never per row).
 */
import { PlannerError } from "./errors.js";
import { INT32_MAX, requireInteger } from "./inputs.js";

/** Compression ratios the compress planner serves. (The memory pool also knows ratio 2; see `windowSize`.) */
export type CompressRatio = 4 | 128;

export const SUPPORTED_RATIOS: readonly CompressRatio[] = [4, 128];

/** Ring sizes SGLang allocates per ratio: speculative rings are twice the window. */
export const SPECULATIVE_RING_SIZE = { 4: 16, 128: 256 } as const;
export const NON_SPECULATIVE_RING_SIZE = { 4: 8, 128: 128 } as const;

/** Ratios with a compress-state ring: the compress planner's two, and ratio 2 of the memory pool. */
const STATE_RATIOS: readonly number[] = [2, 4, 128];

function requireRatio(compressRatio: number, served: readonly number[]): void {
  if (!served.includes(compressRatio)) {
    throw new PlannerError("INVALID_RATIO", "compressRatio", compressRatio, `must be one of ${served.join(", ")}`);
  }
}

function requireRing(ringSize: number): void {
  requireInteger("ringSize", ringSize, 1, INT32_MAX);
}

/**
 * Raw tokens one compression consumes. c4 overlaps consecutive chunks (each window is the previous chunk plus
 * the current one), so its window is two chunks; every other ratio consumes exactly one chunk.
 */
export function windowSize(compressRatio: number): number {
  requireRatio(compressRatio, STATE_RATIOS);
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
  requireRing(ringSize);
  return ringSize > window ? ringSize - window + 2 : 0;
}

/** The most draft tokens per verify a ring serves without corrupting committed positions (equals the pad). */
export function maxServedDraftTokens(compressRatio: number, ringSize: number): number {
  return writePad(compressRatio, ringSize);
}

/** Historical and injectable pad formulas, for the residency checker and its regression tests. */
export type PadFormula = "derived" | "pre-fix-device" | "pre-fix-host";
const PAD_FORMULAS: readonly string[] = ["derived", "pre-fix-device", "pre-fix-host"];

/**
 * - `derived`: the current rule, `writePad` above.
 * - `pre-fix-device`: the GPU planner before SGLang PR #34189, `min(ringSize - ratio, 4)`.
 * - `pre-fix-host`: the CPU host loop before that PR, which had no pad at all.
 */
export function padForFormula(formula: PadFormula, compressRatio: number, ringSize: number): number {
  if (!PAD_FORMULAS.includes(formula)) {
    throw new PlannerError("INVALID_ARGUMENT", "formula", formula, `must be one of ${PAD_FORMULAS.join(", ")}`);
  }
  requireRatio(compressRatio, SUPPORTED_RATIOS);
  requireRing(ringSize);
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
  requireRatio(compressRatio, SUPPORTED_RATIOS);
  requireInteger("seqLen", seqLen, 0, INT32_MAX);
  return earliestFutureReadUnchecked(compressRatio, seqLen);
}

/**
 * `earliestFutureRead` without the argument checks, for the simulator and prover loops, whose ratio was validated
 * with their ring and whose prefixes are non-negative integers by construction.
 */
export function earliestFutureReadUnchecked(compressRatio: number, seqLen: number): number {
  const lastCompressPos = Math.trunc(seqLen / compressRatio) * compressRatio;
  return lastCompressPos - (compressRatio === 4 ? compressRatio : 0);
}

/** First position of a batch ending at `seqLen` that must be written: the future-read bound or the pad. */
export function firstWritePos(compressRatio: number, seqLen: number, pad: number): number {
  const futureRead = earliestFutureRead(compressRatio, seqLen);
  requireInteger("pad", pad, 0, INT32_MAX);
  return Math.min(futureRead, seqLen - pad);
}
