/**
 * The fp32 pooling both backends implement (docs/reference/planner.md §8): per channel d, over the window's unmasked
 * elements e, entry[d] = Σ_e w_e·kv_e[d] / Σ_e w_e with w_e = exp(s_e − m), s_e = score_e[d] + ape[e][d] and
 * m = max_e s_e. Float32 semantics, every result rounded with Math.fround, in this order (two passes):
 *   1. s_e = fround(score_e[d] + ape[e][d]); m = max_e s_e (exact);
 *   2. for e ascending: w_e = fround(exp(fround(s_e − m))) (Math.exp then fround: a correctly rounded expf up to
 *      double rounding), sum = fround(sum + w_e), acc = fround(acc + fround(w_e·kv_e[d]));
 *   3. entry[d] = fround(acc / sum).
 * The GPU may sum in another order and use expf (within 2 ulp); tolerance.ts bounds both against the float64 oracle.
 */
const f = Math.fround;

/** One gathered window: element e's kv and score rows (`headDim` floats at `kvAt[e]` / `scoreAt[e]` of `rows[e]`). */
export interface GatheredWindow {
  /** Element rows; null when masked. */
  readonly rows: (Float32Array | null)[];
  readonly kvAt: Int32Array;
  readonly scoreAt: Int32Array;
}

export function newGatheredWindow(window: number): GatheredWindow {
  return {
    rows: new Array<Float32Array | null>(window).fill(null),
    kvAt: new Int32Array(window),
    scoreAt: new Int32Array(window),
  };
}

/**
 * Pools `g` (W elements) with `ape` ([W, headDim]) into `out[outAt .. outAt + headDim)` (unchecked: the caller
 * validated the batch). `s` is a scratch of W floats.
 */
export function poolWindowF32(
  g: GatheredWindow,
  ape: Float32Array,
  headDim: number,
  out: Float32Array,
  outAt: number,
  s: Float64Array,
): void {
  const w = g.rows.length;
  for (let d = 0; d < headDim; d++) {
    let m = Number.NEGATIVE_INFINITY;
    for (let e = 0; e < w; e++) {
      const row = g.rows[e];
      if (!row) continue;
      const se = f(row[g.scoreAt[e]! + d]! + ape[e * headDim + d]!);
      s[e] = se;
      if (se > m) m = se;
    }
    let sum = 0;
    let acc = 0;
    for (let e = 0; e < w; e++) {
      const row = g.rows[e];
      if (!row) continue;
      const we = f(Math.exp(f(s[e]! - m)));
      sum = f(sum + we);
      acc = f(acc + f(we * row[g.kvAt[e]! + d]!));
    }
    out[outAt + d] = f(acc / sum);
  }
}
