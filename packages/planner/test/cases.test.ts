// planCase: the JSON case format shared by the CLI and the GPU engine.
import { describe, expect, test } from "vitest";
import { PlannerError, planCase, planDecode, planPrefill, type PlanEngine, cpuPlanEngine } from "../src/index.js";
import { thrown } from "./helpers.js";

const ex1 = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] } as const;
const c4Decode = { kind: "decode", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [516] } as const;

function expectRefusal(fn: () => unknown, code: string, field: string, params?: object): PlannerError {
  const err = thrown(fn);
  expect(PlannerError.isInstance(err)).toBe(true);
  const e = err as PlannerError;
  expect({ code: e.code, field: e.field }).toEqual({ code, field });
  if (params !== undefined) expect(e.params).toMatchObject(params);
  expect(e.message.startsWith(e.value === undefined ? `${field}: ` : `${field} = `)).toBe(true);
  return e;
}

describe("planCase", () => {
  test("dispatches each kind to the engine with the case's options, and returns its tables", () => {
    const calls: string[] = [];
    const logged =
      <A, R>(name: (a: A) => string, fn: (a: A) => R) =>
      (a: A) => {
        calls.push(name(a));
        return fn(a);
      };
    const engine: PlanEngine = {
      planPrefill: logged((o) => `prefill ${o.path ?? "host"} ${o.numQTokens ?? "-"}`, cpuPlanEngine.planPrefill),
      planDecode: logged(() => "decode", cpuPlanEngine.planDecode),
      planPrefillLegacy: logged(() => "prefill-legacy", cpuPlanEngine.planPrefillLegacy),
      planDecodeLegacy: logged(() => "decode-legacy", cpuPlanEngine.planDecodeLegacy),
    };
    const prefill = { ...ex1, path: "device", numQTokens: 8 } as const;
    const pre = planCase({ kind: "prefill", ...prefill }, engine);
    expect(pre.planC!.toHex()).toBe(planPrefill(prefill).planC.toHex());
    const dec = planCase(
      {
        kind: "decode",
        compressRatio: 4,
        ringSize: 16,
        swaPageSize: 256,
        seqLens: [516],
        reqToToken: [Array.from({ length: 600 }, (_, p) => p)],
      },
      engine,
    );
    expect(dec.planD!.toHex()).toBe(
      planDecode({ compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [516] }).toHex(),
    );
    planCase(
      { kind: "prefill-legacy", compressRatio: 128, seqLens: [260], extendLens: [4], reqPoolIndices: [2] },
      engine,
    );
    planCase({ kind: "decode-legacy", compressRatio: 4, seqLens: [516], reqPoolIndices: [3] }, engine);
    expect(calls).toEqual(["prefill device 8", "decode", "prefill-legacy", "decode-legacy"]);
  });

  test.each([
    ["not an object", [1, 2], "case"],
    ["unknown kind", { kind: "verify", compressRatio: 4, seqLens: [1] }, "kind"],
    [
      "fractional seqLen",
      { kind: "decode", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [5, 2.5] },
      "seqLens[1]",
    ],
    [
      "fractional extend",
      { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [5], extendLens: [1.5] },
      "extendLens[0]",
    ],
    [
      "ragged reqToToken",
      { kind: "decode", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [5], reqToToken: [[1, 2], [3]] },
      "reqToToken[1].length",
    ],
    ["missing ringSize", { kind: "decode", compressRatio: 4, swaPageSize: 256, seqLens: [5] }, "ringSize"],
    ["NaN seqLen", { ...ex1, kind: "prefill", seqLens: [Number.NaN] }, "seqLens[0]"],
    ["integer past 2^53", { ...ex1, kind: "prefill", reqPoolIndices: [2 ** 60] }, "reqPoolIndices[0]"],
    ["empty reqToToken", { ...ex1, kind: "prefill", reqToToken: [] }, "reqToToken"],
  ])("refuses %s with INVALID_CASE naming the field", (_name, input, field) => {
    expectRefusal(() => planCase(input), "INVALID_CASE", field);
  });
});

describe("planCase: strict format (no coercion, no unknown or misplaced keys, no wrapping)", () => {
  test.each([
    ["a string for useReqRing", { kind: "prefill", ...ex1, useReqRing: "false" }, "useReqRing"],
    ["a string for useCudaGraph", { kind: "prefill", ...ex1, useCudaGraph: "false" }, "useCudaGraph"],
    ["a string for a ratio", { kind: "prefill", ...ex1, compressRatio: "4" }, "compressRatio"],
    ["seqLens not an array", { ...c4Decode, seqLens: 5 }, "seqLens"],
    ["bad reqToToken", { ...c4Decode, reqToToken: "x" }, "reqToToken"],
    ["bad fullToState", { ...c4Decode, fullToState: "idx" }, "fullToState"],
  ])("refuses %s with INVALID_TYPE", (_name, input, field) => {
    expectRefusal(() => planCase(input), "INVALID_TYPE", field);
  });

  test("refuses a misspelt key with UNKNOWN_KEY and the closest key as suggestion", () => {
    const e = expectRefusal(
      () => planCase({ kind: "prefill", ...ex1, use_req_ring: true }),
      "UNKNOWN_KEY",
      "use_req_ring",
      { suggestion: "useReqRing" },
    );
    expect(e.message).toContain('did you mean "useReqRing"?');
    expectRefusal(
      () => planCase({ ...c4Decode, reqToToken: { identity: { tokensperreq: 4 } } }),
      "UNKNOWN_KEY",
      "reqToToken.identity.tokensperreq",
      { suggestion: "tokensPerReq" },
    );
  });

  test.each([
    ["path on decode", { ...c4Decode, path: "device" }, "path"],
    [
      "numQTokens on decode-legacy",
      { kind: "decode-legacy", compressRatio: 4, seqLens: [5], numQTokens: -7 },
      "numQTokens",
    ],
    [
      "ringSize on prefill-legacy",
      { kind: "prefill-legacy", compressRatio: 4, seqLens: [5], extendLens: [5], ringSize: 7 },
      "ringSize",
    ],
    ["extendLens on decode", { ...c4Decode, extendLens: [1] }, "extendLens"],
  ])("refuses %s with NOT_APPLICABLE", (_name, input, field) => {
    expectRefusal(() => planCase(input), "NOT_APPLICABLE", field);
  });

  test("refuses reqToToken entries past int32 with INT32_OVERFLOW instead of wrapping them", () => {
    const row = Array.from({ length: 600 }, (_, p) => p);
    row[515] = 2 ** 32 + 515; // wrapped modulo 2^32 this would plan exactly as the identity
    expectRefusal(() => planCase({ ...c4Decode, reqToToken: [row] }), "INT32_OVERFLOW", "reqToToken[0][515]");
  });

  test("the planner's semantic checks still run after the schema", () => {
    expectRefusal(() => planCase({ kind: "prefill", ...ex1, path: "gpu" }), "INVALID_ARGUMENT", "path");
    expectRefusal(() => planCase({ ...c4Decode, compressRatio: 8 }), "INVALID_RATIO", "compressRatio");
  });
});
