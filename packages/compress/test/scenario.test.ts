/**
 * Data-level proof on the CPU backend (docs/reference/write-pad-and-residency.md §3, §5, §6): with the derived pad
 * every committed entry equals the offline compression of its committed window and every ring row a later window
 * reads holds its committed token; the pre-fix pads and D = pad + 1 corrupt entries (the upstream bug on data, and
 * the pad's tightness); online c128 agrees with ring c128; a bf16 state stays within the bf16 bound; the options are
 * refused strictly.
 */
import { CpuBackend } from "@dsv4-kv/online-mtp-controller";
import { describe, expect, it } from "vitest";
import { CpuCompressBackend } from "../src/cpu-backend.js";
import type { DecodeBatch, PrefillBatch, RingCompressBackend } from "../src/backend.js";
import { CompressError } from "../src/errors.js";
import { type CompressScenarioOptions, runCompressScenario, scenarioStateRows } from "../src/index.js";
import { CompressScenarioRun } from "../src/scenario/run.js";
import { RINGS, cpuBackendFor } from "./scenario-cases.js";

function run(options: CompressScenarioOptions, online = false) {
  return runCompressScenario(options, cpuBackendFor(options), online ? new CpuBackend() : undefined);
}

describe("derived pad: every committed entry right, every readable ring row intact", () => {
  for (const ring of RINGS) {
    for (const d of [1, 4, 8, ring.pad]) {
      for (const adaptive of [false, true]) {
        if (adaptive && d === 1) continue;
        it(`${ring.name}, D ${d}${adaptive ? " adaptive" : ""}`, () => {
          let radixResumes = 0;
          let verifyEntries = 0;
          for (const seed of [1, 2, 3, 4, 5]) {
            const r = run({ ...ring.options, draftTokens: d, adaptive, seed, steps: ring.steps });
            expect(r.firstWrong).toBeNull();
            expect(r.wrongEntries).toBe(0);
            expect(r.firstWrongRingRow).toBeNull();
            expect(r.wrongRingRows).toBe(0);
            // the scenario exercised what it claims to
            expect(r.entries).toBeGreaterThan(10);
            expect(r.ringRowsChecked).toBeGreaterThan(100);
            expect(r.batches.prefill * r.batches.verify * r.batches.decode).toBeGreaterThan(0);
            expect(r.requestsServed).toBeGreaterThan(4); // more arrivals than slots: slots were reused
            expect(r.maxAbsError).toBeLessThan(1e-5);
            radixResumes += r.radixResumes;
            verifyEntries += r.entriesByKind.verify;
          }
          if (ring.options.compressRatio === 4 && !ring.options.useReqRing) expect(radixResumes).toBeGreaterThan(0);
          expect(verifyEntries).toBeGreaterThan(0);
        });
      }
    }
  }

  it("entries are checked in every batch kind (c4 paged, more steps)", () => {
    const r = run({ compressRatio: 4, headDim: 128, draftTokens: 4, steps: 200, seed: 7 });
    expect(r.wrongEntries).toBe(0);
    expect(r.entriesByKind.prefill).toBeGreaterThan(0);
    expect(r.entriesByKind.decode).toBeGreaterThan(0);
    expect(r.entriesByKind.verify).toBeGreaterThan(0);
  });

  it("runs in slices, reporting progress after every batch", () => {
    const calls: [number, number][] = [];
    const o = { compressRatio: 4, headDim: 128, draftTokens: 4, steps: 7 } as const;
    const sliced = new CompressScenarioRun(
      { ...o, onStep: (done, total) => calls.push([done, total]) },
      {
        ring: cpuBackendFor(o),
      },
    );
    expect(sliced.advance(3)).toBe(true);
    expect(sliced.advance(10)).toBe(false);
    sliced.dispose();
    expect(calls).toEqual([1, 2, 3, 4, 5, 6, 7].map((d) => [d, 7]));
    const { entries, ringRowsChecked } = sliced.report();
    expect({ entries, ringRowsChecked }).toEqual({ entries: run(o).entries, ringRowsChecked: run(o).ringRowsChecked });
  });

  it("same seed, same report; another seed, another run", () => {
    const o = { compressRatio: 4, headDim: 128, draftTokens: 6, adaptive: true, seed: 11 } as const;
    expect(run(o)).toEqual(run(o));
    expect(run({ ...o, seed: 12 }).entries).not.toBe(run(o).entries);
  });
});

describe("pre-fix pads corrupt entries on data (the upstream bug)", () => {
  for (const useReqRing of [false, true]) {
    for (const d of [6, 8]) {
      it(`pre-fix-device pad 4, c4 ring 16${useReqRing ? " (request ring)" : " (paged)"}, D ${d}`, () => {
        const r = run({ compressRatio: 4, headDim: 128, useReqRing, draftTokens: d, padFormula: "pre-fix-device" });
        expect(r.writePad).toBe(4);
        expect(r.wrongEntries).toBeGreaterThan(0);
        expect(r.wrongRingRows).toBeGreaterThan(0);
        const w = r.firstWrong!;
        expect(w.absError).toBeGreaterThan(w.tolerance);
        // explained: a window position the ring did not hold (never written, or a rejected draft / aliased row)
        expect(w.cause).toMatch(/^the ring did not hold the committed tokens it read: position \d+ \(state row \d+\)/);
        // the same derived-pad scenario is clean
        expect(run({ compressRatio: 4, headDim: 128, useReqRing, draftTokens: d }).wrongEntries).toBe(0);
      });
    }
  }

  it("pre-fix-host (no pad): c4 and c128", () => {
    const c4 = run({ compressRatio: 4, headDim: 128, draftTokens: 8, padFormula: "pre-fix-host" });
    expect(c4.writePad).toBe(0);
    expect(c4.wrongEntries).toBeGreaterThan(0);
    const c128 = run({ compressRatio: 128, headDim: 128, draftTokens: 64, padFormula: "pre-fix-host", steps: 100 });
    expect(c128.wrongEntries).toBeGreaterThan(0);
    // a rejected draft left in the ring; a c128 window's list of wrong reads is cut after three
    expect(c128.firstWrong!.cause).toMatch(
      /ring did not hold.*a rejected draft \(committed at step \d+\).*; and \d+ more$/,
    );
  });

  it("the first wrong entry names a never-written window position (c4 paged, pre-fix-device, D 8, seed 1)", () => {
    const r = run({ compressRatio: 4, headDim: 128, draftTokens: 8, padFormula: "pre-fix-device", seed: 1 });
    const w = r.firstWrong!;
    expect(w.cause).toMatch(/held the pool's initial garbage \(no batch ever wrote the row\)/);
    // the ring row was already wrong after an earlier batch
    expect(r.firstWrongRingRow!.step).toBeLessThan(w.step);
  });
});

describe("D = pad + 1 corrupts entries with the derived pad (the bound is tight on data)", () => {
  for (const ring of RINGS) {
    it(`${ring.name}: D ${ring.pad + 1}`, () => {
      const r = run({ ...ring.options, draftTokens: ring.pad + 1, steps: ring.steps });
      expect(r.padFormula).toBe("derived");
      expect(r.wrongEntries).toBeGreaterThan(0);
      expect(r.wrongRingRows).toBeGreaterThan(0);
      expect(r.firstWrong!.cause).toMatch(/ring did not hold/);
    });
  }
});

describe("other rings on data", () => {
  it("small SWA pages (32): many page crossings and radix resumes, clean at D 10, wrong at D 11", () => {
    const o = { compressRatio: 4, headDim: 128, swaPageSize: 32, steps: 150, seed: 2 } as const;
    const r = run({ ...o, draftTokens: 10, adaptive: true });
    expect(r.wrongEntries + r.wrongRingRows).toBe(0);
    expect(r.radixResumes).toBeGreaterThan(2);
    expect(run({ ...o, draftTokens: 11 }).wrongEntries).toBeGreaterThan(0);
  });

  it("non-speculative rings (pad 0): c4 ring 8 tolerates D 2 and breaks at 3; c128 ring 128 breaks at 2", () => {
    // docs/reference/write-pad-and-residency.md §3.6. c4 ring 8: L(S) <= S − 4 covers D <= 4, and a write aliases a
    // live position from D = R − W + 3 = 3 on. c128 ring 128: pad 0 writes only from L(S) on, so a verify that ends
    // a chunk (S % 128 < D) leaves its first positions unwritten
    const c4 = { compressRatio: 4, headDim: 128, ringSize: 8, steps: 100 } as const;
    expect(run({ ...c4, draftTokens: 2 }).wrongEntries).toBe(0);
    expect(run({ ...c4, draftTokens: 3 }).wrongEntries).toBeGreaterThan(0);
    const c128 = run({ compressRatio: 128, headDim: 128, ringSize: 128, draftTokens: 2, steps: 100 });
    expect(c128.writePad).toBe(0);
    expect(c128.wrongEntries).toBeGreaterThan(0);
  });
});

describe("online c128 and ring c128 produce the same entries", () => {
  for (const stateDtype of ["fp32", "bf16"] as const) {
    it(`${stateDtype} state, D 4 and adaptive D 8`, () => {
      for (const [d, adaptive, seed] of [
        [4, false, 1],
        [8, true, 2],
      ] as const) {
        const r = run(
          { compressRatio: 128, online: true, stateDtype, draftTokens: d, adaptive, seed, steps: 80 },
          true,
        );
        expect(r.firstOnlineMismatch).toBeNull();
        expect(r.onlineMismatches).toBe(0);
        expect(r.onlineEntries).toBe(r.entries);
        expect(r.entriesByKind.verify).toBeGreaterThan(0);
        expect(r.wrongEntries).toBe(0);
      }
    });
  }
});

describe("bf16 state", () => {
  for (const ring of RINGS) {
    it(`${ring.name}: within the bf16 bound, ring rows the bf16 rounding of the committed tokens`, () => {
      const r = run({ ...ring.options, stateDtype: "bf16", draftTokens: 8, adaptive: true, steps: ring.steps });
      expect(r.wrongEntries).toBe(0);
      expect(r.wrongRingRows).toBe(0);
      expect(r.maxAbsError).toBeGreaterThan(0); // the rounding shows, it is not hidden
    });
  }
});

/** Perturbs one output channel of every `nth` prefill entry: the oracle must see it. */
class PerturbedBackend extends CpuCompressBackend {
  private calls = 0;
  override prefill(batch: PrefillBatch): Float32Array {
    const out = super.prefill(batch);
    if (++this.calls % 5 === 0 && out.length > 0 && !Number.isNaN(out[0]!)) out[0] = out[0]! + 1e-3;
    return out;
  }
  override decode(batch: DecodeBatch): Float32Array {
    return super.decode(batch);
  }
}

describe("the checks can fail", () => {
  const options = { compressRatio: 4, headDim: 128, draftTokens: 4, seed: 3 } as const;
  const geometry = {
    compressRatio: 4,
    headDim: 128,
    stateDtype: "fp32",
    stateRows: scenarioStateRows(options),
  } as const;

  it("a backend whose arithmetic is off by 1e-3 on one channel: wrong entries, no ring read blamed", () => {
    const r = runCompressScenario(options, new PerturbedBackend(geometry));
    expect(r.wrongEntries).toBeGreaterThan(0);
    expect(r.wrongRingRows).toBe(0);
    expect(r.firstWrong!.channel).toBe(0);
    expect(r.firstWrong!.cause).toBe("no ring read of its window was wrong (a math or rounding fault)");
  });

  it("a mirror backend: agreement with an equal one, entry mismatches with a perturbed one", () => {
    const same = runCompressScenario(
      options,
      new CpuCompressBackend(geometry),
      undefined,
      new CpuCompressBackend(geometry),
    );
    expect(same.mirror).toMatchObject({ entryMismatches: 0, ringRowMismatches: 0, maxAbsDiff: 0 });
    expect(same.mirror!.entries).toBe(same.entries);
    expect(same.mirror!.ringRows).toBe(same.ringRowsChecked);
    const off = runCompressScenario(
      options,
      new CpuCompressBackend(geometry),
      undefined,
      new PerturbedBackend(geometry),
    );
    expect(off.mirror!.entryMismatches).toBeGreaterThan(0);
    expect(off.wrongEntries).toBe(0);
  });
});

describe("a request ring's default SWA page size follows its ring size", () => {
  it("c128 and c4 request rings of sizes that do not divide 256 run without swaPageSize", () => {
    for (const o of [
      { compressRatio: 128, ringSize: 512, draftTokens: 2, steps: 2 },
      { compressRatio: 4, useReqRing: true, ringSize: 24, headDim: 128, draftTokens: 2, steps: 2 },
    ] as const) {
      const r = run(o);
      expect(r.swaPageSize % o.ringSize).toBe(0);
      expect(r.wrongEntries).toBe(0);
    }
  });
});

describe("options are refused strictly (CompressError naming the field)", () => {
  const base: CompressScenarioOptions = { compressRatio: 4, headDim: 128, draftTokens: 4, steps: 1 };
  const backend = (): RingCompressBackend => cpuBackendFor(base);
  const refused = (options: unknown, code: string, field: string) => {
    let caught: unknown;
    try {
      runCompressScenario(options as CompressScenarioOptions, backend());
    } catch (e) {
      caught = e;
    }
    expect(CompressError.isInstance(caught)).toBe(true);
    expect(caught).toMatchObject({ code, field });
    return caught as CompressError;
  };

  it("unknown keys, with a suggestion", () => {
    const e = refused({ ...base, draftTokns: 4 }, "UNKNOWN_KEY", "draftTokns");
    expect(e.params).toMatchObject({ suggestion: "draftTokens" });
  });
  it("types: nothing coerced", () => {
    refused({ ...base, draftTokens: "4" }, "INVALID_TYPE", "draftTokens");
    refused({ ...base, adaptive: "true" }, "INVALID_TYPE", "adaptive");
    refused({ ...base, stateDtype: 16 }, "INVALID_TYPE", "stateDtype");
    refused({ ...base, onStep: 1 }, "INVALID_TYPE", "onStep");
    refused(null, "INVALID_TYPE", "options");
  });
  it("ranges and choices", () => {
    refused({ ...base, compressRatio: 8 }, "INVALID_RATIO", "compressRatio");
    refused({ ...base, draftTokens: 0 }, "INVALID_ARGUMENT", "draftTokens");
    refused({ ...base, draftTokens: 2.5 }, "INVALID_ARGUMENT", "draftTokens");
    refused({ ...base, requests: 65 }, "INVALID_ARGUMENT", "requests");
    refused({ ...base, headDim: 256 }, "INVALID_ARGUMENT", "headDim");
    refused({ ...base, steps: -1 }, "INVALID_ARGUMENT", "steps");
    const e = refused({ ...base, padFormula: "pre-fix-devise" }, "INVALID_ARGUMENT", "padFormula");
    expect(e.params).toMatchObject({ suggestion: "pre-fix-device" });
    refused({ ...base, stateDtype: "fp16" }, "INVALID_ARGUMENT", "stateDtype");
  });
  it("rings the planner refuses", () => {
    refused({ ...base, ringSize: 10 }, "INVALID_RING", "ringSize");
    refused({ ...base, swaPageSize: 24 }, "INVALID_RING", "swaPageSize");
  });
  it("keys that do not apply", () => {
    refused({ ...base, compressRatio: 128, useReqRing: true }, "NOT_APPLICABLE", "useReqRing");
    refused({ ...base, online: true }, "NOT_APPLICABLE", "online");
    refused({ ...base, writePad: 4, padFormula: "derived" }, "NOT_APPLICABLE", "writePad");
    refused({ ...base, compressRatio: 128, online: true, headDim: 128 }, "NOT_APPLICABLE", "headDim");
    refused(
      { ...base, compressRatio: 128, online: true, headDim: 512, draftTokens: 9 },
      "INVALID_ARGUMENT",
      "draftTokens",
    );
  });
  it("backends that do not fit the scenario, and online without its backend", () => {
    const e = () => runCompressScenario({ ...base, headDim: 512 }, backend());
    expect(e).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", field: "ring.headDim" }));
    const small = new CpuCompressBackend({ compressRatio: 4, headDim: 128, stateDtype: "fp32", stateRows: 16 });
    expect(() => runCompressScenario(base, small)).toThrow(expect.objectContaining({ field: "ring.stateRows" }));
    const online = { compressRatio: 128, online: true, draftTokens: 4, steps: 1 } as const;
    expect(() => runCompressScenario(online, cpuBackendFor(online))).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", field: "onlineBackend" }),
    );
  });
});

describe("large SWA pages: a batch stays within the planner's MAX_NUM_Q_TOKENS rows", () => {
  // Prefill chunks drawn up to twice a 65,536-token page used to add up past 65,535 rows, and the planner refused the
  // batch with a numQTokens the user never gave; chunks are now cut to what the batch has left.
  it("c4 paged, SWA page 65,536, 4 requests: every batch plans and every entry is right", () => {
    for (const seed of [1, 2, 3]) {
      const r = run({
        compressRatio: 4,
        headDim: 128,
        swaPageSize: 65536,
        draftTokens: 4,
        requests: 4,
        seed,
        steps: 6,
      });
      expect(r.wrongEntries, `seed ${seed}`).toBe(0);
      expect(r.batches.prefill, `seed ${seed}`).toBeGreaterThan(0);
    }
  });
});
