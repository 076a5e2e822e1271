/**
 * The GPU backend against the CPU reference: entries within entryTolerance's gpuVsCpu bound (and within its gpu bound
 * of the oracle), state bits equal after every step, and the kernels' device error word mapped to the host
 * validator's CompressError. Skipped with the probe's reason where no GPU is usable.
 */
import { type GpuContext, createContext } from "@dsv4-kv/kernels-cuda";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { describe, expect } from "vitest";
import type { CompressGeometry, RingCompressBackend } from "../src/backend.js";
import {
  CompressError,
  CpuCompressBackend,
  entryTolerance,
  validateDecodeBatch,
  validatePrefillBatch,
} from "../src/index.js";
import { injectDeviceRowChecksOnly } from "../src/gpu-backend.js";
import { GpuCompressBackend, probeGpuCompressBackend } from "../src/gpu.js";
import { BAD_CASES, type BadCase, EDGE_OK, badGeometry } from "./bad-plans.js";
import { Harness, firstDifference } from "./helpers.js";
import { CONFIGS, configName, runStepsPaired } from "./steps.js";
import { ADVERSARIAL, poolFromRing } from "./windows.js";

/** `deviceRowChecksOnly`: skip the host's plan-row rules so the kernels' re-check meets the bad rows. */
type MakeGpu = (g: CompressGeometry, deviceRowChecksOnly?: boolean) => GpuCompressBackend;
const made: GpuCompressBackend[] = [];
let context: GpuContext | undefined;
// One context for every backend of the file (a backend without one creates and destroys its own).
const gpuTest = createGpuTest(
  probeGpuCompressBackend,
  (): MakeGpu => (g, deviceRowChecksOnly) => {
    context ??= createContext(0);
    const b = new GpuCompressBackend(g, { context });
    if (deviceRowChecksOnly) injectDeviceRowChecksOnly(b);
    made.push(b);
    return b;
  },
);

function disposeAll(): void {
  for (const b of made.splice(0)) b.dispose();
}

function stateBits(b: RingCompressBackend): Uint32Array | Uint16Array {
  return b.readStateBits(0, b.geometry.stateRows);
}

describe("GPU == CPU on the planner's plans", () => {
  for (const o of CONFIGS) {
    gpuTest(`${configName(o)}: entries within gpuVsCpu, state bits equal`, ({ gpu }) => {
      try {
        const cpu = new CpuCompressBackend(Harness.geometry(o));
        const g = gpu(Harness.geometry(o));
        const t = entryTolerance({
          compressRatio: o.cr,
          maxAbsKv: 2,
          maxAbsScore: 4,
          ringElementsBf16: o.dtype === "bf16",
        });
        let entries = 0;
        let maxDiff = 0;
        runStepsPaired(o, g, cpu, (r, want, label) => {
          expect(r.maxRatio, `${label}: GPU vs oracle / gpu bound`).toBeLessThanOrEqual(1);
          entries += r.entries;
          expect(r.out.length, label).toBe(want.out.length);
          for (let i = 0; i < want.out.length; i++) {
            const a = r.out[i]!;
            const b = want.out[i]!;
            if (Number.isNaN(b) !== Number.isNaN(a)) expect.fail(`${label}: out[${i}] = ${a}, CPU ${b}`);
            if (!Number.isNaN(b)) maxDiff = Math.max(maxDiff, Math.abs(a - b));
          }
          const diff = firstDifference(stateBits(g), stateBits(cpu));
          expect(diff, `${label}: first differing state element`).toBe(-1);
        });
        expect(entries).toBeGreaterThan(0);
        expect(maxDiff).toBeLessThanOrEqual(t.gpuVsCpu);
      } finally {
        disposeAll();
      }
    });
  }
});

function runCase(b: RingCompressBackend, c: BadCase): Float32Array {
  b.setApe(new Float32Array(b.geometry.compressRatio === 4 ? 8 * 128 : 128 * 128).fill(0.25));
  return c.op === "prefill" ? b.prefill(c.prefill!) : b.decode(c.decode!);
}

function hostError(c: BadCase): CompressError {
  try {
    if (c.op === "prefill") validatePrefillBatch(badGeometry(c.cr), c.prefill!);
    else validateDecodeBatch(badGeometry(c.cr), c.decode!);
  } catch (e) {
    if (CompressError.isInstance(e)) return e as CompressError;
    throw e;
  }
  throw new Error(`${c.name}: the host validator accepts it`);
}

describe("GPU device error word → the host validator's CompressError", () => {
  for (const c of BAD_CASES) {
    gpuTest(`${c.name}: ${c.field}`, ({ gpu }) => {
      try {
        const want = hostError(c);
        const g = gpu(badGeometry(c.cr), true);
        let got: unknown;
        try {
          runCase(g, c);
        } catch (e) {
          got = e;
        }
        expect(CompressError.isInstance(got), String(got)).toBe(true);
        const e = got as CompressError;
        expect([e.code, e.field, e.value, e.rule]).toEqual([want.code, want.field, want.value, want.rule]);
        expect([e.field, e.value]).toEqual([c.field, c.value]);
        // The word was cleared: a good call afterwards succeeds.
        const ok = EDGE_OK.find((x) => x.op === c.op && x.cr === c.cr);
        if (ok) runCase(g, ok);
        // With the host validator on, the same refusal comes before any launch.
        const checked = gpu(badGeometry(c.cr));
        expect(() => runCase(checked, c)).toThrowError(expect.objectContaining({ field: c.field }));
      } finally {
        disposeAll();
      }
    });
  }
  for (const c of EDGE_OK) {
    gpuTest(`accepted: ${c.name}, same output as the CPU`, ({ gpu }) => {
      try {
        const g = gpu(badGeometry(c.cr), true);
        const cpu = new CpuCompressBackend(badGeometry(c.cr));
        const init = new Float32Array(g.geometry.stateRows * g.rowElems).map((_, i) => Math.cos(i));
        g.writeStateRows(0, init);
        cpu.writeStateRows(0, init);
        const a = runCase(g, c);
        const b = runCase(cpu, c);
        const t = entryTolerance({ compressRatio: c.cr, maxAbsKv: 1, maxAbsScore: 1.25, ringElementsBf16: false });
        expect(a.length).toBe(b.length);
        for (let i = 0; i < a.length; i++) {
          if (Number.isNaN(b[i]!)) expect(a[i]).toBeNaN();
          else expect(Math.abs(a[i]! - b[i]!)).toBeLessThanOrEqual(t.gpuVsCpu);
        }
        expect(firstDifference(stateBits(g), stateBits(cpu))).toBe(-1);
      } finally {
        disposeAll();
      }
    });
  }
});

describe("GPU on the adversarial windows: within the gpu bound of the oracle and gpuVsCpu of the CPU", () => {
  for (const a of ADVERSARIAL) {
    gpuTest(a.name, ({ gpu }) => {
      try {
        const g = poolFromRing(4, a.dtype, a.rows, a.ape, (geo) => gpu(geo));
        const c = poolFromRing(4, a.dtype, a.rows, a.ape);
        const t = entryTolerance({
          compressRatio: 4,
          maxAbsKv: a.maxAbsKv,
          maxAbsScore: a.maxAbsScore,
          ringElementsBf16: a.dtype === "bf16",
        });
        expect(g.err).toBeLessThanOrEqual(t.gpu);
        let diff = 0;
        for (let d = 0; d < g.out.length; d++) diff = Math.max(diff, Math.abs(g.out[d]! - c.out[d]!));
        expect(diff).toBeLessThanOrEqual(t.gpuVsCpu);
      } finally {
        disposeAll();
      }
    });
  }
});
