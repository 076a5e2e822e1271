import { planPrefill } from "@dsv4-kv/planner";
import {
  CompressError,
  CpuCompressBackend,
  entryTolerance,
  offlineCompress,
  validatePrefillBatch,
  windowOf,
} from "../src/index.js";

// One c4 layer, head dim 128, bf16 state: 16 ring slots per request (c4 request ring under MTP).
const geometry = { compressRatio: 4, headDim: 128, stateDtype: "bf16", stateRows: 16 } as const;
const backend = new CpuCompressBackend(geometry); // or new GpuCompressBackend(geometry) from "@dsv4-kv/compress/gpu"
const ape = new Float32Array(8 * 128).map((_, i) => Math.sin(i) / 4);
backend.setApe(ape);

// Request 0 prefills 12 tokens: events at q = 3, 7, 11; each token row is | kv_ov | kv | score_ov | score |.
const rows = Array.from({ length: 12 }, (_, p) => new Float32Array(4 * 128).map((_, i) => Math.cos(p * 7 + i)));
const plan = planPrefill({
  compressRatio: 4,
  ringSize: 16,
  swaPageSize: 256,
  useReqRing: true,
  seqLens: [12],
  extendLens: [12],
});
const input = new Float32Array(12 * 4 * 128);
for (const [p, r] of rows.entries()) input.set(r, p * 4 * 128);
const out = backend.prefill({ input, inputRows: 12, planC: plan.planC.bytes, planW: plan.planW.bytes });

// Entry of the window closing at q = 11 (plan row 2) against the float64 oracle, within the derived bound.
const oracle = offlineCompress({ compressRatio: 4, headDim: 128, ape, elements: windowOf(4, 128, (p) => rows[p], 11) });
const tol = entryTolerance({ compressRatio: 4, maxAbsKv: 1, maxAbsScore: 1.25, ringElementsBf16: false });
const within = out.subarray(2 * 128, 3 * 128).every((v, d) => Math.abs(v - oracle[d]!) <= tol.cpu);
console.log(plan.numCompress, within); // 3 true

try {
  validatePrefillBatch(geometry, { input, inputRows: 11, planC: plan.planC.bytes, planW: plan.planW.bytes });
} catch (e) {
  // prints: BUFFER_SHAPE input.length
  if (CompressError.isInstance(e)) console.log(e.code, e.field);
}
