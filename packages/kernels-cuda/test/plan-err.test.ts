/**
 * The kernels' error codes have one source, the PlanErr enum of native/planner/plan_kernels.cuh: src/plan-err.ts is
 * generated from it (scripts/plan-err.mjs) and the planner's src/gpu/plan-status.ts maps every generated name to a
 * PlannerError (its RULES table is typed by the generated names, so a code without a rule does not compile; the
 * planner's test/plan-status.test.ts checks that no rule lacks a code). CPU-side only.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { GENERATED, HEADER, parsePlanErr, renderPlanErr } from "../scripts/plan-err.mjs";

const header = readFileSync(HEADER, "utf8");

describe("PlanErr: one source", () => {
  test("src/plan-err.ts is generated from the header (run `node scripts/plan-err.mjs` when this fails)", () => {
    expect(readFileSync(GENERATED, "utf8")).toBe(renderPlanErr(header));
  });
  test("a value added to the header makes the generated file stale", () => {
    const fake = header.replace(/(kErrNarrow = 13,.*\n)/, "$1  kErrFake = 14,  // a value with no TS rule\n");
    expect(fake).not.toBe(header);
    expect(parsePlanErr(fake).at(-1)).toEqual({ name: "kErrFake", value: 14, note: "a value with no TS rule" });
    expect(renderPlanErr(fake)).not.toBe(readFileSync(GENERATED, "utf8"));
  });
  test("codes are 0..n in order, unique", () => {
    const values = parsePlanErr(header).map((e) => e.value);
    expect(values).toEqual(values.map((_, i) => i));
  });
  test("a header line the parser does not understand is an error, not a skipped code", () => {
    expect(() => parsePlanErr(header.replace("kErrNarrow = 13,", "kErrNarrow = 0x0d,"))).toThrow();
  });
});
