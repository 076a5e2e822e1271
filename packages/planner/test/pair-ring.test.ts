// The ratio-2 pair-state ring (docs/reference/ratio2-pair-ring.md): the proof decides every (R₂, D) and agrees with
// the bound derived by hand; its counterexamples replay in the simulator; the reduction it searches commutes with
// the simulator; and the random simulator finds violations exactly where the proof says.
import { describe, expect, test } from "vitest";
import {
  PairRingSimulator,
  PlannerError,
  findPairRingMaxDraftTokens,
  pairBatchAccess,
  pairRingServedDraftTokens,
  provePairRing,
  replayPairRing,
  runPairRingScenario,
  type PairVerifyWriter,
} from "../src/index.js";
import { PairRingGeometry, pairChunkBound, pairEffect } from "../src/ratio2/effects.js";
import { readsHold, successor } from "../src/prove/search.js";
import { SeededRandom } from "../src/random.js";

const WRITERS: readonly PairVerifyWriter[] = ["torch", "verify-fused"];

/** SGLang's ring: 2 without speculation, else the smallest power of two >= 2 + D (`1 << (D + 1).bit_length()`). */
function sglangRing(draftTokens: number): number {
  return 2 ** (draftTokens + 1).toString(2).length;
}

describe("the proof decides every (R₂, D)", () => {
  test.each(WRITERS)("%s: proved exactly up to the derived bound, each failure replays", (verifyWriter) => {
    for (let ringSize = 1; ringSize <= 16; ringSize++) {
      const bound = pairRingServedDraftTokens(ringSize, verifyWriter);
      for (let d = 1; d <= 2 * ringSize + 2; d++) {
        const p = provePairRing({ compressRatio: 2, ringSize, verifyWriter, draftTokens: d, adaptive: true });
        expect(p.complete).toBe(true);
        expect({ ringSize, d, proved: p.proved }).toEqual({ ringSize, d, proved: d <= bound });
        if (p.proved) continue;
        const cx = p.counterexample!;
        const replay = replayPairRing({ compressRatio: 2, ringSize, verifyWriter }, cx.batches);
        expect(replay.firstViolation).toEqual(cx.violation);
        expect(cx.violation.step).toBe(cx.batches.length);
      }
    }
  });

  test("the derived bounds: torch R₂; the fused grid R₂ - 1 (even R₂) or 2·R₂ - 1 (odd R₂)", () => {
    expect([1, 2, 3, 4, 8].map((r) => pairRingServedDraftTokens(r))).toEqual([1, 2, 3, 4, 8]);
    expect([1, 2, 3, 4, 8].map((r) => pairRingServedDraftTokens(r, "verify-fused"))).toEqual([1, 1, 5, 3, 7]);
  });

  test("findPairRingMaxDraftTokens finds the bound by proofs", () => {
    for (const verifyWriter of WRITERS) {
      for (const ringSize of [2, 3, 8]) {
        const m = findPairRingMaxDraftTokens({ compressRatio: 2, ringSize, verifyWriter });
        expect(m.maxDraftTokens).toBe(pairRingServedDraftTokens(ringSize, verifyWriter));
        expect(m.proof?.proved).toBe(true);
        expect(m.failure.proved).toBe(false);
        expect(m.failure.draftTokens).toBe(m.maxDraftTokens + 1);
      }
    }
  });

  test("every ring SGLang sizes serves its verify width on both writers, with room to spare", () => {
    for (let d = 1; d <= 30; d++) {
      const ringSize = sglangRing(d);
      expect(ringSize).toBeGreaterThanOrEqual(d + 2);
      for (const verifyWriter of WRITERS) {
        expect(provePairRing({ compressRatio: 2, ringSize, verifyWriter, draftTokens: d, adaptive: true }).proved).toBe(
          true,
        );
      }
    }
  });
});

describe("counterexamples", () => {
  test("a ring too small for the torch writer: R₂ = 4, D = 5 loses the partner to a rejected draft", () => {
    const p = provePairRing({ compressRatio: 2, ringSize: 4, draftTokens: 5 });
    expect(p.proved).toBe(false);
    expect(p.counterexample!.batches).toEqual([
      { kind: "prefill", tokens: 2 },
      { kind: "verify", draftTokens: 5, accept: 1 },
      { kind: "prefill", tokens: 1 },
    ]);
    const v = p.counterexample!.violation;
    expect(v).toMatchObject({ position: 2, slot: 2, compressAt: 3, committedBatchWroteIt: false });
    expect(v.found).toMatchObject({ position: 6, rejectedDraft: true });
    expect(v.message).toContain("last R₂ rows");
    expect(p.guards).toEqual({ kernelCheck: false, writePad: 4, padServes: false });
  });

  test("the fused grid at D = R₂ races its first row's read: what the kernel's host check refuses", () => {
    const p = provePairRing({ compressRatio: 2, ringSize: 8, draftTokens: 8, verifyWriter: "verify-fused" });
    expect(p.counterexample!.batches).toEqual([
      { kind: "prefill", tokens: 1 },
      { kind: "verify", draftTokens: 8, accept: 1 },
    ]);
    expect(p.counterexample!.violation.kind).toBe("read-write-race");
    expect(p.guards.kernelCheck).toBe(false);
    // the pad contract of SGLang's unit test would allow this width: it is one wider than the fused grid serves
    expect(p.guards.padServes).toBe(true);
  });

  test("the non-speculative ring of 2 serves two verify rows on the torch writer, which the pad (0) denies", () => {
    const p = provePairRing({ compressRatio: 2, ringSize: 2, draftTokens: 2, adaptive: true });
    expect(p.proved).toBe(true);
    expect(p.guards).toEqual({ kernelCheck: false, writePad: 0, padServes: false });
  });
});

describe("the reduction commutes with the simulator", () => {
  test("after every batch of random runs, the state bit is the simulator's last-committed residency", () => {
    const rng = new SeededRandom(42);
    for (let run = 0; run < 60; run++) {
      const ringSize = rng.int(1, 9);
      const verifyWriter = WRITERS[rng.int(0, 1)]!;
      const config = { compressRatio: 2 as const, ringSize, verifyWriter };
      const g = new PairRingGeometry(ringSize);
      const sim = new PairRingSimulator(config);
      let state = { canonical: 0, bits: 0n };
      for (let i = 0; i < 80; i++) {
        const r = rng.next();
        const batch =
          i === 0 || r < 0.2
            ? ({ kind: "prefill", tokens: rng.int(1, 3 * ringSize + 3) } as const)
            : r < 0.4
              ? ({ kind: "decode" } as const)
              : ({ kind: "verify", draftTokens: rng.int(1, 2 * ringSize + 2) } as const);
        const accept =
          batch.kind === "prefill" ? batch.tokens : batch.kind === "decode" ? 1 : rng.int(1, batch.draftTokens);
        const eff = pairEffect(config, state.canonical, batch);
        const before = sim.violationCount;
        sim.run(batch.kind === "verify" ? { ...batch, accept } : batch);
        expect(sim.violationCount > before).toBe(!readsHold(state, eff));
        state = successor(g, state, eff, accept).state;
        expect(state.canonical).toBe(g.canonical(sim.prefix));
        const held = sim.prefix % 2 === 0 || sim.lastCommittedHeld();
        expect(state.bits === 1n || sim.prefix % 2 === 0).toBe(held);
      }
    }
  });

  test("chunks from R₂ rows on repeat with the period: the explored lengths suffice", () => {
    for (const verifyWriter of WRITERS) {
      for (let ringSize = 1; ringSize <= 8; ringSize++) {
        const config = { compressRatio: 2 as const, ringSize, verifyWriter };
        const g = new PairRingGeometry(ringSize);
        expect(pairChunkBound(g)).toBe(ringSize + g.period);
        for (let c = 0; c < g.period; c++) {
          for (const bits of c % 2 === 1 ? [0n, 1n] : [0n]) {
            for (let t = ringSize; t <= pairChunkBound(g); t++) {
              const a = pairEffect(config, c, { kind: "prefill", tokens: t });
              const b = pairEffect(config, c, { kind: "prefill", tokens: t + g.period });
              expect(readsHold({ canonical: c, bits }, b)).toBe(readsHold({ canonical: c, bits }, a));
              expect(successor(g, { canonical: c, bits }, b, t + g.period).state).toEqual(
                successor(g, { canonical: c, bits }, a, t).state,
              );
            }
          }
        }
      }
    }
  });
});

describe("the random simulator", () => {
  test("finds violations past the bound and none within it", () => {
    for (const verifyWriter of WRITERS) {
      for (const ringSize of [2, 4, 8]) {
        const bound = pairRingServedDraftTokens(ringSize, verifyWriter);
        const base = { compressRatio: 2 as const, ringSize, verifyWriter, steps: 400, seed: 7, adaptive: true };
        expect(runPairRingScenario({ ...base, draftTokens: bound }).violations).toBe(0);
        expect(runPairRingScenario({ ...base, draftTokens: bound + 1 }).violations).toBeGreaterThan(0);
      }
    }
  });

  test("a DSpark server's ring (R₂ = 8 for D = 6) runs clean", () => {
    const r = runPairRingScenario({ compressRatio: 2, ringSize: sglangRing(6), draftTokens: 6, steps: 2000 });
    expect(r).toMatchObject({ violations: 0, firstViolation: null });
    expect(r.verifies).toBeGreaterThan(1000);
  });
});

describe("refusals", () => {
  test("bad configs and batches name their field", () => {
    const bad = (f: () => unknown, field: string) =>
      expect(f).toThrow(expect.objectContaining({ name: "PlannerError", field }));
    bad(() => new PairRingSimulator({ compressRatio: 4 as 2, ringSize: 8 }), "compressRatio");
    bad(() => new PairRingSimulator({ compressRatio: 2, ringSize: 0 }), "ringSize");
    bad(
      () => new PairRingSimulator({ compressRatio: 2, ringSize: 8, verifyWriter: "fused" as "torch" }),
      "verifyWriter",
    );
    bad(() => pairBatchAccess({ compressRatio: 2, ringSize: 8 }, { kind: "oops" } as never, 0), "batch.kind");
    bad(() => provePairRing({ compressRatio: 2, ringSize: 8, draftTokens: 0 }), "draftTokens");
    bad(() => runPairRingScenario({ compressRatio: 2, ringSize: 8, draftTokens: 2, sead: 1 } as never), "sead");
    const sim = new PairRingSimulator({ compressRatio: 2, ringSize: 8 });
    sim.prefill(4);
    expect(() => sim.run({ kind: "radixResume", prefix: 2 })).toThrow(PlannerError);
    expect(() => sim.verify(3, 4)).toThrow(expect.objectContaining({ field: "accept" }));
  });
});
