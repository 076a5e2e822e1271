/** Device-resident int64 lengths (upstream's tensors): same bytes as int32, narrowing refused through the status. */
import { describe, expect } from "vitest";
import { planDecode, planPrefill } from "../src/index.js";
import { enqueueDecodePlan, enqueuePrefillPlan, readPlanStatus } from "../src/gpu.js";
import { createDeviceBuffer, type DeviceBuffer, getDefaultContext } from "@dsv4-kv/kernels-cuda";
import { PLAN_STATUS_BYTES } from "@dsv4-kv/kernels-cuda/internal";
import { codeOf as code, gpuTest, hex } from "./gpu-helpers.js";

describe("int64 device lengths", () => {
  gpuTest(
    "prefill (small and general kernels) and decode match the int32 call; values beyond int32 are refused",
    ({ gpu }) => {
      void gpu;
      const ctx = getDefaultContext();
      for (const batch of [3, 32, 33, 300]) {
        for (const [cr, ring] of [
          [4, 16],
          [128, 256],
        ] as const) {
          const ext = Array.from({ length: batch }, (_, i) => 1 + ((i * 37) % 11));
          const seq = ext.map((e, i) => e + 500 + ((i * 101) % 700));
          const numQ = ext.reduce((a, b) => a + b, 0) + 5;
          const cfg = { compressRatio: cr, ringSize: ring, swaPageSize: 256, batch, numQTokens: numQ };
          const mk = (n: number) => createDeviceBuffer(n, ctx);
          const bufs = {
            seqLens: mk(batch * 8),
            extendLens: mk(batch * 8),
            planC: mk(numQ * 16),
            planW: mk(numQ * 8),
            status: mk(PLAN_STATUS_BYTES),
          };
          bufs.seqLens.upload(BigInt64Array.from(seq, BigInt));
          bufs.extendLens.upload(BigInt64Array.from(ext, BigInt));
          enqueuePrefillPlan({ ...cfg, lensDtype: "int64" }, bufs, { context: ctx });
          ctx.synchronize();
          const st = readPlanStatus(bufs.status);
          const cpu = planPrefill({
            compressRatio: cr,
            ringSize: ring,
            swaPageSize: 256,
            seqLens: seq,
            extendLens: ext,
            numQTokens: numQ,
            path: "device",
          });
          expect(st.numCompress).toBe(cpu.numCompress);
          expect(st.numWrite).toBe(cpu.numWrite);
          const c = new Uint8Array(numQ * 16);
          const w = new Uint8Array(numQ * 8);
          bufs.planC.download(c);
          bufs.planW.download(w);
          expect(hex(c), `B=${batch} c${cr} planC`).toBe(hex(cpu.planC.bytes));
          expect(hex(w), `B=${batch} c${cr} planW`).toBe(hex(cpu.planW.bytes));
          // S = 2^32 + 518 would narrow to 518 upstream; here it is refused, and nothing is written out of bounds.
          const big = [...seq];
          big[batch - 1] = 2 ** 32 + 518;
          bufs.seqLens.upload(BigInt64Array.from(big, BigInt));
          enqueuePrefillPlan({ ...cfg, lensDtype: "int64" }, bufs, { context: ctx });
          ctx.synchronize();
          expect(code(() => readPlanStatus(bufs.status))).toBe("INT32_OVERFLOW");
          expect(() => readPlanStatus(bufs.status)).toThrow(new RegExp(`seqLens\\[${batch - 1}\\]`));
          const bigE = [...ext];
          bigE[0] = -(2 ** 40);
          bufs.seqLens.upload(BigInt64Array.from(seq, BigInt));
          bufs.extendLens.upload(BigInt64Array.from(bigE, BigInt));
          enqueuePrefillPlan({ ...cfg, lensDtype: "int64" }, bufs, { context: ctx });
          ctx.synchronize();
          expect(() => readPlanStatus(bufs.status)).toThrow(/extendLens\[0\]/);
          // decode
          const planD = mk(batch * 16);
          const decodeWith = (lens: number[]) => {
            bufs.seqLens.upload(BigInt64Array.from(lens, BigInt));
            const cfg = { compressRatio: cr, ringSize: ring, swaPageSize: 256, batch, lensDtype: "int64" as const };
            enqueueDecodePlan(cfg, { seqLens: bufs.seqLens, planD, status: bufs.status }, { context: ctx });
            ctx.synchronize();
          };
          decodeWith(seq);
          readPlanStatus(bufs.status);
          const d = new Uint8Array(batch * 16);
          planD.download(d);
          expect(hex(d)).toBe(
            hex(planDecode({ compressRatio: cr, ringSize: ring, swaPageSize: 256, seqLens: seq }).bytes),
          );
          decodeWith(big);
          expect(code(() => readPlanStatus(bufs.status))).toBe("INT32_OVERFLOW");
          // an int32-sized buffer is refused for int64 lengths before launch
          const small: DeviceBuffer = mk(batch * 4);
          expect(() =>
            enqueuePrefillPlan({ ...cfg, lensDtype: "int64" }, { ...bufs, seqLens: small }, { context: ctx }),
          ).toThrow(
            expect.objectContaining({ name: "KernelsCudaError", code: "DEVICE_BUFFER", field: "seqLens.byteLength" }),
          );
          expect(
            code(() => enqueuePrefillPlan({ ...cfg, lensDtype: "int16" as "int64" }, bufs, { context: ctx })),
          ).toBe("INVALID_ARGUMENT");
          for (const b of [...Object.values(bufs), planD, small]) b.free();
        }
      }
    },
  );
});
