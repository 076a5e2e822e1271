// `dsv4-kv simulate compress` end to end: a spawned process, JSON out, exit codes.
import { describe, expect, test } from "vitest";
import { Progress } from "../src/commands/progress.js";
import { cli } from "./cli-helpers.js";
import { flagArgs } from "./helpers.js";

const compress = (flags: Parameters<typeof flagArgs>[0]): string[] => ["simulate", "compress", ...flagArgs(flags)];
const c4 = { ratio: 4, "draft-tokens": 8, "head-dim": 128, steps: 30 };

describe("dsv4-kv simulate compress", () => {
  test("derived pad, c4 paged on the CPU backend: every entry right, exit 0, the JSON shape", () => {
    const r = cli(compress({ ...c4, json: true }));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^simulate compress: 30 steps of up to 4 requests; \d+ state rows/); // the estimate
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).not.toContain("\x1b"); // stderr is a pipe: plain lines only
    const out = JSON.parse(r.stdout);
    for (const key of ["entries", "wrongEntries", "maxAbsError", "maxRelError", "firstWrong"])
      expect(out).toHaveProperty(key);
    expect(out).toMatchObject({ ok: true, wrongEntries: 0, firstWrong: null, wrongRingRows: 0, writePad: 10 });
    expect(out.entries).toBeGreaterThan(0);
    expect(out.ringRowsChecked).toBeGreaterThan(0);
    expect(out.maxAbsError).toBeLessThan(1e-5);
    expect(out.steps).toBe(30);
  });

  test("the pre-fix device pad corrupts entries: exit 1, the first wrong entry explained", () => {
    const r = cli(compress({ ...c4, "pad-formula": "pre-fix-device", json: true }));
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.ok).toBe(false);
    expect(out.writePad).toBe(4);
    expect(out.wrongEntries).toBeGreaterThan(0);
    expect(Object.keys(out.firstWrong).sort()).toEqual(
      [
        "absError",
        "batchKind",
        "cause",
        "channel",
        "got",
        "position",
        "request",
        "slot",
        "step",
        "tolerance",
        "want",
      ].sort(),
    );
    expect(out.firstWrong.cause).toMatch(/ring did not hold the committed tokens/);
    const text = cli(compress({ ...c4, "pad-formula": "pre-fix-host" }));
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/entries\s+\d+ checked .*, [1-9]\d* wrong/);
    expect(text.stdout).toMatch(/largest error/);
    expect(text.stdout).toMatch(/first wrong entry:\n\s+step \d+ \(\w+\): the entry of request \d+/);
    expect(text.stdout).toMatch(/FAILED/);
  });

  test("D = pad + 1 with the derived pad fails; --pad forces a pad", () => {
    expect(cli(compress({ ...c4, "draft-tokens": 11 })).code).toBe(1);
    const forced = JSON.parse(cli(compress({ ...c4, pad: 2, json: true })).stdout);
    expect(forced.writePad).toBe(2);
    expect(forced.padFormula).toBe("explicit");
  });

  test("online c128 agrees with ring c128 (text), request-ring c4 and bf16 run clean", () => {
    const online = cli(compress({ ratio: 128, online: true, "draft-tokens": 4, steps: 30 }));
    expect(online.code).toBe(0);
    expect(online.stdout).toMatch(/online\s+\d+ entries, 0 mismatches/);
    expect(online.stdout).toMatch(/OK/);
    const reqRing = cli(compress({ ...c4, "req-ring": true, adaptive: true, "state-dtype": "bf16", json: true }));
    expect(reqRing.code).toBe(0);
    expect(JSON.parse(reqRing.stdout)).toMatchObject({ useReqRing: true, stateDtype: "bf16", wrongEntries: 0 });
    expect(JSON.parse(reqRing.stdout)).not.toHaveProperty("swaPageSize");
  });

  test("--json prints only the ring fields that apply: none for c128, swaPageSize for paged c4", () => {
    const c128 = JSON.parse(cli(compress({ ratio: 128, "draft-tokens": 2, steps: 3, json: true })).stdout);
    expect(c128).toMatchObject({ compressRatio: 128, ringSize: 256 });
    expect(c128).not.toHaveProperty("useReqRing");
    expect(c128).not.toHaveProperty("swaPageSize");
    const paged = JSON.parse(cli(compress({ ...c4, steps: 3, json: true })).stdout);
    expect(paged).toMatchObject({ useReqRing: false, swaPageSize: 256 });
  });

  test("a request ring of any size runs without --swa-page-size (its default follows the ring)", () => {
    expect(cli(compress({ ratio: 128, "draft-tokens": 2, "ring-size": 512, steps: 3 })).code).toBe(0);
    expect(cli(compress({ ...c4, "req-ring": true, "ring-size": 24, steps: 3 })).code).toBe(0);
  });

  test("the same seed gives the same report", () => {
    const a = cli(compress({ ...c4, seed: 5, json: true }));
    expect(a.stdout).toBe(cli(compress({ ...c4, seed: 5, json: true })).stdout);
  });

  test("bad flags exit 2 naming the flag", () => {
    const cases: [Parameters<typeof flagArgs>[0], RegExp][] = [
      [{ ...c4, ratio: 8 }, /--ratio/],
      [{ ...c4, "head-dim": 256 }, /--head-dim/],
      [{ ...c4, online: true }, /--online/],
      [{ ratio: 128, online: true, "draft-tokens": 9 }, /--draft-tokens/],
      [{ ...c4, "pad-formula": "pre-fix-devise" }, /--pad-formula.*did you mean "pre-fix-device"/],
      [{ ...c4, pad: 4, "pad-formula": "derived" }, /--pad/],
      [{ ...c4, "ring-size": 10 }, /--ring-size/],
      [{ ratio: 128, "req-ring": true, "draft-tokens": 4 }, /--req-ring/],
      [{ ...c4, backend: "tpu" }, /--backend/],
    ];
    for (const [flags, message] of cases) {
      const r = cli(compress(flags));
      expect(r.code, flags.toString()).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const missing = cli(["simulate", "compress", "--ratio", "4"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--draft-tokens/);
    const typo = cli(["simulate", "compress", "--ratio", "4", "--draft-tokns", "4"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/did you mean "--draft-tokens"/);
    expect(cli(["simulate", "compress", "--help"]).stdout).toMatch(/Usage: dsv4-kv simulate compress/);
  });

  test("--backend gpu without a GPU exits 2 and says why (or runs clean on a GPU machine)", () => {
    const r = cli(compress({ ...c4, backend: "gpu", json: true }));
    if (r.code === 0) {
      expect(JSON.parse(r.stdout)).toMatchObject({ backend: "gpu", wrongEntries: 0 });
    } else {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--backend gpu unavailable: .{10,}/);
      expect(r.stderr).toMatch(/or use --backend cpu/);
    }
  });

  test("the progress line is labelled with the command", () => {
    const writes: string[] = [];
    let t = 0;
    const progress = new Progress(
      { isTTY: true, write: (s: string) => writes.push(s) > 0 },
      { label: "simulate compress", now: () => t },
    );
    t = 600;
    progress.update(3, 10);
    expect(writes[0]).toBe("\r\x1b[Ksimulate compress: 3/10 steps (30.0%), 1 s elapsed, ETA 1 s");
  });
});
