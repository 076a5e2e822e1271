/** `dsv4-kv plan --path gpu` hook: the GPU case planner returns the CPU case planner's bytes. */
import { describe, expect } from "vitest";
import { planPrefill, planDecode } from "@dsv4-kv/planner";
import { createCasePlanner, type GpuPlanCase } from "@dsv4-kv/kernels-cuda";
import { gpuTest } from "./helpers.js";

const cpuCase = (c: GpuPlanCase) => {
  if (c.kind === "decode") return { planD: planDecode({ compressRatio: c.compressRatio, ringSize: c.ringSize!, swaPageSize: c.swaPageSize!, seqLens: c.seqLens }) };
  const p = planPrefill({ compressRatio: c.compressRatio, ringSize: c.ringSize!, swaPageSize: c.swaPageSize!, seqLens: c.seqLens, extendLens: c.extendLens!, path: c.path });
  return { planC: p.planC, planW: p.planW };
};

describe("CLI GPU engine hook", () => {
  gpuTest("createCasePlanner plans prefill and decode cases with the CPU bytes", async ({ gpu }) => {
    void gpu;
    const gpuCase = createCasePlanner(cpuCase);
    const pre: GpuPlanCase = { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518, 20], extendLens: [6, 20], path: "device" };
    const g = await gpuCase(pre);
    const c = cpuCase(pre) as { planC: { toHex(): string }; planW: { toHex(): string } };
    expect(g.planC!.toHex()).toBe(c.planC.toHex());
    expect(g.planW!.toHex()).toBe(c.planW.toHex());
    const dec: GpuPlanCase = { kind: "decode", compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [1, 700] };
    expect((await gpuCase(dec)).planD!.toHex()).toBe((cpuCase(dec) as { planD: { toHex(): string } }).planD.toHex());
  });
});
