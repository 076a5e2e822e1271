/**
 * The seam between the log writer (what each configurator generation prints) and the log parser: parsing the
 * written text gives the parsed form the writer describes, and that parse reconciles with the report it was written
 * from, for every generation, with and without speculation.
 */
import { describe, expect, it } from "vitest";
import { parseSglangLog } from "../src/sglang-log/parse.js";
import { reconcileSglangLog } from "../src/sglang-log/reconcile.js";
import { renderSglangSizingLog } from "../src/testing.js";
import { genBReport } from "./fixtures.js";

const EAGLE3 = { speculativeAlgorithm: "EAGLE", speculativeNumSteps: 3, speculativeEagleTopk: 1 } as const;

describe("writer → parser → reconciliation", () => {
  for (const generation of ["gen-a", "gen-b", "gen-b-cap", "npu"] as const) {
    for (const [name, args] of [
      ["no speculation", {}],
      ["EAGLE 3/1/4", EAGLE3],
    ] as const) {
      it(`${generation}, ${name}: the parse equals the writer's and every figure matches`, () => {
        const r = genBReport(args);
        const written = renderSglangSizingLog(r, generation);
        const file = parseSglangLog(written.text);
        expect(file.sections).toHaveLength(1);
        expect(file.skipped).toEqual([]);
        const parsed = file.sections[0]!;
        const plain = (fields: (typeof parsed.sizingLines)[number]["fields"]) =>
          Object.fromEntries(
            Object.entries(fields).map(([k, v]) => {
              if (typeof v !== "object") return [k, v];
              const { atLineEnd: _, ...rest } = v;
              return [k, rest];
            }),
          );
        const shape = (lines: typeof parsed.sizingLines) =>
          lines.map((l) => ({ kind: l.kind, line: l.line, label: l.label, fields: plain(l.fields) }));
        expect(shape(parsed.sizingLines)).toEqual(shape(written.log.sizingLines));
        const comparison = reconcileSglangLog(parsed, r);
        expect(comparison.generation).toBe(generation);
        expect(comparison.figures.filter((f) => f.match === false || f.role === "not-computed")).toEqual([]);
        expect(comparison.truncated).toEqual([]);
        expect(comparison.figures.length).toBeGreaterThanOrEqual(3);
      });
    }
  }
});
