// The planner's silent and generic cases, each now a PlannerError naming the field, the value
// and the rule (before: reqToToken null planned with the identity map, seed NaN ran seed 0, `{ length: -1 }` threw a
// RangeError and `{ length: 1e9 }` allocated gigabytes before refusing seqLens[0], `{ identity: null }` a TypeError).
import { describe, expect, test } from "vitest";
import { PlannerError, planDecode, planPrefill, runResidencyScenario } from "../src/index.js";
import { thrown } from "./helpers.js";

const base = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };

function refusal(fn: () => unknown) {
  const e = thrown(fn);
  expect(PlannerError.isInstance(e), String(e)).toBe(true);
  const { code, field, value, rule } = e as PlannerError;
  return { code, field, value, rule };
}

describe("reqToToken and fullToState: null is not 'absent', and each form is checked", () => {
  test.each([
    [{ reqToToken: null }, "INVALID_TYPE", "reqToToken"],
    [{ reqToToken: { identity: null } }, "INVALID_TYPE", "reqToToken.identity"],
    [{ reqToToken: 5 }, "INVALID_TYPE", "reqToToken"],
    [{ reqToToken: {} }, "INVALID_TYPE", "reqToToken"],
    [{ reqToToken: { data: { length: 1e9 }, stride: 1 } }, "INVALID_TYPE", "reqToToken.data"],
    [{ fullToState: null }, "INVALID_TYPE", "fullToState"],
    [{ fullToState: { length: 3 } }, "INVALID_TYPE", "fullToState"],
  ])("%j", (extra, code, field) => {
    expect(refusal(() => planPrefill({ ...base, ...extra } as never))).toMatchObject({ code, field });
  });
  test("omitting them still plans with the identity maps", () => {
    expect(() => planPrefill(base)).not.toThrow();
  });
});

describe("array inputs: an array or a typed array, of a bounded length, before anything is allocated", () => {
  test.each([
    [{ length: 1e9 }, "INVALID_TYPE", "seqLens"],
    [{ length: -1 }, "INVALID_TYPE", "seqLens"],
    ["518", "INVALID_TYPE", "seqLens"],
  ])("seqLens %j", (seqLens, code, field) => {
    expect(refusal(() => planPrefill({ ...base, seqLens } as never))).toMatchObject({ code, field, value: seqLens });
    expect(
      refusal(() => planDecode({ compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens } as never)),
    ).toMatchObject({ code, field });
  });
  test("a sparse array of 2^27 + 1 elements is refused by its length, not read", () => {
    const big = new Array(2 ** 27 + 1);
    expect(refusal(() => planPrefill({ ...base, seqLens: big, extendLens: big }))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "seqLens.length",
      value: 2 ** 27 + 1,
    });
  });
});

describe("runResidencyScenario: the seed is an integer the 32-bit generator keeps", () => {
  const scenario = { compressRatio: 4, ringSize: 16, swaPageSize: 256, draftTokens: 3, steps: 10 };
  test.each([Number.NaN, 1.5, -1, 2 ** 32, "1"])("seed %s", (seed) => {
    expect(refusal(() => runResidencyScenario({ ...scenario, seed } as never))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "seed",
    });
  });
  test("0 and 2^32 - 1 run", () => {
    expect(runResidencyScenario({ ...scenario, seed: 0 }).steps).toBeGreaterThan(0);
    expect(runResidencyScenario({ ...scenario, seed: 2 ** 32 - 1 }).steps).toBeGreaterThan(0);
  });
});
