// `runSimulation` takes `stop` (a time limit asks it before every step): the run ends there, the
// requests still running are checked, and `steps` says how many ran.
import { describe, expect, test } from "vitest";
import { CpuBackend, OnlineMtpError, runSimulation } from "../src/index.js";

describe("runSimulation stop", () => {
  test("ends the run before the step it answers true for; the active requests are still checked", () => {
    let asked = 0;
    const r = runSimulation({
      backend: new CpuBackend(),
      requests: 4,
      steps: 1_000_000,
      draftTokens: 4,
      stop: () => ++asked > 12,
    });
    expect(r.steps).toBe(12);
    expect(r.ok).toBe(true);
    expect(r.commits).toBeGreaterThan(0);
  });

  test("a stop that is not a function is refused by name", () => {
    const run = () =>
      runSimulation({ backend: new CpuBackend(), requests: 1, steps: 1, draftTokens: 1, stop: 1 as never });
    expect(run).toThrow(OnlineMtpError);
    expect(run).toThrow(/stop = 1: must be a function/);
  });
});
