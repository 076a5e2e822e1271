/**
 * The invariants (docs/reference/online-mtp.md, section 15) on the GPU backend (CUDA kernels), plus GPU == CPU
 * within the stated tolerances. Skipped with
 * the probe's reason where no GPU is usable (CI has nvcc but no GPU).
 */
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { describe, expect } from "vitest";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import {
  CHUNK_TOKENS,
  CpuBackend,
  HEAD_DIM,
  KV_SCORE_COLS,
  OnlineMtpController,
  STATE_ROW_ELEMS,
  runSimulation,
  type OnlineMtpBackend,
} from "../src/index.js";
import { compareRows } from "../src/testing.js";
import { GpuBackend, probeGpuBackend } from "../src/gpu.js";
import { INVARIANTS } from "./invariants.js";
import { BACKEND_REFUSALS } from "./refusals.js";
import { randn, randomStateRow } from "./helpers.js";

let shared: GpuBackend | undefined;
const gpuTest = createGpuTest(probeGpuBackend, () => (shared ??= new GpuBackend()));

for (const dtype of ["fp32", "bf16"] as const) {
  describe(`GPU backend, ${dtype} state: invariants`, () => {
    for (const [name, inv] of Object.entries(INVARIANTS)) gpuTest(name, ({ gpu }) => inv(gpu, dtype));
  });
}

describe("GPU backend refusals (validated before anything is launched)", () => {
  for (const [name, fn] of Object.entries(BACKEND_REFUSALS)) gpuTest(name, ({ gpu }) => fn(gpu));
});

describe("GPU == CPU", () => {
  // fp32: 2e-4 (the invariants' bound); bf16: outputs are rounded to bf16, so one ulp (2^-8 relative) of
  // disagreement is allowed.
  const TOL = { fp32: { atol: 2e-4, rtol: 2e-4 }, bf16: { atol: 1e-2, rtol: 8e-3 } } as const;
  for (const dtype of ["fp32", "bf16"] as const) {
    gpuTest(`writePrefix + commit, batch 64, D 1..8, ${dtype}: within ${TOL[dtype].atol}`, ({ gpu }) => {
      for (const D of [1, 3, 8]) {
        const rng = new SeededRandom(40 + D);
        const N = 65;
        const run = (be: OnlineMtpBackend) => {
          const ctrl = new OnlineMtpController({
            backend: be,
            numReqSlots: N,
            maxDraftTokens: 8,
            numDraftTokens: D,
            numLayers: 1,
            stateDtype: dtype,
          });
          return ctrl;
        };
        const cpu = new CpuBackend();
        const cc = run(cpu);
        const gc = run(gpu);
        const init = new Float32Array(cc.stateRows * STATE_ROW_ELEMS);
        for (let r = 0; r < cc.stateRows; r++) init.set(randomStateRow(rng), r * STATE_ROW_ELEMS);
        cpu.writeStateRows(cc.layers[0]!, 0, init);
        gpu.writeStateRows(gc.layers[0]!, 0, init);
        const apeHost = randn(rng, CHUNK_TOKENS * HEAD_DIM);
        const kvHost = randn(rng, 64 * D * KV_SCORE_COLS);
        const seq = Int32Array.from({ length: 64 }, (_, b) => 1024 + [0, 1, 2, 63, 120, 126, 127, 5][b % 8]!);
        const slots = Int32Array.from({ length: 64 }, (_, b) => b + 1);
        for (const [be, c] of [
          [cpu, cc],
          [gpu, gc],
        ] as const) {
          c.prepareForward("target_verify", be.uploadIndex(slots), be.uploadIndex(seq));
          c.writePrefixStates(
            0,
            be.uploadMatrix(kvHost, 64 * D, KV_SCORE_COLS),
            be.uploadMatrix(apeHost, CHUNK_TOKENS, HEAD_DIM),
            "target_verify",
          );
          c.prepareForward(
            "decode",
            be.uploadIndex(slots),
            be.uploadIndex(Int32Array.from(seq, (s, b) => s + 1 + (b % D))),
          );
          be.synchronize();
        }
        const a = gpu.readStateRows(gc.layers[0]!, 0, gc.stateRows);
        const b = cpu.readStateRows(cc.layers[0]!, 0, cc.stateRows);
        const st = compareRows(a, b, TOL[dtype]);
        const [abs, rel] = [st.maxAbsError.toExponential(2), st.maxRelError.toExponential(2)];
        console.log(`GPU vs CPU ${dtype} D=${D}: max abs ${abs}, max rel ${rel}`);
        expect(st.violations).toBe(0);
      }
    });
  }

  for (const dtype of ["fp32", "bf16"] as const) {
    gpuTest(`simulate on the GPU (${dtype}): zero lost commits, within tolerance`, ({ gpu }) => {
      const r = runSimulation({
        backend: gpu,
        requests: 8,
        steps: 80,
        draftTokens: 8,
        adaptive: true,
        seed: 77,
        stateDtype: dtype,
      });
      console.log(`GPU simulate ${dtype}: ${JSON.stringify(r)}`);
      expect(r.lostCommits).toBe(0);
      expect(r.violations).toBe(0);
    });
  }

  // The bf16 campaign's rows (docs/reference/online-mtp.md §5.4) on the CUDA kernels: the same derived bound and the
  // same rounded reference as the CPU backend (the fast-math error is inside the bound's fp32 terms).
  for (const [D, seed] of [
    [1, 8950],
    [1, 8946],
    [4, 8955],
    [8, 8955],
  ] as const) {
    gpuTest(`bf16 campaign on the GPU, D ${D}, seed ${seed}: every row within the derived bound`, ({ gpu }) => {
      const r = runSimulation({ backend: gpu, requests: 16, steps: 200, draftTokens: D, seed, stateDtype: "bf16" });
      expect(r.violationDetails).toEqual([]);
      expect(r.ok).toBe(true);
      expect(r.bf16!.maxRatio).toBeLessThanOrEqual(1);
    });
  }
});

describe("GPU backend: stream-ordered copies", () => {
  gpuTest(
    "the verify loop (index uploads, commit+mark, writePrefix on 2 layers) never synchronises; equals the CPU run",
    ({ gpu }) => {
      const ctx = gpu.context as unknown as { synchronize(): void };
      const orig = ctx.synchronize;
      let syncs = 0;
      const cpu = new CpuBackend();
      const rng = new SeededRandom(5);
      const N = 6,
        D = 4,
        L = 2,
        B = 3;
      const apeHost = randn(rng, CHUNK_TOKENS * HEAD_DIM);
      const kvHost = randn(rng, B * D * KV_SCORE_COLS);
      const mk = (be: OnlineMtpBackend) =>
        new OnlineMtpController({
          backend: be,
          numReqSlots: N,
          maxDraftTokens: D,
          numDraftTokens: D,
          numLayers: L,
          stateDtype: "fp32",
        });
      const cc = mk(cpu);
      const gc = mk(gpu);
      const init = new Float32Array(cc.stateRows * STATE_ROW_ELEMS);
      for (let r = 0; r < cc.stateRows; r++) init.set(randomStateRow(rng), r * STATE_ROW_ELEMS);
      for (let l = 0; l < L; l++) {
        cpu.writeStateRows(cc.layers[l]!, 0, init);
        gpu.writeStateRows(gc.layers[l]!, 0, init);
      }
      const runs = [
        [cpu, cc],
        [gpu, gc],
      ] as const;
      const handles = runs.map(([be]) => ({
        rpi: be.uploadIndex(Int32Array.of(1, 3, 5)),
        seq: be.uploadIndex(new Int32Array(B)),
        kv: be.uploadMatrix(kvHost, B * D, KV_SCORE_COLS),
        ape: be.uploadMatrix(apeHost, CHUNK_TOKENS, HEAD_DIM),
      }));
      // an own property shadows the (read-only) prototype method; deleted again below
      Object.defineProperty(ctx, "synchronize", {
        configurable: true,
        value: function (this: unknown) {
          syncs++;
          return orig.call(this);
        },
      });
      try {
        for (let step = 0; step < 6; step++) {
          const seq = Int32Array.of(120 + 3 * step, 1000 + 2 * step, 7 + step); // crosses a chunk boundary at step 3
          runs.forEach(([be, c], i) => {
            const h = handles[i]!;
            be.writeIndex(h.seq, seq); // overwrites what the previous step's kernels read: must wait for them
            c.prepareForward("target_verify", h.rpi, h.seq);
            for (let l = 0; l < L; l++) c.writePrefixStates(l, h.kv, h.ape, "target_verify");
          });
        }
        expect(syncs, "stream synchronisations inside the verify loop").toBe(0);
      } finally {
        delete (ctx as { synchronize?: unknown }).synchronize;
      }
      gpu.synchronize();
      for (let l = 0; l < L; l++) {
        const st = compareRows(
          gpu.readStateRows(gc.layers[l]!, 0, gc.stateRows),
          cpu.readStateRows(cc.layers[l]!, 0, cc.stateRows),
          { atol: 2e-4, rtol: 2e-4 },
        );
        expect(st.violations, `layer ${l}`).toBe(0);
      }
    },
  );
});
