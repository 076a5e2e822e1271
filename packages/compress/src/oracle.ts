/**
 * The float64 oracle of a compressed entry (docs/reference/planner.md §8): the softmax over the window of score + ape
 * weighting kv, per channel, computed in float64 from the given (fp32) values. Tests compare both backends' entries
 * with it within `entryTolerance`.
 */
import { windowSize } from "@dsv4-kv/planner";
import type { RingRatio } from "./backend.js";
import {
  check,
  checkFiniteElements,
  checkFloat32Array,
  checkInt,
  checkKeys,
  checkObject,
  checkOneOf,
} from "./check.js";
import { HEAD_DIMS, RING_RATIOS, rowBlocks } from "./geometry.js";

/** One window element: its kv and score for the channels (the half the element uses, for c4), or masked. */
export interface WindowElement {
  /** `headDim` floats, or null when the element is masked (excluded from the softmax). */
  kv: Float32Array | null;
  /** `headDim` floats (ignored, and may be null, when masked). */
  score: Float32Array | null;
}

export interface OfflineCompressInput {
  compressRatio: RingRatio;
  headDim: number;
  /** `[W, headDim]` positional bias. */
  ape: Float32Array;
  /** The W elements, position q − W + 1 + e at index e (c4: the overlap half for e < 4, the main half for e >= 4). */
  elements: readonly WindowElement[];
}

const INPUT_KEYS = ["compressRatio", "headDim", "ape", "elements"] as const;
const ELEMENT_KEYS = ["kv", "score"] as const;

/** entry[d] = Σ_e softmax_e(score_e[d] + ape[e][d]) · kv_e[d] over the unmasked elements, in float64. */
export function offlineCompress(input: OfflineCompressInput): Float64Array {
  checkObject(input, "input");
  checkKeys(input, INPUT_KEYS, "input");
  const { compressRatio, headDim, ape, elements } = input;
  checkOneOf(compressRatio, RING_RATIOS, "compressRatio");
  checkOneOf(headDim, HEAD_DIMS, "headDim");
  const w = windowSize(compressRatio);
  checkFloat32Array(ape, "ape");
  const n = w * headDim;
  check(ape.length === n, "BUFFER_SHAPE", "ape.length", ape.length, `must be window × headDim = ${n}`);
  checkFiniteElements(ape, "ape");
  checkElements(elements, w, headDim);
  const out = new Float64Array(headDim);
  const s = new Float64Array(w);
  for (let d = 0; d < headDim; d++) {
    let m = Number.NEGATIVE_INFINITY;
    for (let e = 0; e < w; e++) {
      const el = elements[e]!;
      if (el.kv === null) continue;
      s[e] = el.score![d]! + ape[e * headDim + d]!;
      m = Math.max(m, s[e]!);
    }
    let sum = 0;
    let acc = 0;
    for (let e = 0; e < w; e++) {
      const kv = elements[e]!.kv;
      if (kv === null) continue;
      const we = Math.exp(s[e]! - m);
      sum += we;
      acc += we * kv[d]!;
    }
    out[d] = acc / sum;
  }
  return out;
}

function checkElements(elements: unknown, w: number, headDim: number): asserts elements is WindowElement[] {
  check(Array.isArray(elements), "INVALID_TYPE", "elements", elements, "must be an array of window elements");
  check(elements.length === w, "BUFFER_SHAPE", "elements.length", elements.length, `must be the window W = ${w}`);
  let unmasked = 0;
  // An index loop, not forEach: forEach skips the holes of a sparse array, which would then crash the pooling.
  for (let e = 0; e < elements.length; e++) {
    const el: unknown = elements[e];
    const at = `elements[${e}]`;
    checkObject(el, at);
    checkKeys(el, ELEMENT_KEYS, at);
    if (el.kv === null) continue;
    unmasked++;
    for (const key of ELEMENT_KEYS) {
      const v = el[key];
      checkFloat32Array(v, `${at}.${key}`);
      check(v.length === headDim, "BUFFER_SHAPE", `${at}.${key}.length`, v.length, `must be headDim = ${headDim}`);
      checkFiniteElements(v, `${at}.${key}`);
    }
  }
  check(unmasked > 0, "INVALID_ARGUMENT", "elements", "all masked", "must have at least one unmasked element");
}

/**
 * The W elements of the window that closes at position q, from whole token rows (`rowElems` floats each, the
 * input-row layout: c4 `| kv_overlap | kv | score_overlap | score |`, c128 `| kv | score |`): element e is position
 * q − W + 1 + e, its overlap half for e < 4 (c4), its main half otherwise; positions < 0 are masked (the c4 q = 3
 * mask). `rowsByPosition(p)` must return the row of every position in [max(0, q − W + 1), q].
 */
export function windowOf(
  compressRatio: RingRatio,
  headDim: number,
  rowsByPosition: (position: number) => Float32Array | undefined,
  q: number,
): WindowElement[] {
  checkOneOf(compressRatio, RING_RATIOS, "compressRatio");
  checkOneOf(headDim, HEAD_DIMS, "headDim");
  check(typeof rowsByPosition === "function", "INVALID_TYPE", "rowsByPosition", rowsByPosition, "must be a function");
  const cr = compressRatio;
  checkInt(q, cr - 1, Number.MAX_SAFE_INTEGER, "q", `must be an event position: q >= ${cr - 1}, (q + 1) % ${cr} == 0`);
  check((q + 1) % cr === 0, "INVALID_ARGUMENT", "q", q, `must be an event position: (q + 1) % ${cr} == 0`);
  const w = windowSize(cr);
  const rowElems = rowBlocks(cr) * headDim;
  const scoreBlock = (rowBlocks(cr) / 2) * headDim;
  const out: WindowElement[] = [];
  for (let e = 0; e < w; e++) {
    const p = q - w + 1 + e;
    if (p < 0) {
      out.push({ kv: null, score: null });
      continue;
    }
    const row = rowsByPosition(p);
    const at = `rowsByPosition(${p})`;
    checkFloat32Array(row, at);
    check(row.length === rowElems, "BUFFER_SHAPE", `${at}.length`, row.length, `must be rowElems = ${rowElems}`);
    const h = cr === 4 && e >= 4 ? headDim : 0;
    out.push({ kv: row.subarray(h, h + headDim), score: row.subarray(scoreBlock + h, scoreBlock + h + headDim) });
  }
  return out;
}
