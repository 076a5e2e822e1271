// `dsv4-kv prove residency` end to end, and `simulate residency --replay` of its counterexamples.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { describe, expect, test } from "vitest";
import { BIN, cli } from "./cli-helpers.js";

const C4_REQ = ["prove", "residency", "--ratio", "4", "--ring", "16", "--swa-page", "256", "--req-ring"];

function saved(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "dsv4-prove-")), "proof.json");
  writeFileSync(path, text);
  return path;
}

describe("dsv4-kv prove residency", () => {
  test("proved at the pad: exit 0 with the state count and the time", () => {
    const r = cli([...C4_REQ, "--draft-tokens", "10", "--adaptive"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /proved: no batch sequence loses a committed position \(\d+ canonical states, \d+ transitions, [\d.]+ s\)/,
    );
    // piped: the estimate and plain progress lines, never a terminal's control codes
    expect(r.stderr).toMatch(/^prove residency: c4 ring 16 \(request ring\): \d+ canonical prefixes/);
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).not.toContain("\x1b");
  });

  test("pad + 1: exit 1, a shortest counterexample in words and as JSON, which --replay replays", () => {
    const text = cli([...C4_REQ, "--draft-tokens", "11"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      /NOT proved .* 3 batches from an empty ring:\n {2}1\. prefill of 1 token at prefix 0\n/,
    );
    expect(text.stdout).toMatch(/needs position 1, but slot 1 was never written/);
    const r = cli([...C4_REQ, "--draft-tokens", "11", "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(
      expect.arrayContaining(["proved", "states", "seconds", "ring", "draftTokens", "counterexample"]),
    );
    expect(out).toMatchObject({
      proved: false,
      draftTokens: 11,
      ring: { compressRatio: 4, ringSize: 16, useReqRing: true },
    });
    expect(out.counterexample.batches).toHaveLength(3);
    expect(out.counterexample.violation.kind).toBe("never-written");
    const file = saved(r.stdout);
    const replay = cli(["simulate", "residency", "--replay", file]);
    expect(replay.code).toBe(1);
    expect(replay.stdout).toContain(out.counterexample.violation.message);
    const replayJson = JSON.parse(cli(["simulate", "residency", "--replay", file, "--json"]).stdout);
    expect(replayJson.firstViolation).toEqual(out.counterexample.violation);
  });

  test("the pre-fix device pad fails at D = 5 on c4 and the replay uses the file's pad", () => {
    const r = cli([...C4_REQ, "--draft-tokens", "5", "--pad-formula", "pre-fix-device", "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ writePad: 4, padSource: "pre-fix-device" });
    expect(cli(["simulate", "residency", "--replay", saved(r.stdout)]).code).toBe(1);
  });

  test("--find-max: the largest D and the counterexample at the next one (a pad-0 ring serves 2)", () => {
    const r = cli([
      "prove",
      "residency",
      "--ratio",
      "4",
      "--ring",
      "8",
      "--swa-page",
      "8",
      "--req-ring",
      "--find-max",
      "--json",
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.maxDraftTokens).toBe(2);
    expect(out.failure).toMatchObject({ proved: false, draftTokens: 3 });
    expect(cli(["simulate", "residency", "--replay", saved(r.stdout)]).code).toBe(1);
  });

  test("bad input exits 2 naming the flag", () => {
    expect(cli([...C4_REQ]).stderr).toMatch(/--draft-tokens/);
    expect(cli([...C4_REQ, "--draft-tokens", "3", "--find-max"]).code).toBe(2);
    expect(cli([...C4_REQ, "--draft-tokens", "3", "--pad", "2", "--pad-formula", "derived"]).code).toBe(2);
    const bad = cli(["prove", "residency", "--ratio", "8", "--ring", "16", "--swa-page", "256", "--draft-tokens", "2"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--ratio/);
    const ring = cli([
      "prove",
      "residency",
      "--ratio",
      "4",
      "--ring",
      "18",
      "--swa-page",
      "256",
      "--draft-tokens",
      "2",
    ]);
    expect(ring.code).toBe(2);
    expect(ring.stderr).toMatch(/ringSize/);
  });

  test("--replay refuses a proof with no counterexample and other flags beside it", () => {
    const proved = saved(cli([...C4_REQ, "--draft-tokens", "4", "--json"]).stdout);
    const r = cli(["simulate", "residency", "--replay", proved]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no counterexample/);
    expect(cli(["simulate", "residency", "--replay", proved, "--steps", "3"]).code).toBe(2);
    expect(cli(["simulate", "residency", "--replay", join(tmpdir(), "no-such-proof.json")]).code).toBe(2);
  });

  test("check cites the shipped proof for each resolved ring", () => {
    const r = cli(["check"]);
    expect(r.stdout).toMatch(
      /c4 ring 16, SWA page 256, .*\n {4}proof: every schedule of at most 4 draft tokens is safe \(shipped table/,
    );
    expect(r.stdout).toMatch(/c128 ring 256, .*\n {4}proof: every schedule of at most 4 draft tokens is safe/);
  });
});

describe("dsv4-kv simulate residency, long runs", () => {
  test("Ctrl-C stops a run and prints the summary so far (exit 130)", async () => {
    const child = spawn(process.execPath, [BIN, "simulate", "residency", "--steps", "10000000"], { stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    // Wait until the run is under way (its modules loaded), then interrupt it.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(130);
    expect(stderr).toMatch(/interrupted after \d+ of 10000000 batches; the summary so far:/);
    expect(stdout).toMatch(/c4 ring 16 .*: write pad 10/);
    expect(stdout).toMatch(/result: clean/);
  }, 60_000);
});
