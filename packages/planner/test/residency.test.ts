// Ring residency (docs/reference/write-pad-and-residency.md#6-residency-invariant-r1): the derived pad keeps
// every committed position readable for any D <= pad, D = pad + 1 corrupts, and the pre-fix pads reproduce the
// upstream bug.
import { describe, expect, test } from "vitest";
import {
  PlannerError,
  RingResidencySimulator,
  runResidencyScenario,
  writePad,
  type ResidencyConfig,
} from "../src/index.js";

const CONFIGS: Array<[string, ResidencyConfig]> = [
  ["c4 R16 SPS256 paged", { compressRatio: 4, ringSize: 16, swaPageSize: 256 }],
  ["c4 R16 request ring", { compressRatio: 4, ringSize: 16, swaPageSize: 256, useReqRing: true }],
  ["c4 R16 SPS16 paged", { compressRatio: 4, ringSize: 16, swaPageSize: 16 }],
  ["c4 R32 SPS64 paged", { compressRatio: 4, ringSize: 32, swaPageSize: 64 }],
  ["c4 R32 SPS64 request ring", { compressRatio: 4, ringSize: 32, swaPageSize: 64, useReqRing: true }],
  ["c128 R256", { compressRatio: 128, ringSize: 256, swaPageSize: 256 }],
  ["c128 R512", { compressRatio: 128, ringSize: 512, swaPageSize: 512 }],
];
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe.each(CONFIGS)("%s", (_name, config) => {
  const pad = writePad(config.compressRatio, config.ringSize);

  test("no violation for every D <= pad (fixed D, random accepts, mixed chunks, decodes and resumes)", () => {
    const ds = [...new Set([1, 2, 3, 4, 5, Math.ceil(pad / 2), pad - 1, pad])].filter((d) => d >= 1 && d <= pad);
    for (const d of ds) {
      for (const seed of SEEDS.slice(0, 3)) {
        const r = runResidencyScenario({ ...config, draftTokens: d, seed, steps: 150 });
        expect(r.firstViolation?.message ?? null).toBeNull();
      }
    }
  });

  test("no violation with adaptive D up to the pad", () => {
    for (const seed of SEEDS)
      expect(runResidencyScenario({ ...config, draftTokens: pad, adaptive: true, seed, steps: 200 }).violations).toBe(
        0,
      );
  });

  test("D = pad + 1 and pad + 2 corrupt in every seed", () => {
    for (const d of [pad + 1, pad + 2]) {
      for (const seed of SEEDS) {
        const r = runResidencyScenario({ ...config, draftTokens: d, seed, steps: 200 });
        expect(r.violations).toBeGreaterThan(0);
        expect(r.firstViolation!.message).toMatch(/needs position \d+, but /);
      }
    }
  });
});

describe("minimal counterexamples at pad + 1", () => {
  test("c4 R16: prefill 518, verify D=11 accept 1: 518 never written and slot of 512 clobbered by draft 528", () => {
    const sim = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 256 });
    sim.prefill(518);
    sim.verify(11, 1);
    sim.verify(1, 1);
    const byPosition = new Map(sim.violations.map((v) => [v.position, v]));
    expect(byPosition.get(518)!.kind).toBe("never-written");
    expect(byPosition.get(518)!.committedBatchWroteIt).toBe(false);
    expect(byPosition.get(512)!.found).toMatchObject({ position: 528, rejectedDraft: true, writtenAtStep: 2 });
  });

  test("c128 R256: P=638, D=131, accept 1 fails the same two ways", () => {
    const sim = new RingResidencySimulator({ compressRatio: 128, ringSize: 256, swaPageSize: 256 });
    sim.prefill(638);
    sim.verify(131, 1);
    sim.verify(1, 1);
    const byPosition = new Map(sim.violations.map((v) => [v.position, v]));
    expect(byPosition.get(638)!.kind).toBe("never-written");
    expect(byPosition.get(512)!.found).toMatchObject({ position: 768, rejectedDraft: true });
  });

  test("the same trajectories at D = pad are clean", () => {
    for (const [cfg, p, d] of [
      [{ compressRatio: 4, ringSize: 16, swaPageSize: 256 }, 518, 10],
      [{ compressRatio: 128, ringSize: 256, swaPageSize: 256 }, 638, 130],
    ] as const) {
      const sim = new RingResidencySimulator(cfg);
      sim.prefill(p);
      sim.verify(d, 1);
      sim.verify(1, 1);
      expect(sim.violations).toEqual([]);
    }
  });
});

describe("pre-fix pads reproduce the upstream bug", () => {
  test("c4 loses positions from D = 5 with the old device pad (min(ring - ratio, 4)) and the old host loop (no pad)", () => {
    for (const padFormula of ["pre-fix-device", "pre-fix-host"] as const) {
      const cfg = { compressRatio: 4, ringSize: 16, swaPageSize: 256, padFormula };
      for (let d = 1; d <= 4; d++) {
        for (const seed of SEEDS.slice(0, 4))
          expect(runResidencyScenario({ ...cfg, draftTokens: d, seed, steps: 150 }).violations).toBe(0);
      }
      for (const seed of SEEDS.slice(0, 4)) {
        const r = runResidencyScenario({ ...cfg, draftTokens: 5, seed, steps: 150 });
        expect(r.violations).toBeGreaterThan(0);
        expect(r.firstViolation!.kind).toBe("never-written");
      }
    }
  });

  test("c4 P=515 D=5 accept 1 is the smallest direct case: the next window misses 515 with the old pads only", () => {
    for (const [padFormula, bad] of [
      ["derived", false],
      ["pre-fix-device", true],
      ["pre-fix-host", true],
    ] as const) {
      const sim = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 256, padFormula });
      sim.prefill(515);
      sim.verify(5, 1);
      sim.verify(4, 4); // its event at 519 reads 512..515 from the ring
      expect(sim.violations.some((v) => v.position === 515)).toBe(bad);
    }
  });

  test("an explicit pad overrides the formula: pad 10 is clean at D 10, pad 9 is not", () => {
    const cfg = { compressRatio: 4, ringSize: 16, swaPageSize: 256 };
    expect(runResidencyScenario({ ...cfg, writePad: 10, draftTokens: 10, seed: 3 }).violations).toBe(0);
    expect(runResidencyScenario({ ...cfg, writePad: 9, draftTokens: 10, seed: 3 }).violations).toBeGreaterThan(0);
  });
});

describe("radix resume and page boundaries", () => {
  test("resume at every SWA-page boundary after a long paged-c4 prefill reads the right overlap slots", () => {
    const cfg = { compressRatio: 4, ringSize: 16, swaPageSize: 256 };
    for (let k = 1; k <= 7; k++) {
      const sim = new RingResidencySimulator(cfg);
      sim.prefill(2000);
      sim.radixResume(k * 256);
      sim.prefill(8); // first window at k*256 + 3 reads k*256-4 .. k*256-1 from page k-1's ring
      sim.verify(10, 4);
      sim.verify(10, 10);
      expect(sim.violations).toEqual([]);
    }
  });

  test("P = 254, D = 10 with SPS 256 crosses a page cleanly", () => {
    const sim = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 256 });
    sim.prefill(254);
    for (const a of [1, 10, 3, 7]) sim.verify(10, a);
    expect(sim.violations).toEqual([]);
  });

  test("radix resume is refused for request rings and off page boundaries", () => {
    const req = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 256, useReqRing: true });
    req.prefill(600);
    expect(() => req.radixResume(256)).toThrow(PlannerError);
    const paged = new RingResidencySimulator({ compressRatio: 4, ringSize: 16, swaPageSize: 256 });
    paged.prefill(600);
    expect(() => paged.radixResume(300)).toThrow(/multiple of swaPageSize/);
    expect(() => paged.verify(3, 4)).toThrow(PlannerError);
  });
});

describe("non-speculative rings", () => {
  test("mixed prefill chunks and decodes never violate with R = window", () => {
    for (const cfg of [
      { compressRatio: 4, ringSize: 8, swaPageSize: 256 },
      { compressRatio: 128, ringSize: 128, swaPageSize: 256 },
    ]) {
      const sim = new RingResidencySimulator(cfg);
      sim.prefill(300);
      for (let i = 0; i < 300; i++) {
        if (i % 37 === 0) sim.prefill(1 + (i % 50));
        else sim.decode();
      }
      expect(sim.violations).toEqual([]);
    }
  });
});
