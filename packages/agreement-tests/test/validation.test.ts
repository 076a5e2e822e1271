/** Bad input: every validation class gives the CPU planner's PlannerError code on the GPU, and the process lives on. */
import { describe, expect } from "vitest";
import { planDecode, planPrefill, type PrefillPlanOptions } from "@dsv4-kv/planner";
import { createDeviceBuffer, getDefaultContext } from "@dsv4-kv/kernels-cuda";
import {
  enqueueDecodePlan,
  enqueuePrefillPlan,
  planDecodeGpu,
  planPrefillGpu,
  readPlanStatus,
  decodePlanStatus,
  PLAN_STATUS_BYTES,
} from "@dsv4-kv/planner/gpu";
import { errorCode, gpuTest } from "./helpers.js";

const base: PrefillPlanOptions = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };

const cases: [string, PrefillPlanOptions, string][] = [
  ["ratio 2", { ...base, compressRatio: 2 }, "INVALID_RATIO"],
  ["ring not a multiple of cr", { ...base, ringSize: 18 }, "INVALID_RING"],
  ["SPS not a multiple of ring", { ...base, swaPageSize: 200 }, "INVALID_RING"],
  ["req ring with c128", { ...base, compressRatio: 128, ringSize: 256, useReqRing: true }, "REQ_RING_NEEDS_C4"],
  ["empty batch", { ...base, seqLens: [], extendLens: [] }, "BATCH_SIZE"],
  ["batch > numQ", { ...base, seqLens: [5, 5], extendLens: [1, 1], numQTokens: 1, path: "device" }, "NUM_Q_TOKENS"],
  ["numQ > 65535", { ...base, seqLens: [70000], extendLens: [65536] }, "NUM_Q_TOKENS"],
  [
    "device batch above an explicit limit",
    { ...base, seqLens: [5, 5], extendLens: [1, 1], path: "device", deviceBatchLimit: 1 },
    "BATCH_SIZE",
  ],
  ["E = 0 on the host path", { ...base, seqLens: [5, 5], extendLens: [0, 1] }, "EXTEND_LEN"],
  [
    "E < 0 on the device path",
    { ...base, seqLens: [5, 5], extendLens: [-1, 1], numQTokens: 2, path: "device" },
    "EXTEND_LEN",
  ],
  ["E > S", { ...base, seqLens: [3], extendLens: [4] }, "EXTEND_LEN"],
  ["sum(E) != numQ on the host path", { ...base, numQTokens: 8 }, "EXTEND_SUM"],
  ["sum(E) > numQ on the device path", { ...base, numQTokens: 5, path: "device" }, "EXTEND_SUM"],
  ["non-integer S", { ...base, seqLens: [518.5] }, "INVALID_ARGUMENT"],
  ["negative rid", { ...base, reqPoolIndices: [-1] }, "INVALID_ARGUMENT"],
  [
    "rid beyond req_to_token rows",
    { ...base, reqPoolIndices: [10], reqToToken: { data: new Int32Array(4 * 1024), stride: 1024 } },
    "INDEX_OUT_OF_RANGE",
  ],
  [
    "position beyond the row",
    { ...base, reqToToken: { data: new Int32Array(4 * 512), stride: 512 } },
    "INDEX_OUT_OF_RANGE",
  ],
  ["full location outside full_to_state", { ...base, fullToState: new Int32Array(100) }, "INDEX_OUT_OF_RANGE"],
  ["negative full_to_state entry", { ...base, fullToState: new Int32Array(4096).fill(-1) }, "INVALID_ARGUMENT"],
  [
    "negative SWA location via req_to_token",
    { ...base, reqToToken: { data: new Int32Array(2048).fill(-5), stride: 2048 } },
    "INDEX_OUT_OF_RANGE",
  ],
  [
    "request-ring slot beyond int32",
    { ...base, compressRatio: 128, ringSize: 256, reqPoolIndices: [2 ** 31] },
    "INT32_OVERFLOW",
  ],
  ["write pad override not an integer", { ...base, writePadOverride: 1.5 }, "INVALID_ARGUMENT"],
];

describe("bad input on the GPU", () => {
  gpuTest("each validation class raises the CPU planner's code, and the next call still works", ({ gpu }) => {
    void gpu;
    for (const [name, o, code] of cases) {
      expect(
        errorCode(() => planPrefill(o)),
        `CPU: ${name}`,
      ).toBe(code);
      expect(
        errorCode(() => planPrefillGpu(o)),
        `GPU: ${name}`,
      ).toBe(code);
      expect(planPrefillGpu(base).numWrite, `alive after ${name}`).toBe(6);
    }
    const d = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [0] };
    expect(errorCode(() => planDecode(d))).toBe("INVALID_ARGUMENT");
    expect(errorCode(() => planDecodeGpu(d))).toBe("INVALID_ARGUMENT");
    const d2 = { ...d, seqLens: [5], reqPoolIndices: [5000], reqToToken: { data: new Int32Array(2048), stride: 2048 } };
    expect(errorCode(() => planDecodeGpu(d2))).toBe(errorCode(() => planDecode(d2)));
  });

  gpuTest("device-resident inputs: the kernel reports through the status flag, writes only in bounds", ({ gpu }) => {
    void gpu;
    const ctx = getDefaultContext();
    const numQ = 8;
    const mk = (n: number) => createDeviceBuffer(n, ctx);
    const bufs = {
      seqLens: mk(8),
      extendLens: mk(8),
      planC: mk(numQ * 16),
      planW: mk(numQ * 8),
      status: mk(PLAN_STATUS_BYTES),
    };
    const ring = { compressRatio: 4, ringSize: 16, swaPageSize: 256 };
    const cfg = { ...ring, batch: 2, numQTokens: numQ };
    const run = (seq: number[], ext: number[]) => {
      bufs.seqLens.upload(new Int32Array(seq));
      bufs.extendLens.upload(new Int32Array(ext));
      enqueuePrefillPlan(cfg, bufs, { context: ctx });
      ctx.synchronize();
    };
    run([518, 20], [6, 2]);
    expect(readPlanStatus(bufs.status).numWrite).toBe(8);
    // `batch` is the enqueue call's key; planPrefill refuses keys it does not read.
    const cpu = planPrefill({ ...ring, numQTokens: numQ, seqLens: [518, 20], extendLens: [6, 2], path: "device" });
    const c = new Uint8Array(numQ * 16);
    bufs.planC.download(c);
    expect(Buffer.from(c).toString("hex")).toBe(Buffer.from(cpu.planC.bytes).toString("hex"));
    for (const [seq, ext, code] of [
      [[518, 20], [6, 30], "EXTEND_LEN"],
      [[518, 20], [6, 3], "EXTEND_SUM"],
      [[518, 20], [-6, 2], "EXTEND_LEN"],
      [[-1, 20], [0, 2], "INVALID_ARGUMENT"],
    ] as [number[], number[], string][]) {
      run(seq, ext);
      expect(errorCode(() => readPlanStatus(bufs.status))).toBe(code);
      const w = new Uint8Array(numQ * 8);
      bufs.planW.download(w);
      expect(Buffer.from(w).toString("hex")).toBe("ff".repeat(numQ * 8));
    }
    // rid outside req_to_token, device-resident
    const rids = mk(16).upload(new BigInt64Array([0n, 99n]));
    const r2t = mk(4 * 2 * 1024).upload(new Int32Array(2 * 1024));
    bufs.seqLens.upload(new Int32Array([518, 20]));
    bufs.extendLens.upload(new Int32Array([6, 2]));
    enqueuePrefillPlan(
      cfg,
      { ...bufs, reqPoolIndices: rids, reqToToken: { buffer: r2t, stride: 1024 } },
      { context: ctx },
    );
    ctx.synchronize();
    expect(errorCode(() => readPlanStatus(bufs.status))).toBe("INDEX_OUT_OF_RANGE");
    // decode on the device
    const planD = mk(2 * 16);
    enqueueDecodePlan(
      { compressRatio: 4, ringSize: 16, swaPageSize: 256, batch: 2 },
      { seqLens: bufs.seqLens, planD, status: bufs.status },
      { context: ctx },
    );
    ctx.synchronize();
    const st = new Uint8Array(PLAN_STATUS_BYTES);
    bufs.status.download(st);
    expect(decodePlanStatus(st).code).toBe(0);
    const dd = new Uint8Array(32);
    planD.download(dd);
    expect(Buffer.from(dd).toString("hex")).toBe(
      Buffer.from(planDecode({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518, 20] }).bytes).toString(
        "hex",
      ),
    );
    // buffer misuse is a JS error, not a crash
    expect(() => enqueuePrefillPlan({ ...cfg, numQTokens: 64 }, bufs, { context: ctx })).toThrow(/needs/);
    for (const b of [...Object.values(bufs), rids, r2t, planD]) b.free();
    expect(() => bufs.planC.download(new Uint8Array(16))).toThrow(/freed/);
  });
});
