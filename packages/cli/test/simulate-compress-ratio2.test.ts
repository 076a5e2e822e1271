// `dsv4-kv simulate compress --ratio 2` end to end: DeepSeek-V4.1's pair-state ring on data, a spawned process.
import { describe, expect, test } from "vitest";
import { cli } from "./cli-helpers.js";
import { flagArgs } from "./helpers.js";

const compress = (flags: Parameters<typeof flagArgs>[0]): string[] => ["simulate", "compress", ...flagArgs(flags)];
const c2 = { ratio: 2, "draft-tokens": 6, steps: 40 };

describe("dsv4-kv simulate compress --ratio 2", () => {
  test("SGLang's ring for DSpark (D 6 → R₂ 8): every entry right, exit 0, the JSON shape", () => {
    const r = cli(compress({ ...c2, json: true }));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^simulate compress: 40 steps of up to 4 requests; 42 pair-state rows/);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      ok: true,
      compressRatio: 2,
      ringSize: 8,
      speculativeRingSize: 8,
      layout: "v4",
      verifyWriter: "torch",
      wrongEntries: 0,
      wrongRingRows: 0,
      firstWrong: null,
      complete: true,
    });
    expect(out.entries).toBeGreaterThan(100);
    expect(out.entriesByKind.verify).toBeGreaterThan(0);
    expect(out.ringRowsChecked).toBeGreaterThan(0);
    expect(out.maxBoundRatio).toBeLessThanOrEqual(1);
  });

  test("a ring narrower than D corrupts entries: exit 1, the first wrong entry and ring row explained", () => {
    const r = cli(compress({ ...c2, "ring-size": 4 }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/c2 pair-state ring 4 per request \(SGLang's ring for this D is 8\)/);
    expect(r.stdout).toMatch(/entries +\d+ checked .*, [1-9]\d* wrong/);
    expect(r.stdout).toMatch(/its partner came from pair-state row \d+, which held position \d+ of request \d+/);
    expect(r.stdout).toMatch(/first wrong ring row:/);
    expect(r.stdout).toContain("FAILED: wrong compressed KV");
  });

  test("every layout and the fused verify writer", () => {
    for (const layout of ["v41", "v41-fp4"]) {
      const out = JSON.parse(cli(compress({ ...c2, layout, json: true })).stdout);
      expect([out.layout, out.ok]).toEqual([layout, true]);
    }
    const fused = cli(compress({ ...c2, "verify-writer": "verify-fused", "ring-size": 4, json: true }));
    expect(fused.code).toBe(1);
    expect(JSON.parse(fused.stdout).verifyWriter).toBe("verify-fused");
  });

  test("refuses what does not apply, naming the flag (exit 2)", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...c2, pad: 3 }, /--pad = 3: does not apply to --ratio 2/],
      [{ ...c2, online: true }, /--online = true: does not apply to --ratio 2/],
      [{ ...c2, "head-dim": 128 }, /--head-dim = 128: must be 512 with --ratio 2/],
      [{ ...c2, backend: "gpu" }, /--backend = "gpu": must be cpu with --ratio 2/],
      [{ ...c2, "draft-tokens": 65 }, /--draft-tokens = 65: must be an integer in \[1, 64\]/],
      [{ ...c2, "ring-size": 2000 }, /--ring-size = 2000: must be an integer in \[1, 1024\]/],
      [{ ratio: 4, "draft-tokens": 6, layout: "v41" }, /--layout = "v41": applies to --ratio 2 only/],
      [{ ratio: 3, "draft-tokens": 6 }, /--ratio = 3: must be 2, 4 or 128/],
    ];
    for (const [flags, message] of cases) {
      const r = cli(compress(flags as Parameters<typeof flagArgs>[0]));
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
  });
});
