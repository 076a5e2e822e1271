import { describe, expect, test } from "vitest";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import {
  FORCE_CPU_ENV,
  KernelsCudaUnavailableError,
  loadNative,
  loadNativeUnchecked,
  probe,
  planPrefillGpu,
  getDefaultContext,
} from "../src/index.js";

const EXPORTS = [
  "probe",
  "compiledWithCuda",
  "Context",
  "DeviceBuffer",
  "planPrefill",
  "planPrefillDevice",
  "planDecode",
  "planDecodeDevice",
  "planPrefillAsync",
  "planDecodeAsync",
  "bench",
  "maxGpuBatch",
  "planStatusBytes",
];

describe("loader and probe", () => {
  test("probe never throws and explains itself", () => {
    const p = probe();
    expect(typeof p.ok).toBe("boolean");
    expect(typeof p.compiledWithCuda).toBe("boolean");
    expect(typeof p.deviceCount).toBe("number");
    if (!p.ok) expect(p.reason).toMatch(/not built|without CUDA|driver|no CUDA device|DSV4KV_FORCE_CPU|failed/);
    else expect(p.device?.sm).toBeGreaterThanOrEqual(90);
    console.log(`probe: ${JSON.stringify(p)}`);
  });
  test(`${FORCE_CPU_ENV}=1 forces the CPU path; unavailable calls throw one error listing causes and fixes`, () => {
    const old = process.env[FORCE_CPU_ENV];
    process.env[FORCE_CPU_ENV] = "1";
    try {
      expect(probe().ok).toBe(false);
      expect(probe().reason).toContain(FORCE_CPU_ENV);
      let err: unknown;
      try {
        planPrefillGpu({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [6], extendLens: [6] });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KernelsCudaUnavailableError);
      expect((err as Error).message).toMatch(/Possible causes and solutions/);
      expect(() => loadNative()).toThrow(KernelsCudaUnavailableError);
    } finally {
      if (old === undefined) delete process.env[FORCE_CPU_ENV];
      else process.env[FORCE_CPU_ENV] = old;
    }
  });
  test("the addon (CUDA or CPU-only build) has the same exports when it is built", (ctx) => {
    const addon = loadNativeUnchecked();
    if (!addon) ctx.skip(`addon not built: ${probe().reason}`);
    for (const k of EXPORTS) expect(addon, k).toHaveProperty(k);
    if (!addon.compiledWithCuda) {
      expect(() => new addon.DeviceBuffer(16)).toThrow(/without CUDA/);
      expect(probe().reason).toMatch(/built without CUDA/);
    }
  });
});

const gpuTest = createGpuTest(probe, () => getDefaultContext());
describe("device memory", () => {
  gpuTest("DeviceBuffer round trip, bounds checks, CUDA errors as JS errors", ({ gpu }) => {
    const addon = loadNative();
    const b = new addon.DeviceBuffer(64, gpu);
    b.upload(new Uint32Array([1, 2, 3, 4]), 16);
    const out = new Uint32Array(4);
    b.download(out, 16);
    expect([...out]).toEqual([1, 2, 3, 4]);
    expect(() => b.upload(new Uint8Array(65))).toThrow(/do not fit/);
    expect(() => b.download(new Uint8Array(8), 60)).toThrow(/exceed/);
    b.free();
    expect(b.freed).toBe(true);
    expect(() => new addon.DeviceBuffer(2 ** 39)).toThrow(/cudaMalloc.*failed/);
  });
});
