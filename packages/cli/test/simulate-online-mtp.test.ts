// `dsv4-kv simulate online-mtp` end to end: a spawned process, JSON out, exit codes.
import { describe, expect, test } from "vitest";
import { cli } from "./cli-helpers.js";
import { flagArgs } from "./helpers.js";

const mtp = (flags: Parameters<typeof flagArgs>[0]): string[] => ["simulate", "online-mtp", ...flagArgs(flags)];
const base = mtp({ requests: 6, steps: 30, "draft-tokens": 4 });

describe("dsv4-kv simulate online-mtp", () => {
  test("hardened lifecycle on the CPU backend: no lost commit, fp32 error within 2e-4, exit 0", () => {
    const r = cli([...base, "--json", "--seed", "3"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual([
      "commits",
      "lostCommits",
      "maxAbsError",
      "maxRelError",
      "steps",
      "verifies",
    ]);
    expect(out.steps).toBe(30);
    expect(out.verifies).toBeGreaterThan(0);
    expect(out.commits).toBeGreaterThan(0);
    expect(out.lostCommits).toBe(0);
    expect(out.maxAbsError).toBeLessThan(2e-4);
  });

  test("adaptive D up to 8 and bf16 state stay within the stated tolerances", () => {
    const r = cli(
      mtp({ requests: 5, steps: 25, "draft-tokens": 8, adaptive: true, "state-dtype": "bf16", json: true }),
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.lostCommits).toBe(0);
    expect(out.maxAbsError).toBeGreaterThan(0); // bf16 rounding is visible, not hidden
  });

  test("upstream's lifecycle loses commits in the interleaved scenario: exit 1 and the count", () => {
    const r = cli([...base, "--lifecycle", "upstream", "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).lostCommits).toBeGreaterThan(0);
    const text = cli([...base, "--lifecycle", "upstream"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/lost commits\s+[1-9]/);
    expect(text.stdout).toMatch(/FAILED/);
  });

  test("the same seed gives the same report", () => {
    expect(cli([...base, "--json", "--seed", "11"]).stdout).toBe(cli([...base, "--json", "--seed", "11"]).stdout);
  });

  test("bad input exits 2 with a message naming the flag", () => {
    const tooWide = cli(mtp({ requests: 4, steps: 5, "draft-tokens": 9 }));
    expect(tooWide.code).toBe(2);
    expect(tooWide.stderr).toMatch(/draft-tokens/);
    const badDtype = cli([...base, "--state-dtype", "fp16"]);
    expect(badDtype.code).toBe(2);
    expect(badDtype.stderr).toMatch(/state-dtype/);
    expect(cli([...base, "--backend", "tpu"]).code).toBe(2);
    expect(cli(["simulate", "online-mtp", "--help"]).stdout).toMatch(/Usage: dsv4-kv simulate online-mtp/);
  });

  test("--backend gpu without a GPU exits 2 and says why (or runs clean on a GPU machine)", () => {
    const r = cli([...base, "--backend", "gpu", "--json"]);
    if (r.code === 0) {
      expect(JSON.parse(r.stdout).lostCommits).toBe(0);
    } else {
      expect(r.code).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(10);
    }
  });
});
