// The flag pieces prove residency and simulate residency share: one wording for both commands.
import { describe, expect, test } from "vitest";
import { UsageError } from "../src/commands/args.js";
import { refusePadWithFormula, requireRatio, ringLabel } from "../src/commands/residency-flags.js";

describe("residency flags", () => {
  test("the ring's label: c128 and --req-ring rings are request-scoped, c4 rings are paged by default", () => {
    expect(ringLabel({ compressRatio: 4, ringSize: 16, swaPageSize: 256 })).toBe("c4 ring 16 (paged, SWA page 256)");
    expect(ringLabel({ compressRatio: 4, ringSize: 8, swaPageSize: 256, useReqRing: true })).toBe(
      "c4 ring 8 (request ring)",
    );
    expect(ringLabel({ compressRatio: 128, ringSize: 256, swaPageSize: 256, useReqRing: false })).toBe(
      "c128 ring 256 (request ring)",
    );
  });

  test("--ratio is 4 or 128", () => {
    expect(requireRatio(128)).toBe(128);
    expect(() => requireRatio(8)).toThrow(UsageError);
    expect(() => requireRatio(8)).toThrow(/^--ratio = 8: must be 4 or 128$/);
  });

  test("--pad and --pad-formula are one or the other", () => {
    expect(() => refusePadWithFormula(3, undefined)).not.toThrow();
    expect(() => refusePadWithFormula(undefined, "pre-fix-host")).not.toThrow();
    expect(() => refusePadWithFormula(3, "derived")).toThrow(
      /^--pad = 3: cannot be combined with --pad-formula: give one$/,
    );
  });
});
