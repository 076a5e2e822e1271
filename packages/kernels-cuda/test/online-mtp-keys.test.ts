/**
 * The online-MTP binding reads every call's args through one key table per call (native/online_mtp/binding.cpp; the
 * drift test in test/binding-keys.test.ts holds the tables to src/addon-types.ts) and refuses what they do not allow,
 * naming the key as the online-MTP refusals always have (the bare key: `numVerify`, `kvScore`). The args are read
 * before the context is touched, in the CUDA and the CPU-only build alike, so these run without a GPU; the context
 * (CUDA build) or the missing CUDA (CPU-only build) is reached only past the args.
 */
import { beforeEach, describe, expect, test } from "vitest";
import { KernelsCudaError, type OnlineMtpNative } from "../src/index.js";
import { loadNativeUnchecked } from "../src/testing.js";

const addon = loadNativeUnchecked();
const nat = addon?.onlineMtp;
beforeEach((ctx) => {
  if (!nat) ctx.skip("the addon is not built (the online-MTP refusals are the addon's)");
});

type Call = "writePrefix" | "markPending" | "commitPending" | "resetSlots" | "decode" | "prefill" | "bench";

/** Integer args each table accepts, and the first required buffer (what a call without buffers is refused for). */
const VALID: Record<Call, { args: Record<string, unknown>; firstBuffer?: string }> = {
  writePrefix: {
    args: { stateType: 0, batch: 1, numVerify: 4, numReqSlots: 4, bankStrideRows: 6 },
    firstBuffer: "kvScore",
  },
  markPending: { args: { batch: 1, numVerify: 1, numReqSlots: 2, clearAll: 0 }, firstBuffer: "seqLens" },
  commitPending: {
    args: { stateType: 0, batch: 1, maxDraftTokens: 2, clampWidth: 0, numReqSlots: 2, bankStrideRows: 4, consume: 0 },
    firstBuffer: "curSeqLens",
  },
  resetSlots: {
    args: { stateType: 0, count: 1, maxDraftTokens: 2, numReqSlots: 2, bankStrideRows: 4 },
    firstBuffer: "state",
  },
  decode: { args: { stateType: 0, batch: 1, numReqSlots: 2, slotOffsetRows: 0 }, firstBuffer: "state" },
  prefill: { args: { stateType: 0, numSegments: 1 }, firstBuffer: "state" },
  bench: { args: { op: "empty", batch: 1, numVerify: 1, stateType: 0, graph: 0, rotate: 1, iters: 1, reps: 1 } },
};
const CALLS = Object.keys(VALID) as Call[];

/** What `call` throws for `args` (ctx is not a Context: reached only past the args). */
function refusal(call: Call, args: unknown): KernelsCudaError {
  const run = nat![call] as unknown as (ctx: unknown, args: unknown) => unknown;
  try {
    run.call(nat as OnlineMtpNative, {}, args);
  } catch (e) {
    if (KernelsCudaError.isInstance(e)) return e as KernelsCudaError;
    throw e;
  }
  throw new Error(`${call} accepted the call`);
}
const shape = (e: KernelsCudaError) => ({ code: e.code, field: e.field, suggestion: e.params.suggestion });
const valid = (call: Call, patch: Record<string, unknown> = {}) => ({ ...VALID[call].args, ...patch });

describe("the online-MTP binding refuses args its tables do not allow", () => {
  describe.each(CALLS.filter((c) => c !== "bench"))("%s", (call) => {
    const firstBuffer = VALID[call].firstBuffer!;
    const firstInt = Object.keys(VALID[call].args)[0]!;
    test("valid integers pass the table: the first missing buffer is refused as required", () => {
      expect(shape(refusal(call, valid(call)))).toEqual({
        code: "INVALID_ARGUMENT",
        field: firstBuffer,
        suggestion: undefined,
      });
    });
    test("an unknown key, with the closest key as the suggestion", () => {
      const typo = firstInt.slice(0, -1);
      const e = refusal(call, valid(call, { [typo]: 1 }));
      expect(shape(e)).toEqual({ code: "UNKNOWN_KEY", field: typo, suggestion: firstInt });
      expect(e.params.nativeCode).toBe("ERR_DSV4KV_UNKNOWN_KEY");
      expect(shape(refusal(call, valid(call, { zzzz: 1 })))).toEqual({
        code: "UNKNOWN_KEY",
        field: "zzzz",
        suggestion: undefined,
      });
    });
    test("an unknown key left undefined is no key", () => {
      expect(shape(refusal(call, valid(call, { zzzz: undefined })))).toMatchObject({ field: firstBuffer });
    });
    test("a buffer key of the call is known (refused for its type, not as unknown)", () => {
      expect(shape(refusal(call, valid(call, { [firstBuffer]: {} })))).toMatchObject({
        code: "INVALID_TYPE",
        field: firstBuffer,
      });
    });
    test("a required integer that is absent", () => {
      const { [firstInt]: _, ...rest } = valid(call);
      const e = refusal(call, rest);
      expect(shape(e)).toMatchObject({ code: "INVALID_ARGUMENT", field: firstInt });
      expect(e.rule).toBe("is required");
    });
    test("a value that is not a number (no coercion)", () => {
      expect(shape(refusal(call, valid(call, { [firstInt]: true })))).toMatchObject({
        code: "INVALID_TYPE",
        field: firstInt,
      });
      expect(shape(refusal(call, valid(call, { [firstInt]: "0" })))).toMatchObject({
        code: "INVALID_TYPE",
        field: firstInt,
      });
    });
    test("a value outside the key's range", () => {
      const e = refusal(call, valid(call, { [firstInt]: 1e12 }));
      expect(shape(e)).toMatchObject({ code: "INVALID_ARGUMENT", field: firstInt });
      expect(e.value).toBe(1e12);
    });
  });

  test("a key of another call (markPending's clearAll on writePrefix)", () => {
    expect(shape(refusal("writePrefix", valid("writePrefix", { clearAll: 0 })))).toMatchObject({
      code: "UNKNOWN_KEY",
      field: "clearAll",
    });
  });
  test("optional keys: absent take their default, given are checked", () => {
    expect(shape(refusal("writePrefix", valid("writePrefix", { split: 3 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "split",
    });
    expect(shape(refusal("decode", valid("decode", { split: 17 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "split",
    });
    expect(shape(refusal("writePrefix", valid("writePrefix", { err: null })))).toMatchObject({ field: "kvScore" });
  });
  test("a cross-key range (bankStrideRows below numReqSlots)", () => {
    const e = refusal("commitPending", valid("commitPending", { bankStrideRows: 1 }));
    expect(shape(e)).toMatchObject({ code: "INVALID_ARGUMENT", field: "bankStrideRows" });
    expect(e.rule).toBe("must be an integer in [2, 2147483647]");
  });
  test("commitPending's markWidth is checked whenever given", () => {
    expect(shape(refusal("commitPending", valid("commitPending", { markWidth: 9 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "markWidth",
    });
  });
  test("the args object itself", () => {
    expect(shape(refusal("writePrefix", 5))).toMatchObject({ code: "INVALID_ARGUMENT", field: "args" });
  });
});

describe("bench: its args are checked before the context", () => {
  test("an unknown key, with the closest key as the suggestion", () => {
    expect(shape(refusal("bench", valid("bench", { iter: 1 })))).toEqual({
      code: "UNKNOWN_KEY",
      field: "iter",
      suggestion: "iters",
    });
  });
  test("op: required, a string, one of the ops", () => {
    const { op: _, ...noOp } = valid("bench");
    expect(shape(refusal("bench", noOp))).toMatchObject({ code: "INVALID_ARGUMENT", field: "op" });
    expect(shape(refusal("bench", valid("bench", { op: 1 })))).toMatchObject({ code: "INVALID_TYPE", field: "op" });
    expect(shape(refusal("bench", valid("bench", { op: "nope" })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "op",
    });
  });
  test("integers: required, numbers, in range", () => {
    const { reps: _, ...noReps } = valid("bench");
    expect(shape(refusal("bench", noReps))).toMatchObject({ code: "INVALID_ARGUMENT", field: "reps" });
    expect(shape(refusal("bench", valid("bench", { graph: true })))).toMatchObject({
      code: "INVALID_TYPE",
      field: "graph",
    });
    expect(shape(refusal("bench", valid("bench", { rotate: 0 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "rotate",
    });
  });
  test("copyBytes: required by the copy ops, checked whenever given", () => {
    expect(shape(refusal("bench", valid("bench", { op: "copy" })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "copyBytes",
    });
    expect(shape(refusal("bench", valid("bench", { op: "copyKernel", copyBytes: 2.5 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "copyBytes",
    });
    expect(shape(refusal("bench", valid("bench", { copyBytes: 0 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "copyBytes",
    });
  });
  test("variant: each op's own range (commit 0..2)", () => {
    const e = refusal("bench", valid("bench", { op: "commit", variant: 3 }));
    expect(shape(e)).toMatchObject({ code: "INVALID_ARGUMENT", field: "variant" });
    expect(e.rule).toBe("must be an integer in [0, 2]");
  });
  test("op prefill: prefillCase required, a string, verify or chunk; chunkTokens required by chunk", () => {
    const prefill = (patch: Record<string, unknown>) => valid("bench", { op: "prefill", ...patch });
    expect(shape(refusal("bench", prefill({})))).toMatchObject({ code: "INVALID_ARGUMENT", field: "prefillCase" });
    expect(shape(refusal("bench", prefill({ prefillCase: 1 })))).toMatchObject({
      code: "INVALID_TYPE",
      field: "prefillCase",
    });
    const e = refusal("bench", prefill({ prefillCase: "chunks" }));
    expect([shape(e), e.rule]).toEqual([
      { code: "INVALID_ARGUMENT", field: "prefillCase", suggestion: undefined },
      "must be one of verify, chunk",
    ]);
    expect(shape(refusal("bench", prefill({ prefillCase: "chunk" })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "chunkTokens",
    });
    expect(shape(refusal("bench", prefill({ prefillCase: "chunk", chunkTokens: 0 })))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "chunkTokens",
    });
    expect(
      shape(refusal("bench", prefill({ prefillCase: "chunk", chunkTokens: 4096, chunkPrefix: -1 }))),
    ).toMatchObject({ code: "INVALID_ARGUMENT", field: "chunkPrefix" });
  });
  test("the prefill keys are refused where they do not apply", () => {
    for (const [patch, field] of [
      [{ prefillCase: "verify" }, "prefillCase"],
      [{ chunkTokens: 4096 }, "chunkTokens"],
      [{ chunkPrefix: 3 }, "chunkPrefix"],
      [{ op: "prefill", prefillCase: "verify", chunkTokens: 4096 }, "chunkTokens"],
      [{ op: "prefill", prefillCase: "verify", chunkPrefix: 0 }, "chunkPrefix"],
      [{ op: "prefill", prefillCase: "verify", variant: 3 }, "variant"],
      [{ op: "prefill", prefillCase: "chunk", chunkTokens: 4096, split: 4 }, "split"],
    ] as const) {
      const e = refusal("bench", valid("bench", patch));
      expect(shape(e), field).toMatchObject({ code: "INVALID_ARGUMENT", field });
      expect(e.rule, field).toMatch(/^(applies only to|does not apply to) /);
    }
  });
  test("valid prefill args pass the table: the refusal is the context's", (ctx) => {
    if (!addon?.compiledWithCuda) ctx.skip("CPU-only addon: bench refuses the run itself");
    for (const patch of [
      { op: "prefill", prefillCase: "verify", batch: 64, numVerify: 4 },
      { op: "prefill", prefillCase: "chunk", chunkTokens: 4096 },
      { op: "prefill", prefillCase: "chunk", chunkTokens: 4096, chunkPrefix: 37 },
    ])
      expect(shape(refusal("bench", valid("bench", patch)))).toMatchObject({ code: "INVALID_TYPE", field: "ctx" });
  });
  test("valid args pass the table: the refusal is the context's", (ctx) => {
    if (!addon?.compiledWithCuda) ctx.skip("CPU-only addon: bench refuses the run itself (the test below)");
    expect(shape(refusal("bench", valid("bench")))).toEqual({
      code: "INVALID_TYPE",
      field: "ctx",
      suggestion: undefined,
    });
  });
  test("valid args on a CPU-only addon: GPU_UNAVAILABLE", (ctx) => {
    if (addon?.compiledWithCuda) ctx.skip("CUDA build: the context refuses instead (the test above)");
    expect(refusal("bench", valid("bench")).code).toBe("GPU_UNAVAILABLE");
  });
});
