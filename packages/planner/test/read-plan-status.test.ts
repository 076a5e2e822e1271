// readPlanStatus refuses what is not a status region without reaching a GPU, so CI (no GPU) runs it; it threw
// TypeError / RangeError on such values before (moved from kernels-cuda: D47).
import { KernelsCudaError } from "@dsv4-kv/kernels-cuda";
import { PLAN_STATUS_BYTES } from "@dsv4-kv/kernels-cuda/internal";
import { thrownError } from "@dsv4-kv/errors/testing";
import { describe, expect, test } from "vitest";
import { readPlanStatus } from "../src/gpu.js";

const refusal = (fn: () => unknown): KernelsCudaError => thrownError(fn, KernelsCudaError);

describe("readPlanStatus refuses what is not a status region", () => {
  test("readPlanStatus({}), null, a short or freed buffer", () => {
    expect(refusal(() => readPlanStatus({} as never))).toMatchObject({ code: "INVALID_TYPE", field: "status" });
    expect(refusal(() => readPlanStatus(null as never))).toMatchObject({ code: "INVALID_TYPE", field: "status" });
    const short = { byteLength: 16, freed: false, download: () => undefined };
    expect(refusal(() => readPlanStatus(short as never))).toMatchObject({
      code: "DEVICE_BUFFER",
      field: "status.byteLength",
      value: 16,
    });
    const freed = { byteLength: PLAN_STATUS_BYTES, freed: true, download: () => undefined };
    expect(refusal(() => readPlanStatus(freed as never))).toMatchObject({ code: "DEVICE_BUFFER", field: "status" });
  });
});
