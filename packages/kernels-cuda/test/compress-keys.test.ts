/**
 * The compress binding reads every call's args through one integer and one buffer table per call
 * (native/compress/binding.cpp; test/binding-keys.test.ts holds the tables to src/addon-types.ts) and refuses what
 * they do not allow, naming the bare key (`stateRows`, `planC`). The args are read before the context is touched, in
 * the CUDA and the CPU-only build alike, so these run without a GPU: a valid call reaches the context (CUDA build:
 * `{}` is not a Context) or the missing CUDA (CPU-only build: GPU_UNAVAILABLE) only past the args. The refusals that
 * need DeviceBuffers (sizes, devices) are in the compress package's test/bindings/compress.test.ts.
 */
import { beforeEach, describe, expect, test } from "vitest";
import { loadNativeUnchecked } from "../src/testing.js";
import { bindingRefusal, expectRefused, expectRefusedExactly, refusalShape as shape } from "./binding-refusal.js";
import { loadBenchBuild } from "./bench-build.js";

const addon = loadNativeUnchecked();
const nat = addon?.compress;
beforeEach((ctx) => {
  if (!nat) ctx.skip("the addon is not built (the compress refusals are the addon's)");
});

type Call = "prefill" | "decode" | "bench";

/** Integer args each call accepts. */
const VALID: Record<Call, Record<string, unknown>> = {
  prefill: { stateRows: 16, inputRows: 8, numPlanC: 2, numPlanW: 2, cr: 4, headDim: 128, stateType: 0 },
  decode: { stateRows: 16, inputRows: 2, batch: 2, cr: 128, headDim: 512, stateType: 1 },
  bench: {
    op: "prefill",
    graph: 0,
    iters: 1,
    reps: 1,
    rotate: 1,
    stateRows: 16,
    inputRows: 8,
    numPlanC: 2,
    numPlanW: 2,
    cr: 4,
    headDim: 128,
    stateType: 0,
  },
};
// bench is the bench build's (native/bench/), loaded by path beside the released addon; without that build its key
// table is not checked here, and the skip below says why.
const benchBuild = loadBenchBuild();
const CALLS = (Object.keys(VALID) as Call[]).filter((call) => call !== "bench" || benchBuild.addon !== null);
const refusal = (call: Call, args: unknown) =>
  call === "bench" ? bindingRefusal(benchBuild.addon!.compress, "bench", args) : bindingRefusal(nat!, call, args);
const valid = (call: Call, patch: Record<string, unknown> = {}) => ({ ...VALID[call], ...patch });

describe("the compress binding refuses args its tables do not allow", () => {
  if (benchBuild.addon === null) test.skip(`bench: ${benchBuild.reason}`, () => {});
  describe.each(CALLS)("%s", (call) => {
    const intKeys = Object.keys(VALID[call]).filter((k) => k !== "op");
    test("valid integers pass the table: the first missing buffer is refused as required", () => {
      const e = refusal(call, valid(call));
      expectRefusedExactly(e, "INVALID_ARGUMENT", "state");
      expect(e.rule).toBe("is required");
    });
    test("an unknown key, with the closest key as the suggestion", () => {
      const e = refusal(call, valid(call, { stateRow: 1 }));
      expectRefusedExactly(e, "UNKNOWN_KEY", "stateRow", "stateRows");
      expect(e.params.nativeCode).toBe("ERR_DSV4KV_UNKNOWN_KEY");
      expectRefusedExactly(refusal(call, valid(call, { zzzz: 1 })), "UNKNOWN_KEY", "zzzz");
    });
    test("an unknown key left undefined is no key", () => {
      expect(shape(refusal(call, valid(call, { zzzz: undefined })))).toMatchObject({ field: "state" });
    });
    test("a buffer key of the call is known (refused for its type, not as unknown)", () => {
      expectRefused(refusal(call, valid(call, { state: {} })), "INVALID_TYPE", "state");
      expectRefused(refusal(call, valid(call, { state: 5 })), "INVALID_TYPE", "state");
    });
    test.each(intKeys)("%s: required", (key) => {
      const { [key]: _, ...rest } = valid(call);
      const e = refusal(call, rest);
      expectRefused(e, "INVALID_ARGUMENT", key);
      expect(e.rule).toBe("is required");
      expectRefused(refusal(call, { ...rest, [key]: null }), "INVALID_ARGUMENT", key);
    });
    test.each(intKeys)("%s: a value that is not a number (no coercion)", (key) => {
      for (const v of [true, "1", 1n, {}]) {
        expect(shape(refusal(call, valid(call, { [key]: v }))), String(v)).toMatchObject({
          code: "INVALID_TYPE",
          field: key,
        });
      }
    });
    test.each(intKeys)("%s: outside its range, fractional, non-finite (never cast first)", (key) => {
      for (const v of [1e30, -1e30, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 41]) {
        const e = refusal(call, valid(call, { [key]: v }));
        expect(shape(e), `${key} = ${v}`).toMatchObject({ code: "INVALID_ARGUMENT", field: key });
        expect(Object.is(e.value, v), `${key} = ${v}`).toBe(true);
      }
    });
  });

  test.each([
    ["prefill", "cr", 5, "must be 4 or 128"],
    ["prefill", "cr", 3, "must be an integer in [4, 128]"],
    ["decode", "cr", 64, "must be 4 or 128"],
    ["prefill", "headDim", 256, "must be 128 or 512"],
    ["decode", "headDim", 1024, "must be an integer in [128, 512]"],
    ["prefill", "stateType", 2, "must be an integer in [0, 1]"],
    ["prefill", "stateRows", 0, "must be an integer in [1, 1099511627776]"],
    ["decode", "inputRows", 0, "must be an integer in [1, 1099511627776]"],
    ["prefill", "numPlanC", 2 ** 31, "must be an integer in [0, 2147483647]"],
    ["decode", "batch", -1, "must be an integer in [0, 2147483647]"],
  ] as const)("%s: %s = %s is refused: %s", (call, key, value, rule) => {
    const e = refusal(call, valid(call, { [key]: value }));
    expectRefusedExactly(e, "INVALID_ARGUMENT", key);
    expect([e.value, e.rule, e.params.nativeCode]).toEqual([value, rule, "ERR_DSV4KV_ARG"]);
  });
  test("decode: inputRows below batch (input row b is batch row b's token)", () => {
    const e = refusal("decode", valid("decode", { inputRows: 1 }));
    expectRefused(e, "INVALID_ARGUMENT", "inputRows");
    expect(e.rule).toBe("must be >= batch = 2 (input row b is batch row b's token)");
  });
  test("a key of the other call (decode's batch on prefill, prefill's planW on decode)", () => {
    expectRefused(refusal("prefill", valid("prefill", { batch: 1 })), "UNKNOWN_KEY", "batch");
    expectRefused(refusal("decode", valid("decode", { planW: {} })), "UNKNOWN_KEY", "planW");
  });
  test("bench's keys are not the calls' keys", () => {
    expectRefused(refusal("prefill", valid("prefill", { iters: 1 })), "UNKNOWN_KEY", "iters");
  });
  test("the args object itself", () => {
    for (const call of CALLS.filter((c) => c !== "bench" || benchBuild.addon)) {
      expectRefused(refusal(call, 5), "INVALID_ARGUMENT", "args");
      expectRefused(refusal(call, undefined), "INVALID_ARGUMENT", "args");
    }
  });
  test("headDims is the array of head dimensions", () => {
    expect(Array.isArray(nat!.headDims)).toBe(true);
    expect([...nat!.headDims]).toEqual([128, 512]);
  });
});

describe("bench (the bench build): its args are checked before the context", () => {
  beforeEach((ctx) => {
    if (!benchBuild.addon) ctx.skip(benchBuild.reason);
  });
  test("op: required, a string, prefill or decode", () => {
    const { op: _, ...noOp } = valid("bench");
    expectRefused(refusal("bench", noOp), "INVALID_ARGUMENT", "op");
    expectRefused(refusal("bench", valid("bench", { op: 1 })), "INVALID_TYPE", "op");
    const e = refusal("bench", valid("bench", { op: "write" }));
    expectRefused(e, "INVALID_ARGUMENT", "op");
    expect(e.rule).toBe('must be "prefill" or "decode"');
  });
  test("the op picks the key table: prefill's keys refused under decode", () => {
    expectRefused(refusal("bench", valid("bench", { op: "decode" })), "UNKNOWN_KEY", "numPlanC");
    const { numPlanC: _c, numPlanW: _w, ...common } = valid("bench");
    expectRefused(refusal("bench", { ...common, op: "decode", batch: 2, inputRows: 2 }), "INVALID_ARGUMENT", "state");
  });
  test("a typo of a bench key, with the suggestion", () => {
    expectRefusedExactly(refusal("bench", valid("bench", { iter: 1 })), "UNKNOWN_KEY", "iter", "iters");
  });
  test.each([
    ["graph", 2],
    ["iters", 0],
    ["iters", 10001],
    ["reps", 0],
    ["rotate", 0],
    ["rotate", 4097],
  ] as const)("%s = %s is out of range", (key, value) => {
    expectRefused(refusal("bench", valid("bench", { [key]: value })), "INVALID_ARGUMENT", key);
  });
});
