// Refusals of kernels-cuda that reach no GPU, so CI (no GPU) runs them. The plan-status decoder threw
// TypeError / RangeError on what is not a status region; the addon refused `new Context(1025)` as "must be a
// non-negative integer", and cast a byte offset of 1e30 to an integer before checking its range (undefined behaviour).
import { thrownError } from "@dsv4-kv/errors/testing";
import { describe, expect, test } from "vitest";
import { KernelsCudaError, probe } from "../src/index.js";
import { PLAN_STATUS_BYTES, decodePlanStatus } from "../src/internal.js";
import { loadNativeUnchecked } from "../src/testing.js";
import { gpuTest } from "./helpers.js";

const refusal = (fn: () => unknown): KernelsCudaError => thrownError(fn, KernelsCudaError);

describe("the plan status decoder refuses what is not a status region", () => {
  test("decodePlanStatus of a short buffer or a non-Uint8Array", () => {
    expect(refusal(() => decodePlanStatus(new Uint8Array(10)))).toMatchObject({
      code: "DEVICE_BUFFER",
      field: "bytes.byteLength",
      value: 10,
    });
    expect(refusal(() => decodePlanStatus([0, 0] as never))).toMatchObject({ code: "INVALID_TYPE", field: "bytes" });
    expect(decodePlanStatus(new Uint8Array(PLAN_STATUS_BYTES)).code).toBe(0);
  });
});

describe("the addon range-checks numbers as doubles before any cast (host code; every kernel's PTX unchanged)", () => {
  test("new Context(1025), 1e30, -1, 1.5: the device index rule, with its range", (ctx) => {
    const addon = loadNativeUnchecked();
    if (!addon) return ctx.skip(`addon not built: ${probe().reason}`);
    for (const device of [1025, 1e30, -1, 1.5, Number.NaN]) {
      const e = refusal(() => new addon.Context(device));
      expect(e).toMatchObject({ code: "INVALID_ARGUMENT", field: "device" });
      expect(e.rule).toBe("must be a device index: an integer in [0, 1024]");
    }
  });
  test("online-MTP copyToDevice / copyToHost: byteOffset 1e30, -1, 0.5 refused before ctx and buf are read", (ctx) => {
    const addon = loadNativeUnchecked();
    if (!addon) return ctx.skip(`addon not built: ${probe().reason}`);
    for (const call of ["copyToDevice", "copyToHost"] as const) {
      for (const off of [1e30, -1, 0.5, 2 ** 53]) {
        const e = refusal(() => addon.onlineMtp[call]({} as never, {} as never, new Uint8Array(4), off));
        expect(e).toMatchObject({ code: "INVALID_ARGUMENT", field: "byteOffset", value: off });
        expect(e.rule).toBe("must be an integer in [0, 2^53 - 1]");
      }
      // A valid offset goes on to the context, which {} is not.
      expect(refusal(() => addon.onlineMtp[call]({} as never, {} as never, new Uint8Array(4), 4)).field).toBe("ctx");
    }
  });
});

describe("DeviceBuffer copies: the byte offset is range-checked as a double (needs a GPU for a buffer)", () => {
  gpuTest("upload / download with byteOffset 1e30, -1, 0.5 or 2^53 refuse by name; in range it copies", ({ gpu }) => {
    const addon = loadNativeUnchecked()!;
    const b = new addon.DeviceBuffer(64, gpu);
    try {
      for (const off of [1e30, -1, 0.5, 2 ** 53]) {
        for (const copy of [() => b.upload(new Uint8Array(4), off), () => b.download(new Uint8Array(4), off)]) {
          const e = refusal(copy);
          expect(e).toMatchObject({ code: "INVALID_ARGUMENT", value: off });
          expect(e.rule).toBe("must be an integer in [0, 2^53 - 1]");
        }
      }
      b.upload(Uint8Array.of(1, 2, 3, 4), 60);
      const out = new Uint8Array(4);
      b.download(out, 60);
      expect([...out]).toEqual([1, 2, 3, 4]);
    } finally {
      b.free();
    }
  });
});
