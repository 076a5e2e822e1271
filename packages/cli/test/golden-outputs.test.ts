// The CLI's outputs on a kept set of inputs (test/golden/cases.json) are byte-identical to the recorded ones: a
// refactor that changes what a user sees fails here. Re-record a case only when its change is meant.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CASES, outputPath, runCase } from "./golden/run-case.mjs";

describe("golden CLI outputs", () => {
  for (const c of CASES) {
    it(`${c.name}: dsv4-kv ${c.args.join(" ")}`.slice(0, 160), () => {
      const expected = readFileSync(outputPath(c.name), "utf8");
      expect(runCase(c)).toBe(expected);
    });
  }
});
