/**
 * Fixed multi-step schedules (prefill chunks, padded CUDA-graph tables, decodes crossing window boundaries) run
 * the same way on any backend, so two harnesses of the same seed see the same tokens and plans.
 */
import type { RingCompressBackend } from "../src/backend.js";
import { Harness, type HarnessOptions, type StepReport } from "./helpers.js";

export type Step =
  | { kind: "prefill"; batch: { rid: number; extend: number }[]; padTo?: number }
  | { kind: "decode"; rids: number[]; steps: number; padTo?: number };

export const C4_STEPS: readonly Step[] = [
  {
    kind: "prefill",
    batch: [
      { rid: 0, extend: 37 },
      { rid: 1, extend: 9 },
      { rid: 2, extend: 4 },
    ],
    padTo: 64,
  },
  {
    kind: "prefill",
    batch: [
      { rid: 0, extend: 3 },
      { rid: 1, extend: 8 },
      { rid: 2, extend: 13 },
    ],
  },
  { kind: "decode", rids: [0, 1, 2], steps: 9 },
  {
    kind: "prefill",
    batch: [
      { rid: 0, extend: 2 },
      { rid: 2, extend: 5 },
    ],
    padTo: 16,
  },
  { kind: "decode", rids: [2, 0], steps: 3, padTo: 8 },
];

export const C128_STEPS: readonly Step[] = [
  {
    kind: "prefill",
    batch: [
      { rid: 0, extend: 300 },
      { rid: 1, extend: 127 },
      { rid: 2, extend: 128 },
    ],
  },
  {
    kind: "prefill",
    batch: [
      { rid: 0, extend: 100 },
      { rid: 1, extend: 1 },
      { rid: 2, extend: 130 },
    ],
    padTo: 256,
  },
  { kind: "decode", rids: [0, 1, 2], steps: 130, padTo: 4 },
];

export function stepsFor(o: HarnessOptions): readonly Step[] {
  return o.cr === 4 ? C4_STEPS : C128_STEPS;
}

/** Runs `steps` on a new harness over `backend`; `after` sees each call's report (decode: one per decoded token). */
export function runSteps(
  o: HarnessOptions,
  backend: RingCompressBackend,
  after: (r: StepReport, h: Harness, label: string) => void,
): Harness {
  const h = new Harness(o, backend);
  stepsFor(o).forEach((s, k) => {
    if (s.kind === "prefill") after(h.prefill(s.batch, s.padTo), h, `step ${k} prefill`);
    else for (let t = 0; t < s.steps; t++) after(h.decode(s.rids, s.padTo), h, `step ${k} decode ${t}`);
  });
  return h;
}

export const CONFIGS: readonly HarnessOptions[] = [
  { cr: 4, headDim: 128, dtype: "fp32", numReqs: 3, seed: 11 },
  { cr: 4, headDim: 512, dtype: "bf16", numReqs: 3, seed: 12 },
  { cr: 4, headDim: 128, dtype: "bf16", numReqs: 3, seed: 13, useReqRing: true },
  { cr: 4, headDim: 512, dtype: "fp32", numReqs: 3, seed: 14, useReqRing: true },
  { cr: 128, headDim: 128, dtype: "bf16", numReqs: 3, seed: 15 },
  { cr: 128, headDim: 512, dtype: "fp32", numReqs: 3, seed: 16 },
];

export function configName(o: HarnessOptions): string {
  const ring = o.cr === 128 ? "req ring" : o.useReqRing ? "req ring" : "paged";
  return `c${o.cr} ${ring}, headDim ${o.headDim}, ${o.dtype}`;
}

/** Runs `steps` on two harnesses (same seed) in lockstep; `after` sees both reports of each call. */
export function runStepsPaired(
  o: HarnessOptions,
  a: RingCompressBackend,
  b: RingCompressBackend,
  after: (ra: StepReport, rb: StepReport, label: string) => void,
): void {
  const ha = new Harness(o, a);
  const hb = new Harness(o, b);
  stepsFor(o).forEach((s, k) => {
    if (s.kind === "prefill") after(ha.prefill(s.batch, s.padTo), hb.prefill(s.batch, s.padTo), `step ${k} prefill`);
    else {
      for (let t = 0; t < s.steps; t++) {
        after(ha.decode(s.rids, s.padTo), hb.decode(s.rids, s.padTo), `step ${k} decode ${t}`);
      }
    }
  });
}
