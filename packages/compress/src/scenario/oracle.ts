/**
 * What an entry should be: `offlineCompress(windowOf(committed rows, q))` in float64 from the committed (unrounded)
 * tokens, and the derived bound it must lie within (`entryTolerance`: the backend's fp32 arithmetic, plus the bf16
 * rounding of ring elements for a bf16 state). Online entries are held to the ring's bound plus the online
 * controller's stated tolerance; a mirror backend's entries to the GPU-vs-CPU bound.
 */
import { STATE_TOLERANCE } from "@dsv4-kv/online-mtp-controller/internal";
import { offlineCompress, windowOf } from "../oracle.js";
import { entryTolerance } from "../tolerance.js";
import type { CommittedRow } from "./memory.js";
import type { ResolvedScenarioOptions } from "./options.js";

export interface ExpectedEntry {
  want: Float64Array;
  /** Absolute bound per channel (one value for the entry, repeated: the bound is per window). */
  tolerance: number;
  /** max |kv| of each channel over the window (the scale of the relative error). */
  scale: Float64Array;
}

export interface EntryOracle {
  entry(window: readonly (CommittedRow | null)[], q: number): ExpectedEntry;
  /** Bound on |a − b| for the same entry from the checked backend and the mirror. */
  readonly mirrorTolerance: number;
  /** Bound on |online − ring| for channel value `ring` of an entry whose ring bound is `ringTolerance`. */
  onlineTolerance(ring: number, ringTolerance: number): number;
}

export function createOracle(o: ResolvedScenarioOptions, ape: Float32Array, backend: "cpu" | "gpu"): EntryOracle {
  const { compressRatio, headDim } = o;
  const bf16 = o.stateDtype === "bf16";
  let maxApe = 0;
  for (const a of ape) maxApe = Math.max(maxApe, Math.abs(a));
  const online = STATE_TOLERANCE[o.stateDtype];
  // the mirror bound needs the window's scale; the widest kv and score a token row holds bound it (tokens.ts)
  const mirror = entryTolerance({ compressRatio, maxAbsKv: 1, maxAbsScore: 3 + maxApe, ringElementsBf16: false });
  return {
    mirrorTolerance: mirror.gpuVsCpu,
    onlineTolerance: (ring, ringTolerance) => ringTolerance + online.atol + online.rtol * Math.abs(ring),
    entry(window, q) {
      const rows = new Map<number, Float32Array>();
      const w = window.length;
      for (let e = 0; e < w; e++) {
        const r = window[e];
        if (r) rows.set(q - w + 1 + e, r.row);
      }
      const elements = windowOf(compressRatio, headDim, (p) => rows.get(p), q);
      const want = offlineCompress({ compressRatio, headDim, ape, elements });
      const scale = new Float64Array(headDim);
      let maxKv = 0;
      let maxScore = 0;
      for (const el of elements) {
        if (el.kv === null) continue;
        for (let d = 0; d < headDim; d++) {
          const k = Math.abs(el.kv[d]!);
          if (k > scale[d]!) scale[d] = k;
          if (k > maxKv) maxKv = k;
          const s = Math.abs(el.score![d]!);
          if (s > maxScore) maxScore = s;
        }
      }
      const t = entryTolerance({
        compressRatio,
        maxAbsKv: maxKv,
        maxAbsScore: maxScore + maxApe,
        ringElementsBf16: bf16,
      });
      return { want, tolerance: backend === "gpu" ? t.gpu : t.cpu, scale };
    },
  };
}
