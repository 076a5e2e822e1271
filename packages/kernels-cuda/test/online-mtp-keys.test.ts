/**
 * The online-MTP binding reads every call's args through one key table per call (native/online_mtp/binding.cpp; the
 * drift test in test/binding-keys.test.ts holds the tables to src/addon-types.ts) and refuses what they do not allow,
 * naming the key as the online-MTP refusals always have (the bare key: `numVerify`, `kvScore`). The args are read
 * before the context is touched, in the CUDA and the CPU-only build alike, so these run without a GPU; the context
 * (CUDA build) or the missing CUDA (CPU-only build) is reached only past the args.
 */
import { beforeEach, describe, expect, test } from "vitest";
import { loadNativeUnchecked } from "../src/testing.js";
import { bindingRefusal, expectRefused, expectRefusedExactly, refusalShape as shape } from "./binding-refusal.js";
import { loadBenchBuild } from "./bench-build.js";

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

// bench is the bench build's (native/bench/), loaded by path beside the released addon.
const benchBuild = loadBenchBuild();
const refusal = (call: Call, args: unknown) =>
  call === "bench" ? bindingRefusal(benchBuild.addon!.onlineMtp, "bench", args) : bindingRefusal(nat!, call, args);
const valid = (call: Call, patch: Record<string, unknown> = {}) => ({ ...VALID[call].args, ...patch });

describe("the online-MTP binding refuses args its tables do not allow", () => {
  describe.each(CALLS.filter((c) => c !== "bench"))("%s", (call) => {
    const firstBuffer = VALID[call].firstBuffer!;
    const firstInt = Object.keys(VALID[call].args)[0]!;
    test("valid integers pass the table: the first missing buffer is refused as required", () => {
      expectRefusedExactly(refusal(call, valid(call)), "INVALID_ARGUMENT", firstBuffer);
    });
    test("an unknown key, with the closest key as the suggestion", () => {
      const typo = firstInt.slice(0, -1);
      const e = refusal(call, valid(call, { [typo]: 1 }));
      expectRefusedExactly(e, "UNKNOWN_KEY", typo, firstInt);
      expect(e.params.nativeCode).toBe("ERR_DSV4KV_UNKNOWN_KEY");
      expectRefusedExactly(refusal(call, valid(call, { zzzz: 1 })), "UNKNOWN_KEY", "zzzz");
    });
    test("an unknown key left undefined is no key", () => {
      expect(shape(refusal(call, valid(call, { zzzz: undefined })))).toMatchObject({ field: firstBuffer });
    });
    test("a buffer key of the call is known (refused for its type, not as unknown)", () => {
      expectRefused(refusal(call, valid(call, { [firstBuffer]: {} })), "INVALID_TYPE", firstBuffer);
    });
    test("a required integer that is absent", () => {
      const { [firstInt]: _, ...rest } = valid(call);
      const e = refusal(call, rest);
      expectRefused(e, "INVALID_ARGUMENT", firstInt);
      expect(e.rule).toBe("is required");
    });
    test("a value that is not a number (no coercion)", () => {
      expectRefused(refusal(call, valid(call, { [firstInt]: true })), "INVALID_TYPE", firstInt);
      expectRefused(refusal(call, valid(call, { [firstInt]: "0" })), "INVALID_TYPE", firstInt);
    });
    test("a value outside the key's range", () => {
      const e = refusal(call, valid(call, { [firstInt]: 1e12 }));
      expectRefused(e, "INVALID_ARGUMENT", firstInt);
      expect(e.value).toBe(1e12);
    });
  });

  test("a key of another call (markPending's clearAll on writePrefix)", () => {
    expectRefused(refusal("writePrefix", valid("writePrefix", { clearAll: 0 })), "UNKNOWN_KEY", "clearAll");
  });
  test("optional keys: absent take their default, given are checked", () => {
    expectRefused(refusal("writePrefix", valid("writePrefix", { split: 3 })), "INVALID_ARGUMENT", "split");
    expectRefused(refusal("decode", valid("decode", { split: 17 })), "INVALID_ARGUMENT", "split");
    expect(shape(refusal("writePrefix", valid("writePrefix", { err: null })))).toMatchObject({ field: "kvScore" });
  });
  test("a cross-key range (bankStrideRows below numReqSlots)", () => {
    const e = refusal("commitPending", valid("commitPending", { bankStrideRows: 1 }));
    expectRefused(e, "INVALID_ARGUMENT", "bankStrideRows");
    expect(e.rule).toBe("must be an integer in [2, 2147483647]");
  });
  test("commitPending's markWidth is checked whenever given", () => {
    expectRefused(refusal("commitPending", valid("commitPending", { markWidth: 9 })), "INVALID_ARGUMENT", "markWidth");
  });
  test("the args object itself", () => {
    expectRefused(refusal("writePrefix", 5), "INVALID_ARGUMENT", "args");
  });
});

describe("bench (the bench build): its args are checked before the context", () => {
  beforeEach((ctx) => {
    if (!benchBuild.addon) ctx.skip(benchBuild.reason);
  });
  test("an unknown key, with the closest key as the suggestion", () => {
    expectRefusedExactly(refusal("bench", valid("bench", { iter: 1 })), "UNKNOWN_KEY", "iter", "iters");
  });
  test("op: required, a string, one of the ops", () => {
    const { op: _, ...noOp } = valid("bench");
    expectRefused(refusal("bench", noOp), "INVALID_ARGUMENT", "op");
    expectRefused(refusal("bench", valid("bench", { op: 1 })), "INVALID_TYPE", "op");
    expectRefused(refusal("bench", valid("bench", { op: "nope" })), "INVALID_ARGUMENT", "op");
  });
  test("integers: required, numbers, in range", () => {
    const { reps: _, ...noReps } = valid("bench");
    expectRefused(refusal("bench", noReps), "INVALID_ARGUMENT", "reps");
    expectRefused(refusal("bench", valid("bench", { graph: true })), "INVALID_TYPE", "graph");
    expectRefused(refusal("bench", valid("bench", { rotate: 0 })), "INVALID_ARGUMENT", "rotate");
  });
  test("copyBytes: required by the copy ops, checked whenever given", () => {
    expectRefused(refusal("bench", valid("bench", { op: "copy" })), "INVALID_ARGUMENT", "copyBytes");
    expectRefused(
      refusal("bench", valid("bench", { op: "copyKernel", copyBytes: 2.5 })),
      "INVALID_ARGUMENT",
      "copyBytes",
    );
    expectRefused(refusal("bench", valid("bench", { copyBytes: 0 })), "INVALID_ARGUMENT", "copyBytes");
  });
  test("variant: each op's own range (commit 0..2)", () => {
    const e = refusal("bench", valid("bench", { op: "commit", variant: 3 }));
    expectRefused(e, "INVALID_ARGUMENT", "variant");
    expect(e.rule).toBe("must be an integer in [0, 2]");
  });
  test("op prefill: prefillCase required, a string, verify or chunk; chunkTokens required by chunk", () => {
    const prefill = (patch: Record<string, unknown>) => valid("bench", { op: "prefill", ...patch });
    expectRefused(refusal("bench", prefill({})), "INVALID_ARGUMENT", "prefillCase");
    expectRefused(refusal("bench", prefill({ prefillCase: 1 })), "INVALID_TYPE", "prefillCase");
    const e = refusal("bench", prefill({ prefillCase: "chunks" }));
    expect([shape(e), e.rule]).toEqual([
      { code: "INVALID_ARGUMENT", field: "prefillCase", suggestion: undefined },
      "must be one of verify, chunk",
    ]);
    expectRefused(refusal("bench", prefill({ prefillCase: "chunk" })), "INVALID_ARGUMENT", "chunkTokens");
    expectRefused(
      refusal("bench", prefill({ prefillCase: "chunk", chunkTokens: 0 })),
      "INVALID_ARGUMENT",
      "chunkTokens",
    );
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
      expectRefused(refusal("bench", valid("bench", patch)), "INVALID_TYPE", "ctx");
  });
  test("valid args pass the table: the refusal is the context's", (ctx) => {
    if (!addon?.compiledWithCuda) ctx.skip("CPU-only addon: bench refuses the run itself (the test below)");
    expectRefusedExactly(refusal("bench", valid("bench")), "INVALID_TYPE", "ctx");
  });
  test("valid args on a CPU-only addon: GPU_UNAVAILABLE", (ctx) => {
    if (addon?.compiledWithCuda) ctx.skip("CUDA build: the context refuses instead (the test above)");
    expect(refusal("bench", valid("bench")).code).toBe("GPU_UNAVAILABLE");
  });
});
