// simulate residency --html's payload: the window of batches and the ring's slots come from the planner's
// residency simulator as the run left them (recorded while it ran), and the fault names the slot, the write that
// clobbered it and the position.
import {
  type ResidencyBatch,
  type ResidencyConfig,
  type ResidencyScenario,
  replayResidency,
  runResidencyScenario,
} from "@dsv4-kv/planner";
import { describe, expect, test } from "vitest";
import {
  MAX_DRAWN_SLOTS,
  type ResidencyInputs,
  WINDOW_BATCHES,
  WindowRecorder,
  ringView,
} from "../src/report-html/residency-payload.js";

function inputs(s: ResidencyConfig & { draftTokens?: number }, writePad: number): ResidencyInputs {
  return {
    compressRatio: s.compressRatio,
    ringSize: s.ringSize,
    swaPageSize: s.swaPageSize,
    useReqRing: s.useReqRing ?? false,
    draftTokens: s.draftTokens ?? null,
    adaptive: false,
    writePad,
    padSource: "derived",
    steps: 300,
    seed: 1,
    replayFile: null,
  };
}

function scenarioView(s: ResidencyScenario) {
  const recorder = new WindowRecorder();
  const r = runResidencyScenario({ ...s, onBatch: (b, sim) => recorder.record(b, sim) });
  return ringView({
    label: "ring",
    inputs: inputs(s, r.writePad),
    batchesRun: r.steps,
    verifies: r.verifies,
    violations: r.violations,
    firstViolation: r.firstViolation,
    recorded: recorder.window(r.steps, r.firstViolation),
  });
}

const C4: ResidencyScenario = {
  compressRatio: 4,
  ringSize: 16,
  swaPageSize: 256,
  draftTokens: 11,
  steps: 300,
  seed: 1,
};

describe("the residency window", () => {
  test("D 11 on c4 ring 16: the window ends at the violating batch, replayed with the run's seed", () => {
    const view = scenarioView(C4);
    const v = view.firstViolation!;
    const last = view.batches.at(-1)!;
    expect(last.step).toBe(v.step);
    // the same batch the run's violation names: the replay drew the same random batches
    expect(last.description).toBe(v.batch);
    expect(view.batches.map((b) => b.step)).toEqual([1, 2, 3, 4, 5]);
    for (const [i, b] of view.batches.entries()) {
      if (i > 0) expect(b.prefixBefore).toBe(view.batches[i - 1]!.prefixAfter);
    }
    expect(last).toMatchObject({ kind: "verify", tokens: 11, accept: 5, prefixBefore: 351, prefixAfter: 356 });
  });

  test("D 11 on c4 ring 16: slot 24 lost committed position 344, never written by step 4, still holding 328", () => {
    const view = scenarioView(C4);
    expect(view.fault).toMatchObject({
      kind: "never-written",
      step: 5,
      slot: 24,
      position: 344,
      compressAt: 351,
      committedAtStep: 4,
      clobberedBy: null,
      held: { position: 328, writtenAtStep: 2, rejectedDraft: false },
    });
    expect(view.fault!.summary).toContain("slot 24 should hold committed position 344");
    const commit = view.batches.find((b) => b.step === 4)!;
    expect(commit.written).not.toContain(344);
    expect(commit.written).toEqual([345, 346, 347, 348, 349, 350, 351, 352, 353, 354]);
    // what step 5's compression read: the ring after step 4, where slot 24 holds 328 from step 2
    expect(commit.cells.find((c) => c.slot === 24)).toMatchObject({
      position: 328,
      writtenAtStep: 2,
      writtenNow: false,
    });
    expect(view.fault!.reads.map((r) => r.position)).toEqual([344, 345, 346, 347, 348, 349, 350]);
    expect(view.fault!.reads[0]).toEqual({ position: 344, slot: 24 });
    expect(view.slots).toContain(24);
  });

  test("a stale read names the write that clobbered the slot (a rejected draft) and the committed position", () => {
    // docs/reference/write-pad-and-residency.md §3.5: prefill to 518, verify D 11 accept 1, then the event at 519
    const config: ResidencyConfig = { compressRatio: 4, ringSize: 16, swaPageSize: 256 };
    const batches: ResidencyBatch[] = [
      { kind: "prefill", tokens: 518 },
      { kind: "verify", draftTokens: 11, accept: 1 },
      { kind: "prefill", tokens: 1 },
    ];
    const recorder = new WindowRecorder();
    const r = replayResidency(config, batches, { onBatch: (_done, _total, b, sim) => recorder.record(b, sim) });
    const view = ringView({
      label: "replay",
      inputs: inputs(config, 10),
      batchesRun: r.steps,
      verifies: 1,
      violations: r.violations,
      firstViolation: r.firstViolation,
      recorded: recorder.window(r.steps, r.firstViolation),
    });
    expect(view.fault).toMatchObject({ kind: "stale-read", step: 3, position: 512, slot: 32, committedAtStep: 1 });
    expect(view.fault!.clobberedBy).toEqual({
      step: 2,
      batch: "verify of D=11 at prefix 518, accept 1",
      position: 528,
      slot: 32,
      rejectedDraft: true,
    });
    expect(view.fault!.summary).toBe(
      "slot 32 held committed position 512 (written by step 1); step 2's write of position 528 (a rejected draft) " +
        "to slot 32 clobbered it, so step 3's compression at position 519 read the wrong value",
    );
    const verify = view.batches[1]!;
    expect(verify.cells.find((c) => c.slot === 32)).toMatchObject({ position: 528, state: "rejected-draft" });
    expect(view.batches[0]!.cells.find((c) => c.slot === 32)).toMatchObject({ position: 512, state: "committed" });
  });

  test("no violation: the run's last batches, no fault", () => {
    const view = scenarioView({ ...C4, draftTokens: 10 });
    expect(view.violations).toBe(0);
    expect(view.fault).toBeNull();
    expect(view.batches).toHaveLength(WINDOW_BATCHES);
    expect(view.batches.at(-1)!.step).toBe(301);
    expect(view.batches.at(-1)!.prefixAfter).toBe(runResidencyScenario({ ...C4, draftTokens: 10 }).finalPrefix);
  });

  test("a c128 ring draws at most MAX_DRAWN_SLOTS slots, the fault's among them", () => {
    const view = scenarioView({ compressRatio: 128, ringSize: 256, swaPageSize: 256, draftTokens: 131, steps: 300 });
    expect(view.fault).not.toBeNull();
    expect(view.slots.length).toBe(MAX_DRAWN_SLOTS);
    expect(view.slots).toContain(view.fault!.slot);
    for (const b of view.batches) for (const c of b.cells) expect(view.slots).toContain(c.slot);
  });
});
