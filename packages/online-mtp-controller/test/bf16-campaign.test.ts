// A slice of the bf16 campaign (docs/reference/online-mtp.md §5.4; the whole 232-run sweep is
// bench/bf16-campaign.mjs): every D, every bank-0 row after every forward inside the bound derived from its
// roundings and inside the rounded reference's spread, every emitted entry inside its bound.
import { describe, expect, test } from "vitest";
import { CpuBackend, runSimulation } from "../src/index.js";

describe("bf16 campaign slice: D 1..8, 16 requests, 200 steps, CPU backend", () => {
  for (let D = 1; D <= 8; D++) {
    test(`D ${D}, seed 8955: ok, every element within its derived bound`, () => {
      const r = runSimulation({
        backend: new CpuBackend(),
        requests: 16,
        steps: 200,
        draftTokens: D,
        seed: 8955,
        stateDtype: "bf16",
      });
      expect(r.violationDetails).toEqual([]);
      expect(r.ok).toBe(true);
      expect(r.tolerance).toBe("derived");
      expect(r.bf16!.maxRatio).toBeLessThanOrEqual(1);
      expect(r.bf16!.maxRatio).toBeGreaterThan(0.5); // the bound is not vacuous: the max element's is nearly tight
      expect(r.commits).toBeGreaterThan(100);
      // more stores per row at smaller D (one per commit; a commit keeps about D/2 tokens)
      expect(r.bf16!.maxRoundings).toBeGreaterThan(D === 1 ? 40 : 4);
    }, 180_000);
  }

  test("adaptive D up to 8 (each verify's D drawn from 1..8)", () => {
    const r = runSimulation({
      backend: new CpuBackend(),
      requests: 8,
      steps: 150,
      draftTokens: 8,
      adaptive: true,
      seed: 8950,
      stateDtype: "bf16",
    });
    expect(r.reason).toBeNull();
    expect(r.bf16!.maxRatio).toBeLessThanOrEqual(1);
  }, 180_000);
});
