// `dsv4-kv simulate online-mtp` end to end: a spawned process, JSON out, exit codes.
import { describe, expect, test } from "vitest";
import { Progress, formatDuration, formatProgress } from "../src/commands/progress.js";
import { finiteOrName } from "../src/commands/simulate-online-mtp.js";
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
      "complete",
      "lostCommits",
      "maxAbsError",
      "maxRelError",
      "ok",
      "reason",
      "steps",
      "verifies",
      "violationCount",
      "violations",
    ]);
    expect(out.ok).toBe(true);
    expect(out.reason).toBeNull();
    expect(out.violationCount).toBe(0);
    expect(out.violations).toEqual([]);
    expect(r.stderr).toMatch(/^simulate online-mtp: \d+ steps of up to/); // the estimate
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).not.toContain("\x1b"); // stderr is a pipe here: plain lines only
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
    const r = cli([...base, "--lifecycle", "upstream", "--json", "--max-violations", "2"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.lostCommits).toBeGreaterThan(0);
    // the JSON says why it exits 1: ok, a reason, the count and at most --max-violations entries
    expect(out.ok).toBe(false);
    expect(out.reason).toMatch(/lost commit/);
    expect(out.violationCount).toBeGreaterThanOrEqual(out.lostCommits);
    expect(out.violations.length).toBe(Math.min(2, out.violationCount));
    expect(Object.keys(out.violations[0]).sort()).toEqual(
      [
        "actual",
        "bound",
        "channel",
        "element",
        "error",
        "expected",
        "kind",
        "layer",
        "length",
        "position",
        "request",
        "roundings",
        "row",
      ].sort(),
    );
    expect(out.violations[0].kind).toBe("lost-commit");
    const text = cli([...base, "--lifecycle", "upstream"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/lost commits\s+[1-9]/);
    expect(text.stdout).toMatch(/violations\s+[1-9]/);
    expect(text.stdout).toMatch(/lost-commit: layer \d+, request \d+/);
    expect(text.stdout).toMatch(/FAILED: \d+ lost commits?/);
  });

  test("bf16 at D 1, seed 8950 (over the old flat tolerance) is inside the derived bound: exit 0", () => {
    const r = cli([
      ...mtp({ requests: 16, steps: 200, "draft-tokens": 1, seed: 8950, "state-dtype": "bf16" }),
      "--json",
    ]);
    const out = JSON.parse(r.stdout);
    expect(out.reason).toBeNull();
    expect(r.code).toBe(0);
    expect(out.maxAbsError).toBeGreaterThan(0.1); // errors the old flat tolerance refused, now inside the bound
    const text = cli(mtp({ requests: 4, steps: 20, "draft-tokens": 1, "state-dtype": "bf16" }));
    expect(text.stdout).toMatch(/bound\s+derived from each row's bf16 roundings/);
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

describe("simulate online-mtp output helpers", () => {
  test("non-finite numbers are written as their names, never null", () => {
    const json = JSON.stringify({ a: Number.POSITIVE_INFINITY, b: Number.NaN, c: -Infinity, d: 1.5 }, finiteOrName);
    expect(JSON.parse(json)).toEqual({ a: "Infinity", b: "NaN", c: "-Infinity", d: 1.5 });
  });

  test("the progress line: steps, percentage, elapsed and ETA", () => {
    expect(formatProgress(250, 1000, 30)).toBe("250/1000 steps (25.0%), 30 s elapsed, ETA 1 min 30 s");
    expect(formatProgress(0, 1000, 0)).toBe("0/1000 steps (0.0%), 0 s elapsed, ETA unknown");
    expect(formatDuration(7500)).toBe("2 h 05 min");
    expect(formatDuration(59.4)).toBe("59 s");
  });

  test("on a terminal: a rewritten line at most every 0.5 s, cleared at the end", () => {
    const writes: string[] = [];
    let t = 0;
    const tty = { isTTY: true, write: (s: string) => writes.push(s) > 0 };
    const progress = new Progress(tty, { label: "simulate online-mtp", now: () => t });
    for (let step = 1; step <= 10; step++) {
      t += 200; // a step every 0.2 s: a line at 0.6 s, 1.2 s, 1.8 s
      progress.update(step, 10);
    }
    progress.clear();
    expect(writes.length).toBe(4);
    expect(writes[0]).toBe("\r\x1b[Ksimulate online-mtp: 3/10 steps (30.0%), 1 s elapsed, ETA 1 s");
    expect(writes[3]).toBe("\r\x1b[K");
  });

  test("through a pipe: plain lines every 2 s (a log file shows the run is alive); --quiet: none", () => {
    const writes: string[] = [];
    let t = 0;
    const pipe = { isTTY: false, write: (s: string) => writes.push(s) > 0 };
    const progress = new Progress(pipe, { label: "simulate online-mtp", now: () => t });
    for (let step = 1; step <= 30; step++) {
      t += 200; // 6 s in all: lines at 2, 4 and 6 s
      progress.update(step, 30);
    }
    progress.clear();
    expect(writes).toEqual([
      "simulate online-mtp: 10/30 steps (33.3%), 2 s elapsed, ETA 4 s\n",
      "simulate online-mtp: 20/30 steps (66.7%), 4 s elapsed, ETA 2 s\n",
      "simulate online-mtp: 30/30 steps (100.0%), 6 s elapsed, ETA 0 s\n",
    ]);
    const quiet = new Progress(pipe, { label: "x", quiet: true, now: () => t });
    t += 10_000;
    quiet.note("estimate");
    quiet.update(1, 2);
    expect(writes.length).toBe(3);
  });
});
