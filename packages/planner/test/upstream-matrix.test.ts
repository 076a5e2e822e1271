// Upstream's regression tests (docs/reference/planner.md §10), ported, and replayed with the pre-fix pads to show they
// catch the bug.
import { describe, expect, test } from "vitest";
import { padForFormula, planPrefill, writePad, windowSize, type PadFormula } from "../src/index.js";
import { RAGGED_EXTEND_PATTERNS, raggedExtendOptions } from "../src/testing.js";
import { range } from "./helpers.js";

const RINGS = [
  { compressRatio: 4, ringSize: 16 },
  { compressRatio: 128, ringSize: 256 },
] as const;

/** The draft counts upstream's residency test sweeps: {1..5, max-1, max} within [1, max]. */
function draftCounts(maxDraft: number): number[] {
  return [...new Set([1, 2, 3, 4, 5, maxDraft - 1, maxDraft])]
    .filter((d) => d >= 1 && d <= maxDraft)
    .sort((a, b) => a - b);
}

function written(
  cr: number,
  ringSize: number,
  prefix: number,
  d: number,
  path: "host" | "device",
  pad?: number,
): Set<number> {
  const plan = planPrefill({
    compressRatio: cr,
    ringSize,
    swaPageSize: 256,
    seqLens: [prefix + d],
    extendLens: [d],
    path,
    writePadOverride: pad,
  });
  return new Set(plan.planW.validRecords().map((w) => prefix + w.raggedId));
}

interface Case {
  test: "residency" | "agreement";
  cr: number;
  d: number;
  prefix: number;
}

/** Runs upstream's residency and agreement matrices with the given CPU and GPU pads; returns the failing cases. */
function failingCases(
  hostPad: (cr: number, r: number) => number,
  devicePad: (cr: number, r: number) => number,
): Case[] {
  const failures: Case[] = [];
  for (const { compressRatio: cr, ringSize: r } of RINGS) {
    const maxDraft = writePad(cr, r);
    for (const d of draftCounts(maxDraft)) {
      for (const prefix of range(512, 512 + Math.min(cr, 4))) {
        const got = written(cr, r, prefix, d, "host", hostPad(cr, r));
        if (!range(prefix, prefix + d).every((p) => got.has(p))) failures.push({ test: "residency", cr, d, prefix });
      }
    }
    for (const d of [1, 4, maxDraft]) {
      for (const prefix of [512, 513, 515]) {
        const host = [...written(cr, r, prefix, d, "host", hostPad(cr, r))].sort((a, b) => a - b);
        const device = [...written(cr, r, prefix, d, "device", devicePad(cr, r))].sort((a, b) => a - b);
        if (JSON.stringify(host) !== JSON.stringify(device)) failures.push({ test: "agreement", cr, d, prefix });
      }
    }
  }
  return failures;
}

const pad = (formula: PadFormula) => (cr: number, r: number) => padForFormula(formula, cr, r);

describe("planner §10.1 test_deepseek_v4_compress_plan_draft_pad", () => {
  test("residency and agreement matrices pass with the derived pad", () => {
    expect(failingCases(pad("derived"), pad("derived"))).toEqual([]);
  });

  test("the pre-fix pads (host: none, device: min(ring - ratio, 4)) fail exactly upstream's 19 cases", () => {
    const failures = failingCases(pad("pre-fix-host"), pad("pre-fix-device"));
    const residency = failures.filter((f) => f.test === "residency").map((f) => `${f.cr}:${f.d}@${f.prefix}`);
    const agreement = failures.filter((f) => f.test === "agreement").map((f) => `${f.cr}:${f.d}@${f.prefix}`);
    // c4: (5, 515), (9, 512..515), (10, 512..515); c128: D in {129, 130} at every prefix.
    expect(residency).toEqual([
      "4:5@515",
      ...range(512, 516).map((p) => `4:9@${p}`),
      ...range(512, 516).map((p) => `4:10@${p}`),
      ...range(512, 516).map((p) => `128:129@${p}`),
      ...range(512, 516).map((p) => `128:130@${p}`),
    ]);
    // CPU (no pad) and GPU (pad 4) write different sets for c128 D=130 at prefixes 512 and 513.
    expect(agreement).toEqual(["128:130@512", "128:130@513"]);
    expect(failures).toHaveLength(19);
  });

  test("the old GPU pad alone fails the same c4 residency cases as the old CPU path", () => {
    const gpuOnly = failingCases(pad("pre-fix-device"), pad("pre-fix-device")).filter(
      (f) => f.test === "residency" && f.cr === 4,
    );
    const cpuOnly = failingCases(pad("pre-fix-host"), pad("pre-fix-host")).filter(
      (f) => f.test === "residency" && f.cr === 4,
    );
    expect(gpuOnly).toEqual(cpuOnly);
    expect(gpuOnly.map((f) => f.d)).not.toContain(4);
    expect(Math.min(...gpuOnly.map((f) => f.d))).toBe(5); // c4 loses positions from D = 5
  });

  test("test_plain_prefill_write_set: non-speculative rings write exactly the future-read set plus the page tails", () => {
    const expected: Record<string, number[]> = {
      "4:512": [...range(252, 256), ...range(508, 512)],
      "4:600": [...range(252, 256), ...range(508, 512), ...range(596, 600)],
      "4:777": [...range(252, 256), ...range(508, 512), ...range(764, 768), ...range(772, 777)],
      "128:512": [],
      "128:600": range(512, 600),
      "128:777": range(768, 777),
    };
    for (const [cr, r] of [
      [4, 8],
      [128, 128],
    ] as const) {
      expect(writePad(cr, r)).toBe(0);
      for (const s of [512, 600, 777]) {
        expect([...written(cr, r, 0, s, "host")].sort((a, b) => a - b)).toEqual(expected[`${cr}:${s}`]);
      }
    }
  });

  test("test_over_capacity_under_writes: D = max + ratio + 1 leaves positions unwritten (the start-up check must refuse it)", () => {
    const missing = (cr: number, r: number) => {
      const d = writePad(cr, r) + cr + 1;
      const got = written(cr, r, 512, d, "host");
      return range(512, 512 + d).filter((p) => !got.has(p));
    };
    expect(missing(4, 16)).toEqual(range(512, 517));
    expect(missing(128, 256)).toEqual(range(512, 641));
  });
});

describe("planner §10.2 test_dsv4_compress_write_pad", () => {
  test("pad is 0 for every non-speculative ring", () => {
    expect(writePad(2, 2)).toBe(0);
    expect(writePad(4, 8)).toBe(0);
    expect(writePad(128, 128)).toBe(0);
  });
  test("speculative pads are 10 (c4) and 130 (c128); online c128 ring 1 has no negative pad", () => {
    expect(writePad(4, 16)).toBe(10);
    expect(writePad(128, 256)).toBe(130);
    expect(writePad(128, 1)).toBe(0);
  });
  test("ratio 2: the smallest power-of-two ring >= D + 2 serves D", () => {
    expect(windowSize(2)).toBe(2);
    for (let d = 1; d <= 16; d++) {
      const ring = 1 << (d + 1).toString(2).length; // upstream: 1 << (D+1).bit_length()
      expect(ring).toBeGreaterThanOrEqual(2 + d);
      expect(ring / 2).toBeLessThan(2 + d);
      expect(writePad(2, ring)).toBeGreaterThanOrEqual(d);
    }
  });
});

describe("planner §10.3 other regressions", () => {
  test("ragged extends on the device path: every ragged row written exactly once (c128 R128, prefix 0)", () => {
    for (const ext of RAGGED_EXTEND_PATTERNS) {
      const options = raggedExtendOptions(ext);
      const numQ = options.numQTokens!;
      const plan = planPrefill(options);
      const ids = plan.planW
        .validRecords()
        .map((w) => w.raggedId)
        .sort((a, b) => a - b);
      expect(ids).toEqual(range(0, numQ));
    }
  });

  test("CUDA-graph bucket tail: shapes (4,16)/(4,8), write ids [0,1,2], row 3 invalid, for c4 and c128", () => {
    for (const [cr, r] of [
      [4, 8],
      [128, 128],
    ] as const) {
      const plan = planPrefill({
        compressRatio: cr,
        ringSize: r,
        swaPageSize: 256,
        seqLens: [1, 3],
        extendLens: [1, 2],
        numQTokens: 4,
        path: "device",
      });
      expect(plan.planC.bytes.byteLength).toBe(4 * 16);
      expect(plan.planW.bytes.byteLength).toBe(4 * 8);
      expect(plan.planW.validRecords().map((w) => w.raggedId)).toEqual([0, 1, 2]);
      expect(plan.planW.row(3).raggedId).toBe(0xffffffff);
    }
  });

  test("paged buffer: after a 1024-token prefill (SPS 256, R 8) the last 4 tokens of every SWA page are in the ring", () => {
    const plan = planPrefill({ compressRatio: 4, ringSize: 8, swaPageSize: 256, seqLens: [1024], extendLens: [1024] });
    const writes = new Map(plan.planW.validRecords().map((w) => [w.raggedId, w.writeLoc]));
    for (let page = 0; page < 4; page++) {
      for (let p = page * 256 + 252; p < page * 256 + 256; p++) expect(writes.get(p)).toBe(page * 8 + (p % 8));
    }
  });
});
