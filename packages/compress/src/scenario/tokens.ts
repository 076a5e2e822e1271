/**
 * Deterministic token rows of a scenario: one fp32 input row (`| kv_ov | kv | score_ov | score |` for c4, `| kv |
 * score |` for c128) per (request, position, attempt). The attempt is the step of the batch that carried the token, so
 * a rejected draft at position x differs from the token later committed at x: a ring that kept the draft shows on the
 * entries, not only on the positions.
 */

/** Who produced a token row: the request (its unique id, not its slot), the position, the batch step. */
export interface TokenOrigin {
  uid: number;
  position: number;
  step: number;
}

/** kv in [-1, 1); score in [-SCORE_SPAN, SCORE_SPAN): wide enough that the softmax weights differ. */
const SCORE_SPAN = 3;

function mix32(h: number, v: number): number {
  let x = Math.imul(h ^ v, 0x9e3779b1);
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  return (x ^ (x >>> 13)) >>> 0;
}

/** Fills `out` (one row of `rowElems` floats; the first half kv, the second score) for `origin`. */
export function fillTokenRow(seed: number, origin: TokenOrigin, out: Float32Array): void {
  let state = mix32(mix32(mix32(mix32(0x2545f491, seed), origin.uid), origin.position), origin.step);
  const half = out.length / 2;
  for (let i = 0; i < out.length; i++) {
    // mulberry32, inlined: this runs for every element of every token
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = i < half ? 2 * u - 1 : SCORE_SPAN * (2 * u - 1);
  }
}

/** A fresh row for `origin`. */
export function tokenRow(seed: number, origin: TokenOrigin, rowElems: number): Float32Array {
  const row = new Float32Array(rowElems);
  fillTokenRow(seed, origin, row);
  return row;
}

/** The positional bias `[window, headDim]`, small beside the scores. */
export function scenarioApe(seed: number, window: number, headDim: number): Float32Array {
  const ape = new Float32Array(window * headDim);
  fillTokenRow(seed, { uid: 0x7fffffff, position: window, step: headDim }, ape);
  for (let i = 0; i < ape.length; i++) ape[i] = ape[i]! * 0.25;
  return ape;
}

/** Garbage for the initial state pool, so that a read of a never-written row is visible. */
export function fillGarbage(seed: number, out: Float32Array): void {
  fillTokenRow(seed, { uid: 0x7ffffffe, position: out.length, step: 0 }, out);
  for (let i = 0; i < out.length; i++) out[i] = out[i]! * 4 + 5;
}
