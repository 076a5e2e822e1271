/**
 * The asynchronous plan calls: on a GPU they give the synchronous call's bytes while the event loop keeps turning;
 * without one they reject (never throw synchronously) with the probe's reason.
 */
import { describe, expect, test } from "vitest";
import { planDecode, planPrefill, type PrefillPlanOptions } from "../src/index.js";
import { raggedExtendLens } from "../src/testing.js";
import { planDecodeGpu, planDecodeGpuAsync, planPrefillGpu, planPrefillGpuAsync } from "../src/gpu.js";
import { createContext, FORCE_CPU_ENV, KernelsCudaUnavailableError } from "@dsv4-kv/kernels-cuda";
import { gpuTest, hex, withForcedCpu } from "./gpu-helpers.js";

/** A ragged batch of `batch` requests whose extends sum to `total` (deterministic). */
function ragged(batch: number, total: number, cr: 4 | 128, ring: number): PrefillPlanOptions {
  const ext = raggedExtendLens(batch, total, 12345);
  return {
    compressRatio: cr,
    ringSize: ring,
    swaPageSize: 256,
    seqLens: ext.map((e, i) => 300 + (i % 13) + e),
    extendLens: ext,
  };
}

describe("asynchronous plan calls without a usable GPU", () => {
  test("planPrefillGpuAsync / planDecodeGpuAsync return a promise that rejects with the probe's reason", async () => {
    await withForcedCpu(async () => {
      const p = planPrefillGpuAsync({
        compressRatio: 4,
        ringSize: 16,
        swaPageSize: 256,
        seqLens: [518],
        extendLens: [6],
      });
      expect(p).toBeInstanceOf(Promise);
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KernelsCudaUnavailableError);
      expect((err as Error).message).toContain(`${FORCE_CPU_ENV}=1`);
      await expect(
        planDecodeGpuAsync({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [5] }),
      ).rejects.toBeInstanceOf(KernelsCudaUnavailableError);
    });
  });
});

describe("asynchronous plan calls on the GPU", () => {
  gpuTest(
    "same bytes as the synchronous call and the CPU planner; the event loop keeps turning while awaiting",
    async ({ gpu }) => {
      void gpu;
      for (const [cr, ring] of [
        [4, 16],
        [128, 256],
      ] as const) {
        const o = { ...ragged(1024, 60_000, cr, ring), path: "device" as const };
        let ticks = 0;
        let run = true;
        const spin = () => {
          ticks++;
          if (run) setImmediate(spin);
        };
        setImmediate(spin);
        const before = ticks;
        const plans = await Promise.all(Array.from({ length: 8 }, () => planPrefillGpuAsync(o)));
        run = false;
        expect(ticks, "setImmediate callbacks ran while the plans were in flight").toBeGreaterThan(before);
        const sync = planPrefillGpu(o);
        const cpu = planPrefill(o);
        for (const a of plans) {
          expect(a.numCompress).toBe(cpu.numCompress);
          expect(a.numWrite).toBe(cpu.numWrite);
          expect(hex(a.planC.bytes)).toBe(hex(sync.planC.bytes));
          expect(hex(a.planW.bytes)).toBe(hex(sync.planW.bytes));
          expect(hex(a.planC.bytes)).toBe(hex(cpu.planC.bytes));
          expect(hex(a.planW.bytes)).toBe(hex(cpu.planW.bytes));
        }
        const d = {
          compressRatio: cr,
          ringSize: ring,
          swaPageSize: 256,
          seqLens: Array.from({ length: 4096 }, (_, i) => 1 + ((i * 7919) % 2000)),
        };
        const dAsync = await planDecodeGpuAsync(d);
        expect(hex(dAsync.bytes)).toBe(hex(planDecodeGpu(d).bytes));
        expect(hex(dAsync.bytes)).toBe(hex(planDecode(d).bytes));
      }
    },
  );

  gpuTest(
    "refusals reject with the CPU planner's PlannerError; destroy() waits for nothing it cannot",
    async ({ gpu }) => {
      void gpu;
      const bad = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [3], extendLens: [4] };
      await expect(planPrefillGpuAsync(bad)).rejects.toMatchObject({ name: "PlannerError", code: "EXTEND_LEN" });
      const rid = {
        compressRatio: 4,
        ringSize: 16,
        swaPageSize: 256,
        seqLens: [518],
        extendLens: [6],
        reqPoolIndices: [10],
        reqToToken: { data: new Int32Array(4 * 1024), stride: 1024 },
      };
      await expect(planPrefillGpuAsync(rid)).rejects.toMatchObject({
        name: "PlannerError",
        code: "INDEX_OUT_OF_RANGE",
      });
      const ctx = createContext(0);
      const pending = planPrefillGpuAsync({ ...ragged(512, 30_000, 4, 16), path: "device" }, { context: ctx });
      let destroyErr: unknown;
      try {
        ctx.destroy();
      } catch (e) {
        destroyErr = e;
      }
      const plan = await pending;
      expect(plan.numWrite).toBeGreaterThan(0);
      // Either the call had already settled (destroy succeeded) or destroy refused with the in-flight count.
      if (destroyErr) {
        expect((destroyErr as { code?: string }).code).toBe("CONTEXT");
        expect((destroyErr as Error).message).toMatch(/in flight/);
        ctx.destroy();
      }
    },
  );
});
