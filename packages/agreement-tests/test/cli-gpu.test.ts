/** `dsv4-kv plan --path gpu`: the planner's `planCase` on the GPU engine returns the CPU engine's bytes. */
import { describe, expect } from "vitest";
import { cpuPlanEngine, planCase, type PlanCase } from "@dsv4-kv/planner";
import { createGpuPlanEngine } from "@dsv4-kv/planner/gpu";
import { gpuTest } from "./helpers.js";

const CASES: PlanCase[] = [
  {
    kind: "prefill",
    compressRatio: 4,
    ringSize: 16,
    swaPageSize: 256,
    seqLens: [518, 20],
    extendLens: [6, 20],
    path: "device",
  },
  {
    kind: "prefill",
    compressRatio: 4,
    ringSize: 16,
    swaPageSize: 256,
    useReqRing: true,
    seqLens: [264],
    extendLens: [10],
    reqToToken: { identity: { tokensPerReq: 1024 } },
  },
  {
    kind: "prefill",
    compressRatio: 128,
    ringSize: 256,
    swaPageSize: 256,
    seqLens: [642],
    extendLens: [6],
    useCudaGraph: true,
    numQTokens: 6,
  },
  { kind: "decode", compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [1, 700] },
  { kind: "prefill-legacy", compressRatio: 4, seqLens: [12], extendLens: [12], reqPoolIndices: [3] },
  { kind: "decode-legacy", compressRatio: 128, seqLens: [640], reqPoolIndices: [2] },
];

describe("CLI GPU engine", () => {
  gpuTest("planCase on the GPU engine gives the CPU engine's bytes for every case kind", ({ gpu }) => {
    void gpu;
    const engine = createGpuPlanEngine();
    for (const c of CASES) {
      const g = planCase(c, engine);
      const cpu = planCase(c, cpuPlanEngine);
      for (const key of ["planC", "planW", "planD"] as const) expect(g[key]?.toHex()).toBe(cpu[key]?.toHex());
    }
  });

  gpuTest("a refused case gives the CPU engine's PlannerError code on the GPU engine", ({ gpu }) => {
    void gpu;
    const engine = createGpuPlanEngine();
    const bad = { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [5], extendLens: [6] };
    expect(() => planCase(bad, engine)).toThrow(
      expect.objectContaining({ code: "EXTEND_LEN", field: "extendLens[0]" }),
    );
    expect(() => planCase({ ...bad, kind: "nope" }, engine)).toThrow(
      expect.objectContaining({ code: "INVALID_CASE", field: "kind" }),
    );
  });
});
