/**
 * The data-level scenarios of scenario.test.ts on the GPU backend (the CUDA kernels of kernels-cuda), with the CPU
 * backend as the mirror of every batch: every committed entry equals the offline compression of its window (gpu
 * bound), GPU entries equal CPU entries within entryTolerance's gpuVsCpu bound and the ring rows bit for bit; the
 * pre-fix pad corrupts GPU entries too; online c128 on the controller's GPU backend agrees with ring c128 on the
 * GPU. Skipped with the probe's reason where no GPU is usable.
 */
import { GpuBackend, probeGpuBackend } from "@dsv4-kv/online-mtp-controller/gpu";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { describe, expect } from "vitest";
import { GpuCompressBackend, probeGpuCompressBackend } from "../src/gpu.js";
import { type CompressScenarioOptions, runCompressScenario, scenarioStateRows } from "../src/index.js";
import { RINGS, cpuBackendFor } from "./scenario-cases.js";

type MakeGpu = (o: CompressScenarioOptions) => GpuCompressBackend;
const gpuTest = createGpuTest(
  probeGpuCompressBackend,
  (): MakeGpu => (o) =>
    new GpuCompressBackend({
      compressRatio: o.compressRatio,
      headDim: o.headDim ?? 512,
      stateDtype: o.stateDtype ?? "fp32",
      stateRows: scenarioStateRows(o),
    }),
);

let onlineGpu: GpuBackend | undefined;
const onlineTest = createGpuTest(
  () => {
    const ring = probeGpuCompressBackend();
    return ring.ok ? probeGpuBackend() : ring;
  },
  () => (onlineGpu ??= new GpuBackend()),
);

/** Runs `options` on the GPU with the CPU backend as the mirror; disposes the GPU backend. */
function onGpu(gpu: MakeGpu, options: CompressScenarioOptions) {
  const g = gpu(options);
  try {
    return runCompressScenario(options, g, undefined, cpuBackendFor(options));
  } finally {
    g.dispose();
  }
}

describe("GPU backend: derived pad, every entry right, GPU == CPU", () => {
  for (const ring of RINGS) {
    for (const stateDtype of ["fp32", "bf16"] as const) {
      for (const [d, adaptive] of [
        [4, false],
        [8, true],
        [ring.pad, false],
      ] as const) {
        const name = `${ring.name}, ${stateDtype}, D ${d}${adaptive ? " adaptive" : ""}`;
        gpuTest(name, ({ gpu }) => {
          for (const seed of [1, 2]) {
            const o = { ...ring.options, stateDtype, draftTokens: d, adaptive, seed, steps: ring.steps };
            const r = onGpu(gpu, o);
            expect(r.backend).toBe("gpu");
            expect(r.firstWrong).toBeNull();
            expect(r.wrongEntries).toBe(0);
            expect(r.wrongRingRows).toBe(0);
            expect(r.entries).toBeGreaterThan(10);
            const m = r.mirror!;
            expect(m.backend).toBe("cpu");
            expect(m.entries).toBe(r.entries);
            expect(m.entryMismatches).toBe(0);
            expect(m.ringRows).toBe(r.ringRowsChecked);
            expect(m.ringRowMismatches).toBe(0);
          }
        });
      }
    }
  }

  gpuTest("head dim 512, c4 paged: every entry right, GPU == CPU", ({ gpu }) => {
    const r = onGpu(gpu, { compressRatio: 4, headDim: 512, draftTokens: 10, adaptive: true, steps: 60 });
    expect(r.wrongEntries).toBe(0);
    expect(r.mirror).toMatchObject({ entryMismatches: 0, ringRowMismatches: 0 });
  });

  gpuTest("the pre-fix device pad corrupts the GPU's entries exactly as the CPU's", ({ gpu }) => {
    const o = { compressRatio: 4, headDim: 128, draftTokens: 8, padFormula: "pre-fix-device" } as const;
    const r = onGpu(gpu, o);
    expect(r.wrongEntries).toBeGreaterThan(0);
    expect(r.firstWrong!.cause).toMatch(/ring did not hold/);
    const cpu = runCompressScenario(o, cpuBackendFor(o));
    expect(r.wrongEntries).toBe(cpu.wrongEntries);
    expect(r.firstWrong!.position).toBe(cpu.firstWrong!.position);
    expect(r.mirror).toMatchObject({ ringRowMismatches: 0 });
  });
});

describe("online c128 on the controller's GPU backend agrees with ring c128 on the GPU", () => {
  for (const stateDtype of ["fp32", "bf16"] as const) {
    onlineTest(`${stateDtype} state, adaptive D 8`, ({ gpu }) => {
      const o = { compressRatio: 128, online: true, stateDtype, draftTokens: 8, adaptive: true, steps: 80 } as const;
      const ring = new GpuCompressBackend({
        compressRatio: 128,
        headDim: 512,
        stateDtype,
        stateRows: scenarioStateRows(o),
      });
      try {
        const r = runCompressScenario(o, ring, gpu);
        expect(r.firstOnlineMismatch).toBeNull();
        expect(r.onlineMismatches).toBe(0);
        expect(r.onlineEntries).toBe(r.entries);
        expect(r.wrongEntries).toBe(0);
      } finally {
        ring.dispose();
      }
    });
  }
});
