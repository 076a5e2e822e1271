/**
 * OnlineC128Driver on the GPU backend (the CUDA kernels of kernels-cuda): the scenarios of online-driver.test.ts,
 * each checked against the offline oracle, and GPU == CPU entry by entry. Skipped with the probe's reason where no
 * GPU is usable.
 */
import { CpuBackend } from "@dsv4-kv/online-mtp-controller";
import { GpuBackend, probeGpuBackend } from "@dsv4-kv/online-mtp-controller/gpu";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { describe, expect } from "vitest";
import { runDriverScenario } from "./online-scenario.js";

let shared: GpuBackend | undefined;
const gpuTest = createGpuTest(probeGpuBackend, () => (shared ??= new GpuBackend()));

const CONFIGS = [
  { maxDraftTokens: 8, adaptive: true, seed: 1 },
  { maxDraftTokens: 8, adaptive: true, seed: 2 },
  { maxDraftTokens: 4, adaptive: false, seed: 4 },
  { maxDraftTokens: 1, adaptive: false, seed: 6 },
];

for (const stateDtype of ["fp32", "bf16"] as const) {
  describe(`online driver on the GPU, ${stateDtype} state`, () => {
    for (const c of CONFIGS) {
      const name = `Dmax ${c.maxDraftTokens}${c.adaptive ? " adaptive" : ""}, seed ${c.seed}`;
      gpuTest(`${name}: every entry equals the oracle, and the CPU backend's entry`, ({ gpu }) => {
        const opts = { requests: 6, steps: 160, stateDtype, ...c };
        const g = runDriverScenario(gpu, opts);
        expect(g.firstWrong).toBeNull();
        expect(g.entries).toBe(g.expected);
        expect(g.entries).toBeGreaterThan(30);
        const cpu = runDriverScenario(new CpuBackend(), opts);
        expect(cpu.wrong).toBe(0);
        expect(g.all.map((e) => [e.slot, e.position])).toEqual(cpu.all.map((e) => [e.slot, e.position]));
        // both are within the bound of the same oracle value, so within twice the bound of each other
        for (const [i, e] of g.all.entries()) {
          const other = cpu.all[i]!.values;
          const bound = g.bounds[i]!;
          for (let d = 0; d < bound.length; d++) {
            const diff = Math.abs(e.values[d]! - other[d]!);
            if (!(diff <= 2 * bound[d]!)) expect.fail(`entry ${i} channel ${d}: gpu ${e.values[d]} cpu ${other[d]}`);
          }
        }
      });
    }
  });
}
