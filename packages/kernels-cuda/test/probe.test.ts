import { describe, expect, test } from "vitest";
import { Dsv4KvError } from "@dsv4-kv/errors";
import { createContext, FORCE_CPU_ENV, KernelsCudaError, KernelsCudaUnavailableError, probe } from "../src/index.js";
import { loadNative } from "../src/internal.js";
import { loadNativeUnchecked } from "../src/testing.js";
import { addonCandidates, selectAddon } from "../src/addon-loader.js";
import { ADDON_PATH_ENV } from "../src/env.js";
import { defaultLoaderHost } from "../src/native.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gpuTest, withForcedCpu } from "./helpers.js";

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
  test("probe says which binary loaded, every candidate rejected before it, and the cause as data", () => {
    const p = probe();
    const sources = ["override", "source-build", "platform-cuda", "platform-cpu"];
    expect(p.addonPath).toBe(p.addon?.path ?? null);
    if (p.addon) {
      expect(sources).toContain(p.addon.source);
      expect(p.addon.kind).toBe(p.compiledWithCuda ? "cuda" : "cpu");
    } else expect(p.noGpu).toBe("no-addon");
    for (const r of p.rejected) {
      expect(sources).toContain(r.source);
      expect(["not-found", "load-failed", "wrong-platform"]).toContain(r.reason);
      expect(r.detail).not.toBe("");
    }
    // Candidates come in order: the rejected ones precede the loaded one.
    const order = [...p.rejected.map((r) => r.source), ...(p.addon ? [p.addon.source] : [])];
    expect(order).toEqual([...order].sort((a, b) => sources.indexOf(a) - sources.indexOf(b)));
    expect(p.noGpu === null).toBe(p.ok);
  });
  test("a file that is not an addon is rejected with the dlopen message, and the search goes on", () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4kv-loader-"));
    const bogus = join(dir, "dsv4kv_kernels.node");
    writeFileSync(bogus, "not an ELF file");
    const host = { ...defaultLoaderHost(), env: { [ADDON_PATH_ENV]: bogus } };
    const r = selectAddon(host, addonCandidates(host), (m) => ({ addon: m, kind: "cpu" as const }));
    expect(r.rejected[0]).toMatchObject({ source: "override", path: bogus, reason: "load-failed" });
    expect(r.rejected[0]!.detail).toMatch(/ELF|invalid|too short/i);
    expect(r.loaded?.source).not.toBe("override");
  });
  test(`${FORCE_CPU_ENV}=1 forces the CPU path; unavailable calls throw one error listing causes and fixes`, async () => {
    await withForcedCpu(() => {
      expect(probe().ok).toBe(false);
      expect(probe().reason).toContain(FORCE_CPU_ENV);
      let err: unknown;
      try {
        createContext(0);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KernelsCudaUnavailableError);
      expect(Dsv4KvError.isInstance(err) && KernelsCudaError.isInstance(err)).toBe(true);
      const e = err as KernelsCudaUnavailableError;
      expect(e.code).toBe("GPU_UNAVAILABLE");
      expect(e.params.probe).toEqual(e.probe);
      expect(e.probe.reason).toContain(FORCE_CPU_ENV);
      expect(e.params.noGpu).toBe("forced-cpu");
      expect(e.rule).toMatch(/Possible causes and solutions/);
      expect(e.rule).not.toMatch(/pnpm --filter/);
      expect(e.rule).toContain("npm install @dsv4-kv/kernels-cuda-linux-x64");
      expect(e.rule).toContain("npx dsv4-kv-kernels-build");
      expect(() => loadNative()).toThrow(KernelsCudaUnavailableError);
    });
  });
  test("the addon (CUDA or CPU-only build) has the same exports when it is built", (ctx) => {
    const addon = loadNativeUnchecked();
    if (!addon) return ctx.skip(`addon not built: ${probe().reason}`);
    for (const k of EXPORTS) expect(addon, k).toHaveProperty(k);
    if (!addon.compiledWithCuda) {
      expect(() => new addon.DeviceBuffer(16)).toThrow(
        expect.objectContaining({ name: "KernelsCudaError", code: "GPU_UNAVAILABLE" }),
      );
      expect(probe().reason).toMatch(/built without CUDA/);
    }
  });
  test("native refusals reach JS as KernelsCudaErrors built from the addon's fields (one boundary)", (ctx) => {
    const addon = loadNativeUnchecked();
    if (!addon) return ctx.skip(`addon not built: ${probe().reason}`);
    const thrown = (f: () => unknown): KernelsCudaError => {
      try {
        f();
      } catch (e) {
        return e as KernelsCudaError;
      }
      throw new Error("expected a throw");
    };
    const size = thrown(() => new addon.DeviceBuffer(-1));
    expect(KernelsCudaError.isInstance(size)).toBe(true);
    expect(size).toMatchObject({ code: "INVALID_ARGUMENT", field: "byteLength", value: -1 });
    expect(size.params.nativeCode).toBe("ERR_OUT_OF_RANGE");
    const wp = { stateType: 0, batch: 1, numVerify: 4, numReqSlots: 4, bankStrideRows: 6, kvScore: {} };
    const type = thrown(() => addon.onlineMtp.writePrefix(null as never, wp as never));
    expect(type).toMatchObject({ code: "INVALID_TYPE", field: "kvScore", rule: "must be a DeviceBuffer" });
    if (addon.compiledWithCuda && !probe().ok) {
      // A CUDA build without a driver: creating a context fails in the runtime, reported with its CUDA fields.
      const cuda = thrown(() => new addon.Context(0));
      expect(cuda.code).toBe("NATIVE");
      expect(cuda.params).toMatchObject({ cudaCall: "cudaGetDeviceCount(&count)" });
      expect(typeof cuda.params.cudaError).toBe("number");
      expect(typeof cuda.params.cudaName).toBe("string");
    }
  });
});
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
    b.fill(255);
    expect(() => b.fill(256)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", field: "byte", value: 256 }));
    expect(() => b.fill(1.5)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", field: "byte" }));
    expect(() => b.fill("1" as never)).toThrow(expect.objectContaining({ code: "INVALID_TYPE", field: "byte" }));
    b.free();
    expect(b.freed).toBe(true);
    expect(() => new addon.DeviceBuffer(2 ** 39)).toThrow(/cudaMalloc.*failed/);
    expect(() => new addon.DeviceBuffer(2 ** 39)).toThrow(
      expect.objectContaining({
        code: "NATIVE",
        params: expect.objectContaining({ cudaName: "cudaErrorMemoryAllocation" }),
      }),
    );
    const ctx = createContext(0);
    ctx.destroy();
    expect(() => ctx.synchronize()).toThrow(expect.objectContaining({ name: "KernelsCudaError", code: "CONTEXT" }));
  });
});
