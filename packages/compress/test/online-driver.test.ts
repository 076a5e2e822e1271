/**
 * OnlineC128Driver on the CPU backend: random multi-step scenarios against the float64 offline oracle (every
 * committed chunk close exactly once, in order, within the stated bound; rejected drafts never leak), the commit's
 * place in the lifecycle, and one test per refusal class.
 */
import { CompressError } from "../src/errors.js";
import { CpuBackend, KV_SCORE_COLS, type StateDtype } from "@dsv4-kv/online-mtp-controller";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import { describe, expect, it } from "vitest";
import { OnlineC128Driver } from "../src/online/driver.js";
import type { OnlineRequestStep } from "../src/online/types.js";
import { type ExpectedEntry, RequestModel, randomRows, runDriverScenario } from "./online-scenario.js";

const DTYPES: readonly StateDtype[] = ["fp32", "bf16"];

describe("online driver: random scenarios against the offline oracle (CPU backend)", () => {
  const configs = [
    { maxDraftTokens: 8, adaptive: true, seeds: [1, 2, 3] },
    { maxDraftTokens: 4, adaptive: false, seeds: [4, 5] },
    { maxDraftTokens: 1, adaptive: false, seeds: [6] },
  ];
  for (const stateDtype of DTYPES) {
    for (const c of configs) {
      for (const seed of c.seeds) {
        const name = `${stateDtype}, Dmax ${c.maxDraftTokens}${c.adaptive ? " adaptive" : ""}, seed ${seed}`;
        it(name, () => {
          const opts = { seed, requests: 6, steps: 160, stateDtype, ...c };
          const r = runDriverScenario(new CpuBackend(), opts);
          expect(r.firstWrong).toBeNull();
          expect(r.wrong).toBe(0);
          expect(r.entries).toBe(r.expected);
          expect(r.maxRatio).toBeLessThanOrEqual(1);
          // the scenario exercised what it claims to
          expect(r.entries).toBeGreaterThan(30);
          expect(r.steps.extend * r.steps.decode * r.steps.verify).toBeGreaterThan(0);
          if (c.maxDraftTokens > 1) {
            expect(r.verifyEntries).toBeGreaterThan(0);
            expect(r.rejections).toBeGreaterThan(10);
          }
        });
      }
    }
  }

  // Mutants of the backend: the scenario's oracle must see each of them as wrong entries.
  class LosesCommits extends CpuBackend {
    override commitPending(): void {}
  }
  class SkipsPrefixStates extends CpuBackend {
    override writePrefix(): void {}
  }
  const mutants = { "drops every commit": LosesCommits, "writes no prefix states": SkipsPrefixStates };
  for (const [name, Mutant] of Object.entries(mutants)) {
    it(`the oracle catches a backend that ${name}`, () => {
      const opts = { seed: 1, requests: 6, steps: 80, stateDtype: "fp32" as const, maxDraftTokens: 8, adaptive: true };
      const r = runDriverScenario(new Mutant(), opts);
      expect(r.wrong).toBeGreaterThan(0);
    });
  }
});

/** A one-slot (or few-slot) harness: the driver beside the oracle's request models. */
function harness(stateDtype: StateDtype = "fp32", slots = 2, maxDraftTokens = 8) {
  const rng = new SeededRandom(99);
  const ape = randomRows(rng, 64);
  const driver = new OnlineC128Driver({
    backend: new CpuBackend(),
    numReqSlots: slots + 1,
    maxDraftTokens,
    stateDtype,
    ape,
  });
  const models = new Map<number, RequestModel>();
  const start = (slot: number) => {
    driver.resetSlot(slot);
    models.set(slot, new RequestModel(slot, ape, stateDtype));
  };
  /** Runs a step; returns the entries and what the oracle expects. */
  const step = (reqs: OnlineRequestStep[]) => {
    const got = driver.step(reqs);
    const want: ExpectedEntry[] = [];
    for (const r of reqs) {
      const kept = r.kind === "verify" ? r.accept! : r.tokens.length / KV_SCORE_COLS;
      want.push(...models.get(r.slot)!.commit(r.tokens, kept));
    }
    want.sort((a, b) => a.slot - b.slot || a.position - b.position);
    return { got, want };
  };
  const at = (slot: number) => models.get(slot)!.committed;
  return { rng, driver, start, step, at };
}

function expectMatches(got: { slot: number; position: number; values: Float32Array }[], want: ExpectedEntry[]) {
  expect(got.map((e) => [e.slot, e.position])).toEqual(want.map((e) => [e.slot, e.position]));
  for (const [i, e] of got.entries()) {
    const w = want[i]!;
    for (let d = 0; d < w.values.length; d++) {
      const err = Math.abs(e.values[d]! - w.values[d]!);
      if (!(err <= w.bound[d]!)) expect.fail(`entry ${i} channel ${d}: ${e.values[d]} vs ${w.values[d]}`);
    }
  }
}

describe("online driver: the verify's commit", () => {
  // Each follow-up closes the chunk that the verify's accepted tokens belong to: a skipped commit leaves bank 0 at
  // the pre-verify state, so the entry misses the kept tokens.
  const followUps = {
    extend: (h: ReturnType<typeof harness>) => {
      const n = 128 - h.at(1);
      return h.step([{ slot: 1, prefix: h.at(1), kind: "extend", tokens: randomRows(h.rng, n) }]);
    },
    decode: (h: ReturnType<typeof harness>) => {
      let last = h.step([]);
      while (h.at(1) < 128) last = h.step([{ slot: 1, prefix: h.at(1), kind: "decode", tokens: randomRows(h.rng, 1) }]);
      return last;
    },
    verify: (h: ReturnType<typeof harness>) => {
      const D = 128 - h.at(1);
      return h.step([{ slot: 1, prefix: h.at(1), kind: "verify", tokens: randomRows(h.rng, D), accept: D }]);
    },
  } as const;
  for (const stateDtype of DTYPES) {
    for (const [name, follow] of Object.entries(followUps)) {
      it(`${stateDtype}: verify (D 6, accept 2), then ${name} closes the chunk: the entry holds the kept tokens`, () => {
        const h = harness(stateDtype);
        h.start(1);
        expectMatches([], h.step([{ slot: 1, prefix: 0, kind: "extend", tokens: randomRows(h.rng, 118) }]).want);
        const v = h.step([{ slot: 1, prefix: 118, kind: "verify", tokens: randomRows(h.rng, 6), accept: 2 }]);
        expect(v.got).toEqual([]);
        const { got, want } = follow(h);
        expect(want).toHaveLength(1);
        expectMatches(got, want);
      });
    }
  }

  it("rejected drafts never leak: drafts that would dominate the softmax are replaced by the committed tokens", () => {
    for (const accept of [1, 3, 7]) {
      const h = harness();
      h.start(1);
      h.step([{ slot: 1, prefix: 0, kind: "extend", tokens: randomRows(h.rng, 120) }]);
      // score +30: any leaked draft would carry nearly all of the chunk's softmax weight
      const drafts = randomRows(h.rng, 8, 30);
      h.step([{ slot: 1, prefix: 120, kind: "verify", tokens: drafts, accept }]);
      const { got, want } = h.step([
        { slot: 1, prefix: h.at(1), kind: "extend", tokens: randomRows(h.rng, 8 - accept) },
      ]);
      expect(want).toHaveLength(1);
      expectMatches(got, want);
    }
  });

  it("a verify's chunk close at q >= prefix + accept is not returned; the committed one is", () => {
    const h = harness();
    h.start(1);
    h.start(2);
    h.step([
      { slot: 1, prefix: 0, kind: "extend", tokens: randomRows(h.rng, 125) },
      { slot: 2, prefix: 0, kind: "extend", tokens: randomRows(h.rng, 126) },
    ]);
    // slot 1 closes at draft 2 (position 127) but keeps 2 tokens; slot 2 closes at draft 1 and keeps 4
    const { got, want } = h.step([
      { slot: 2, prefix: 126, kind: "verify", tokens: randomRows(h.rng, 4), accept: 4 },
      { slot: 1, prefix: 125, kind: "verify", tokens: randomRows(h.rng, 4), accept: 2 },
    ]);
    expect(got.map((e) => [e.slot, e.position])).toEqual([[2, 127]]);
    expectMatches(got, want);
  });

  it("a request left out of the next forwards is committed by the first forward that contains it", () => {
    const h = harness("fp32", 3);
    for (const s of [1, 2, 3]) h.start(s);
    h.step([1, 2, 3].map((slot) => ({ slot, prefix: 0, kind: "extend" as const, tokens: randomRows(h.rng, 100) })));
    h.step([{ slot: 1, prefix: 100, kind: "verify", tokens: randomRows(h.rng, 5), accept: 3 }]);
    // forwards without slot 1: a decode and a verify of the others, an extend of a resumed request
    h.step([{ slot: 2, prefix: 100, kind: "decode", tokens: randomRows(h.rng, 1) }]);
    h.step([{ slot: 3, prefix: 100, kind: "verify", tokens: randomRows(h.rng, 2), accept: 1 }]);
    const { got, want } = h.step([{ slot: 1, prefix: 103, kind: "extend", tokens: randomRows(h.rng, 25) }]);
    expect(want).toHaveLength(1);
    expectMatches(got, want);
  });

  it("entries come out by slot, then position, whatever the request order", () => {
    const h = harness("fp32", 3);
    for (const s of [1, 2, 3]) h.start(s);
    const { got, want } = h.step(
      [3, 1, 2].map((slot) => ({ slot, prefix: 0, kind: "extend" as const, tokens: randomRows(h.rng, 300) })),
    );
    expect(got.map((e) => `${e.slot}@${e.position}`)).toEqual(["1@127", "1@255", "2@127", "2@255", "3@127", "3@255"]);
    expectMatches(got, want);
  });
});

describe("online driver: refusals (typed, nothing launched)", () => {
  const make = (over: Record<string, unknown> = {}) => {
    const ape = randomRows(new SeededRandom(5), 64);
    const opts = { backend: new CpuBackend(), numReqSlots: 4, maxDraftTokens: 4, stateDtype: "fp32", ape, ...over };
    return new OnlineC128Driver(opts as never);
  };
  const refused = (fn: () => unknown, code: string, field: string) => {
    try {
      fn();
    } catch (e) {
      expect(CompressError.isInstance(e)).toBe(true);
      expect((e as CompressError).code).toBe(code);
      expect((e as CompressError).field).toBe(field);
      return e as CompressError;
    }
    return expect.fail(`expected ${code} on ${field}`);
  };
  const rows = (n: number) => randomRows(new SeededRandom(n), n);

  it("options: unknown key (with a suggestion), slots, draft tokens, dtype, ape, backend", () => {
    expect(refused(() => make({ numReqSlot: 4 }), "UNKNOWN_KEY", "options.numReqSlot").params.suggestion).toBe(
      "numReqSlots",
    );
    refused(() => make({ numReqSlots: 1 }), "REQ_INDEX", "numReqSlots");
    refused(() => make({ numReqSlots: "4" }), "INVALID_TYPE", "numReqSlots");
    refused(() => make({ maxDraftTokens: 9 }), "DRAFT_TOKENS", "maxDraftTokens");
    expect(refused(() => make({ stateDtype: "bf61" }), "STATE_DTYPE", "stateDtype").params.suggestion).toBe("bf16");
    refused(() => make({ ape: new Float32Array(10) }), "BUFFER_SHAPE", "ape.length");
    refused(() => make({ ape: Array.from({ length: 65536 }, () => 0) }), "INVALID_TYPE", "ape");
    const nan = new Float32Array(65536);
    nan[7] = Number.NaN;
    refused(() => make({ ape: nan }), "INVALID_ARGUMENT", "ape[7]");
    const partial = new CpuBackend();
    Object.defineProperty(partial, "onlinePrefill", { value: undefined });
    refused(() => make({ backend: partial }), "INVALID_TYPE", "backend.onlinePrefill");
  });

  it("a request: not an array, unknown key, kind, slot, duplicate slot, prefix", () => {
    const d = make();
    d.resetSlot(1);
    const ok = { slot: 1, prefix: 0, kind: "extend", tokens: rows(3) };
    refused(() => d.step(ok as never), "INVALID_TYPE", "requests");
    expect(
      refused(() => d.step([{ ...ok, prefx: 0 } as never]), "UNKNOWN_KEY", "requests[0].prefx").params.suggestion,
    ).toBe("prefix");
    expect(
      refused(() => d.step([{ ...ok, kind: "decod" } as never]), "INVALID_ARGUMENT", "requests[0].kind").params
        .suggestion,
    ).toBe("decode");
    refused(() => d.step([{ ...ok, slot: 0 } as never]), "REQ_INDEX", "requests[0].slot");
    refused(() => d.step([{ ...ok, slot: 4 } as never]), "REQ_INDEX", "requests[0].slot");
    refused(() => d.step([{ ...ok, slot: 1.5 } as never]), "REQ_INDEX", "requests[0].slot");
    refused(() => d.step([ok, ok] as never), "DUPLICATE_REQ", "requests[1].slot");
    refused(() => d.step([{ ...ok, prefix: -1 } as never]), "INVALID_ARGUMENT", "requests[0].prefix");
    refused(() => d.step([{ ...ok, prefix: "0" } as never]), "INVALID_TYPE", "requests[0].prefix");
  });

  it("tokens: type, shape, finiteness; decode takes one row", () => {
    const d = make();
    d.resetSlot(1);
    const ok = { slot: 1, prefix: 0, kind: "extend" as const, tokens: rows(3) };
    refused(() => d.step([{ ...ok, tokens: Array.from(rows(1)) as never }]), "INVALID_TYPE", "requests[0].tokens");
    refused(() => d.step([{ ...ok, tokens: new Float32Array(1000) }]), "BUFFER_SHAPE", "requests[0].tokens.length");
    refused(() => d.step([{ ...ok, tokens: new Float32Array(0) }]), "BUFFER_SHAPE", "requests[0].tokens.length");
    const inf = rows(2);
    inf[1500] = Number.POSITIVE_INFINITY;
    refused(() => d.step([{ ...ok, tokens: inf }]), "INVALID_ARGUMENT", "requests[0].tokens[1500]");
    refused(() => d.step([{ ...ok, kind: "decode", tokens: rows(2) }]), "BUFFER_SHAPE", "requests[0].tokens.length");
  });

  it("kinds: one kind per step; accept only on verify, in [1, E]; D within the banks and the same for all", () => {
    const d = make();
    d.resetSlot(1);
    d.resetSlot(2);
    const ext = { slot: 1, prefix: 0, kind: "extend" as const, tokens: rows(3) };
    const ver = { slot: 2, prefix: 0, kind: "verify" as const, tokens: rows(3), accept: 2 };
    const mixed = refused(() => d.step([ext, ver]), "INVALID_ARGUMENT", "requests[1].kind");
    expect(mixed.params.expected).toBe("extend");
    refused(() => d.step([{ ...ext, accept: 2 }]), "NOT_APPLICABLE", "requests[0].accept");
    refused(() => d.step([{ ...ver, accept: undefined }]), "INVALID_TYPE", "requests[0].accept");
    refused(() => d.step([{ ...ver, accept: 0 }]), "DRAFT_TOKENS", "requests[0].accept");
    refused(() => d.step([{ ...ver, accept: 4 }]), "DRAFT_TOKENS", "requests[0].accept");
    refused(() => d.step([{ ...ver, tokens: rows(5) }]), "DRAFT_TOKENS", "requests[0].tokens.length");
    const ver1 = { ...ver, slot: 1, tokens: rows(2), accept: 1 };
    refused(() => d.step([ver, ver1]), "BUFFER_SHAPE", "requests[1].tokens.length");
  });

  it("lifecycle: an unassigned slot, a prefix that is not the committed length, a reset slot off a boundary, dispose", () => {
    const d = make();
    const ok = { slot: 1, prefix: 0, kind: "extend" as const, tokens: rows(3) };
    refused(() => d.step([ok]), "LIFECYCLE", "requests[0].slot");
    refused(() => d.resetSlot(0), "REQ_INDEX", "slot");
    d.resetSlot(1);
    refused(() => d.step([{ ...ok, prefix: 5 }]), "LIFECYCLE", "requests[0].prefix");
    d.step([{ ...ok, prefix: 128 }]); // a resume at a chunk boundary
    const wrong = refused(() => d.step([{ ...ok, prefix: 130 }]), "LIFECYCLE", "requests[0].prefix");
    expect(wrong.params.expected).toBe(131);
    d.step([{ ...ok, kind: "verify", prefix: 131, accept: 1 }]);
    refused(() => d.step([{ ...ok, prefix: 134 }]), "LIFECYCLE", "requests[0].prefix");
    expect(d.committedLength(1)).toBe(132);
    d.dispose();
    refused(() => d.step([]), "LIFECYCLE", "step");
    refused(() => d.resetSlot(1), "LIFECYCLE", "resetSlot");
  });

  it("a refused step changes nothing: the next steps still produce the oracle's entries", () => {
    const h = harness();
    h.start(1);
    h.step([{ slot: 1, prefix: 0, kind: "extend", tokens: randomRows(h.rng, 120) }]);
    const bad = { slot: 1, prefix: 120, kind: "verify" as const, tokens: randomRows(h.rng, 4), accept: 9 };
    refused(() => h.driver.step([bad]), "DRAFT_TOKENS", "requests[0].accept");
    expect(h.driver.committedLength(1)).toBe(120);
    h.step([{ slot: 1, prefix: 120, kind: "verify", tokens: randomRows(h.rng, 4), accept: 3 }]);
    const { got, want } = h.step([{ slot: 1, prefix: 123, kind: "extend", tokens: randomRows(h.rng, 5) }]);
    expect(want).toHaveLength(1);
    expectMatches(got, want);
  });

  it("an empty step is a no-op", () => {
    const d = make();
    expect(d.step([])).toEqual([]);
    expect(d.controller.counters.commitLaunches).toBe(0);
  });
});
