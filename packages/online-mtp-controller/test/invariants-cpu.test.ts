import { describe, expect, test } from "vitest";
import { CpuBackend } from "../src/index.js";
import { FaultyCpuBackend } from "../src/testing.js";
import { INVARIANTS } from "./invariants.js";

for (const dtype of ["fp32", "bf16"] as const) {
  describe(`CPU backend, ${dtype} state: invariants`, () => {
    for (const [name, inv] of Object.entries(INVARIANTS)) test(name, () => inv(new CpuBackend(), dtype));
  });
}

describe("the invariants catch a wrong bank index or boundary rule (mutation tests)", () => {
  const mustFail: [string, string][] = [
    ["bankIndexOffByOne", "3 write-prefix banks = fold from bank 0; bank at an exact boundary untouched"],
    [
      "bankIndexOffByOne",
      "5 commit = bitwise copy of bank a (skipped at a boundary / no progress); banks >= 1 untouched; marker consumed",
    ],
    ["bankIndexOffByOne", "16 multi-step scenario == sequential reference; no commit lost"],
    ["ignoreBoundaryRule", "3 write-prefix banks = fold from bank 0; bank at an exact boundary untouched"],
    [
      "ignoreBoundaryRule",
      "5 commit = bitwise copy of bank a (skipped at a boundary / no progress); banks >= 1 untouched; marker consumed",
    ],
  ];
  for (const [fault, name] of mustFail) {
    test(`${fault} breaks invariant ${name.split(" ")[0]}`, () => {
      const broken = new FaultyCpuBackend({ [fault]: true });
      expect(() => INVARIANTS[name]!(broken, "fp32")).toThrow();
      // and the correct backend passes the same check
      INVARIANTS[name]!(new CpuBackend(), "fp32");
    });
  }
});
