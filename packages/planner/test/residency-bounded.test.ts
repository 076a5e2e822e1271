// The residency simulator's memory is O(ring + window), not O(batches) (it used to keep every batch and every
// committed position: 300,000 steps exceeded a Map's maximum size).
import { describe, expect, test } from "vitest";
import { RingResidencySimulator } from "../src/index.js";
import { ResidencyScenarioRun } from "../src/internal.js";
import { KEPT_VIOLATIONS } from "../src/residency.js";

describe("bounded simulator state", () => {
  test.each([
    ["c4 R16 paged SPS 64", { compressRatio: 4, ringSize: 16, swaPageSize: 64 }, 10],
    ["c4 R16 request ring", { compressRatio: 4, ringSize: 16, swaPageSize: 64, useReqRing: true }, 10],
    ["c128 R256", { compressRatio: 128, ringSize: 256, swaPageSize: 256 }, 130],
  ] as const)("%s: entries stay within a few rings and windows over 20,000 verifies", (_n, ring, d) => {
    const sim = new RingResidencySimulator(ring);
    sim.prefill(ring.swaPageSize + 3);
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      sim.verify(d, 1 + (i % d));
      most = Math.max(most, sim.retainedEntries());
    }
    expect(sim.prefix).toBeGreaterThan(20_000);
    expect(most).toBeLessThanOrEqual(3 * ring.ringSize + 2 * ring.swaPageSize + 256);
    expect(sim.violationCount).toBe(0);
  });

  test("radix resumes after frozen pages read the frozen tails (clean at the pad, the resumed window valid)", () => {
    const sim = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 32 });
    sim.prefill(500);
    sim.radixResume(64);
    expect(sim.windowValidity()).toEqual([true, true, true, true]);
    sim.prefill(4);
    sim.verify(10, 3);
    expect(sim.violationCount).toBe(0);
  });

  test("violations are counted in full but kept only up to KEPT_VIOLATIONS", () => {
    const run = new ResidencyScenarioRun({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 256,
      writePad: 0,
      draftTokens: 12,
      steps: 3000,
      mixBatches: false,
    });
    run.advance(3000);
    const r = run.report();
    expect(r.violations).toBeGreaterThan(KEPT_VIOLATIONS);
    expect(r.firstViolation).not.toBeNull();
  });
});
