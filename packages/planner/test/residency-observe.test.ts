// The residency simulator's observation API (what `simulate residency --html` draws): onBatch reports every batch
// of a scenario, in order, with the simulator after it; slotContents says what each written slot holds.
import { describe, expect, test } from "vitest";
import { type ResidencyBatch, RingResidencySimulator, replayResidency, runResidencyScenario } from "../src/index.js";
import { ResidencyScenarioRun } from "../src/internal.js";

describe("residency observation", () => {
  test("onBatch's batches replay to the scenario's own report (resumes included)", () => {
    const scenario = { compressRatio: 4, ringSize: 16, swaPageSize: 64, draftTokens: 11, steps: 400, seed: 3 };
    const batches: ResidencyBatch[] = [];
    const steps: number[] = [];
    const run = new ResidencyScenarioRun({
      ...scenario,
      onBatch: (b, sim) => {
        batches.push(b);
        steps.push(sim.step);
      },
    });
    run.advance(run.total);
    const report = run.report();
    expect(report).toEqual(runResidencyScenario(scenario));
    expect(batches.some((b) => b.kind === "radixResume")).toBe(true);
    expect(batches.filter((b) => b.kind !== "radixResume")).toHaveLength(report.steps);
    expect(steps.at(-1)).toBe(report.steps);
    const replayed = replayResidency(scenario, batches);
    expect(replayed.violations).toBe(report.violations);
    expect(replayed.firstViolation).toEqual(report.firstViolation);
    expect(replayed.finalPrefix).toBe(report.finalPrefix);
  });

  test("slotContents: a prefill's written slots, by slot, with the writing step", () => {
    const sim = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 256 });
    sim.prefill(20);
    sim.verify(4, 1);
    const contents = sim.slotContents();
    expect(contents.map((c) => c.slot)).toEqual([...contents.map((c) => c.slot)].sort((a, b) => a - b));
    expect(contents.find((c) => c.position === 20)).toMatchObject({ slot: 4, writtenAtStep: 2, committed: true });
    expect(contents.find((c) => c.position === 23)).toMatchObject({ slot: 7, writtenAtStep: 2, committed: false });
    expect(contents.find((c) => c.position === 19)).toMatchObject({
      slot: 3,
      writtenAtStep: 1,
      writtenBy: "prefill of 20 tokens at prefix 0",
      committed: true,
    });
  });
});
