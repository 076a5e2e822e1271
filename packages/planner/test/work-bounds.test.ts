// The planner's side of bounded work: a proof's cost is known before it runs (estimateResidencyProof), a proof
// and a replay stop at a deadline with an incomplete result, and a scenario's initial prefill on a large SWA page
// is chunked instead of refused with a token count the caller never gave.
import { describe, expect, test } from "vitest";
import { PlannerError, findMaxDraftTokens, proveResidency, replayResidency } from "../src/index.js";
import { ResidencyScenarioRun, estimateResidencyProof } from "../src/internal.js";

const C4_PAGED = { compressRatio: 4, ringSize: 16, swaPageSize: 256, draftTokens: 10 } as const;

describe("estimateResidencyProof", () => {
  test("counts the canonical prefixes, the chunk lengths and the plans the proof makes", () => {
    const e = estimateResidencyProof(C4_PAGED);
    expect(e).toMatchObject({ canonicalPrefixes: 512, chunkLengths: 538, draftCounts: 1, writePad: 10 });
    expect(e.plans).toBe(512 * (538 + 1));
    expect(e.plannedTokens).toBe(512 * ((538 * 539) / 2 + 10));
    const small = estimateResidencyProof({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 16,
      useReqRing: true,
      draftTokens: 10,
    });
    const proof = proveResidency({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 16,
      useReqRing: true,
      draftTokens: 10,
    });
    expect(proof.states).toBeGreaterThanOrEqual(small.canonicalPrefixes); // at least one state per prefix
    expect(proof.chunkLengths).toBe(small.chunkLengths);
  });

  test("ring 2^30 is estimated at once (no plan is made)", () => {
    const t = performance.now();
    const e = estimateResidencyProof({ compressRatio: 128, ringSize: 2 ** 30, swaPageSize: 2 ** 30, draftTokens: 4 });
    expect(e.canonicalPrefixes).toBe(2 ** 31);
    expect(performance.now() - t).toBeLessThan(1000);
  });
});

describe("a deadline ends a proof with an incomplete result", () => {
  test("proveResidency: complete false, nothing proved, the depth checked", () => {
    const p = proveResidency({ ...C4_PAGED, deadline: performance.now() + 200 });
    expect(p).toMatchObject({ proved: false, complete: false, counterexample: null });
    expect(p.seconds).toBeLessThan(5);
    const done = proveResidency({ compressRatio: 4, ringSize: 16, swaPageSize: 16, useReqRing: true, draftTokens: 10 });
    expect(done).toMatchObject({ proved: true, complete: true });
  });

  test("findMaxDraftTokens: incomplete, with the proof that stopped", () => {
    const m = findMaxDraftTokens({ ...C4_PAGED, deadline: performance.now() + 200 });
    expect(m.complete).toBe(false);
    expect(m.failure.complete).toBe(false);
  });

  test("a deadline that is not a number is refused", () => {
    expect(() => proveResidency({ ...C4_PAGED, deadline: "soon" as never })).toThrow(PlannerError);
  });
});

describe("replayResidency control", () => {
  const config = { compressRatio: 4, ringSize: 16, swaPageSize: 256, writePad: 10, draftTokens: 1 } as const;
  const batches = Array.from({ length: 100 }, () => ({ kind: "prefill", tokens: 300 }) as const);

  test("stop ends it before a batch, marked incomplete; onBatch counts the batches run", () => {
    const seen: number[] = [];
    const r = replayResidency(config, batches, { onBatch: (done) => seen.push(done), stop: () => seen.length >= 7 });
    expect(r).toMatchObject({ complete: false, steps: 7 });
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(replayResidency(config, batches).complete).toBe(true);
  });
});

describe("ResidencyScenarioRun on SWA pages past one batch", () => {
  test("stop is asked before every chunk of the initial prefill, and a stopped run advances no more", () => {
    let asked = 0;
    const run = new ResidencyScenarioRun({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 65_536,
      draftTokens: 4,
      steps: 5,
      initialPrefill: 5 * 65_535,
      stop: () => ++asked > 2,
    });
    expect(run.stopped).toBe(true);
    expect(run.report()).toMatchObject({ steps: 2, finalPrefix: 2 * 65_535 });
    expect(run.advance(5)).toBe(false);
    expect(run.done).toBe(0);
    expect(() => new ResidencyScenarioRun({ ...C4_PAGED, stop: 1 as unknown as () => boolean })).toThrow(
      /stop = 1: must be a function/,
    );
  });

  test("stop ends the steps after the initial prefill, before the batch it is asked for", () => {
    let asked = 0;
    const run = new ResidencyScenarioRun({ ...C4_PAGED, steps: 50, initialPrefill: 10, stop: () => ++asked > 11 });
    expect(run.advance(50)).toBe(false);
    expect(run.stopped).toBe(true);
    expect(run.done).toBe(10);
  });

  test("the initial prefill of up to 2 × 65,536 tokens runs as chunks of at most 65,535", () => {
    const run = new ResidencyScenarioRun({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 65_536,
      draftTokens: 4,
      steps: 5,
    });
    run.advance(5);
    expect(run.report().violations).toBe(0);
    const given = new ResidencyScenarioRun({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 65_536,
      draftTokens: 4,
      steps: 0,
      initialPrefill: 131_071,
    });
    expect(given.report()).toMatchObject({ steps: 3, finalPrefix: 131_071 });
    expect(() => new ResidencyScenarioRun({ ...C4_PAGED, initialPrefill: 0 })).toThrow(
      /initialPrefill = 0: must be in/,
    );
  });
});
