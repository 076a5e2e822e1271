// planCase: the JSON case format shared by the CLI and the GPU engine.
import { describe, expect, test } from "vitest";
import { PlannerError, planCase, planDecode, planPrefill, type PlanEngine, cpuPlanEngine } from "../src/index.js";

describe("planCase", () => {
  test("dispatches each kind to the engine with the case's options, and returns its tables", () => {
    const calls: string[] = [];
    const engine: PlanEngine = {
      planPrefill: (o) => (
        calls.push(`prefill ${o.path ?? "host"} ${o.numQTokens ?? "-"}`), cpuPlanEngine.planPrefill(o)
      ),
      planDecode: (o) => (calls.push("decode"), cpuPlanEngine.planDecode(o)),
      planPrefillLegacy: (o) => (calls.push("prefill-legacy"), cpuPlanEngine.planPrefillLegacy(o)),
      planDecodeLegacy: (o) => (calls.push("decode-legacy"), cpuPlanEngine.planDecodeLegacy(o)),
    };
    const pre = planCase(
      {
        kind: "prefill",
        compressRatio: 4,
        ringSize: 16,
        swaPageSize: 256,
        seqLens: [518],
        extendLens: [6],
        path: "device",
        numQTokens: 8,
      },
      engine,
    );
    expect(pre.planC!.toHex()).toBe(
      planPrefill({
        compressRatio: 4,
        ringSize: 16,
        swaPageSize: 256,
        seqLens: [518],
        extendLens: [6],
        path: "device",
        numQTokens: 8,
      }).planC.toHex(),
    );
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
      "seqLens not an array",
      { kind: "decode", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: 5 },
      "seqLens",
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
    [
      "bad reqToToken",
      { kind: "decode", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [5], reqToToken: "x" },
      "reqToToken",
    ],
  ])("refuses %s with INVALID_CASE naming the field", (_name, input, field) => {
    let err: unknown;
    try {
      planCase(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PlannerError);
    expect((err as PlannerError).code).toBe("INVALID_CASE");
    expect((err as PlannerError).field).toBe(field);
  });
});
