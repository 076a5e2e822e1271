// The ratio-2 scenario on data (docs/reference/deepseek-v4.1.md §10.5): a safe pair-state ring gives every entry right,
// a ring too small for the verify block corrupts entries, and the report explains the first wrong one.
import { describe, expect, it } from "vitest";
import { Ratio2ScenarioRun } from "../src/internal.js";
import {
  describeRatio2WrongEntry,
  describeRatio2WrongRingRow,
  ratio2StateRows,
  runRatio2Scenario,
} from "../src/index.js";

describe("ratio-2 scenario", () => {
  for (const layout of ["v4", "v41", "v41-fp4"] as const) {
    it(`DSpark D = 6 on SGLang's ring (8), ${layout}: every entry and ring row right`, () => {
      const r = runRatio2Scenario({ draftTokens: 6, layout, steps: 60, seed: 5 });
      expect(r.ringSize).toBe(8);
      expect(r.entries).toBeGreaterThan(200);
      expect(r.entriesByKind.verify).toBeGreaterThan(20);
      expect(r.entriesByKind.decode).toBeGreaterThan(3);
      expect(r.entriesByKind.extend).toBeGreaterThan(20);
      expect(r.ringRowsChecked).toBeGreaterThan(20);
      expect([r.wrongEntries, r.wrongRingRows, r.firstWrong]).toEqual([0, 0, null]);
      expect(r.maxBoundRatio).toBeGreaterThan(0.05);
      expect(r.maxBoundRatio).toBeLessThanOrEqual(1);
    });
  }

  it("a ring narrower than the verify block corrupts data, explained", () => {
    const r = runRatio2Scenario({ draftTokens: 6, ringSize: 4, steps: 60, seed: 5 });
    expect(r.wrongEntries).toBeGreaterThan(0);
    expect(r.wrongRingRows).toBeGreaterThan(0);
    const w = r.firstWrong!;
    expect(w.bytesWrong).toBeGreaterThan(0);
    expect(describeRatio2WrongEntry(w)).toMatch(/its partner came from pair-state row \d+, which held position/);
    expect(describeRatio2WrongRingRow(r.firstWrongRingRow!)).toMatch(/should hold position \d+/);
  });

  // torch: accept 1 leaves position L committed and L + R₂ (a rejected draft) written over its slot unless R₂ >= D;
  // fused: only even rows write, so two of a block share a slot only when lcm(2, R₂) < D.
  const cases = [
    ["torch", 6, true],
    ["torch", 5, false],
    ["verify-fused", 5, true],
    ["verify-fused", 3, true],
    ["verify-fused", 4, false],
  ] as const;
  for (const [verifyWriter, ringSize, safe] of cases) {
    it(`D = 6, ${verifyWriter} writer, R₂ = ${ringSize}: ${safe ? "every entry right" : "wrong entries"}`, () => {
      const r = runRatio2Scenario({ draftTokens: 6, ringSize, steps: 80, seed: 9, verifyWriter });
      expect(r.entries).toBeGreaterThan(250);
      if (safe) expect([r.wrongEntries, r.wrongRingRows]).toEqual([0, 0]);
      else expect(r.wrongEntries).toBeGreaterThan(0);
    });
  }

  it("sizes its pool like CompressStatePool and runs in slices", () => {
    expect(ratio2StateRows({ draftTokens: 6 })).toBe(4 * 8 + 8 + 1 + 1);
    const run = new Ratio2ScenarioRun({ draftTokens: 3, steps: 5 });
    expect(run.advance(2)).toBe(true);
    expect(run.report().steps).toBe(2);
    expect(run.advance(10)).toBe(false);
    expect(run.report().steps).toBe(5);
  });

  it("refuses bad options with typed errors", () => {
    expect(() => runRatio2Scenario({ draftTokens: 0 })).toThrow(expect.objectContaining({ field: "draftTokens" }));
    expect(() => runRatio2Scenario({ draftTokens: 2, layout: "v42" as never })).toThrow(
      expect.objectContaining({ field: "layout", params: { suggestion: "v4" } }),
    );
    expect(() => runRatio2Scenario({ draftTokens: 2, ringSise: 4 } as never)).toThrow(
      expect.objectContaining({ code: "UNKNOWN_KEY", field: "ringSise" }),
    );
  });
});
