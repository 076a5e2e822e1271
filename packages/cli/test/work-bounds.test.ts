// Every command whose work grows with its input states its bound. The runaway cases of the
// issue, each in a child process under a timeout well below the 60 s: refused up front by a typed
// WORK_LIMIT error naming the estimate and the flag, or stopped at --time-limit with a partial result, marked as
// such, after an estimate line and progress lines with an ETA on a stderr that is not a terminal.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN } from "./cli-helpers.js";

/** Runs dsv4-kv with stderr a pipe, bounded by `seconds`: a runaway shows as `timedOut`, not a hung test. */
function run(args: string[], seconds = 30): { code: number | null; stdout: string; stderr: string; timedOut: boolean } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    timeout: seconds * 1000,
    env: { ...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined },
  });
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, timedOut };
}

/** The stderr line of a refusal: one line, the typed error, never "internal error". */
function refusal(r: ReturnType<typeof run>): string {
  expect(r.timedOut).toBe(false);
  expect(r.code).toBe(2);
  expect(r.stderr).not.toMatch(/internal error/);
  return r.stderr;
}

const PLAIN_PROGRESS = /: \d+\/\d+ [a-z ]+ \(\d+\.\d%\), \d+ s elapsed, ETA [\d a-z]+/;

describe("prove residency: the state space and memory estimated before it starts", () => {
  test("ring 2^30: refused at once, naming the estimate and --max-states", () => {
    const r = run([
      "prove",
      "residency",
      "--ratio",
      "128",
      "--ring",
      "1073741824",
      "--swa-page",
      "1073741824",
      "--draft-tokens",
      "4",
    ]);
    expect(refusal(r)).toContain(
      "--max-states = 20000000: is below the proof's state space: at least 2,147,483,648 states (one per canonical prefix",
    );
  });

  test("ring 65,536 with D 65,535: refused at once by the memory its plans need", () => {
    const args = ["residency", "--ring", "65536", "--swa-page", "65536", "--draft-tokens", "65535"];
    const c128 = run(["prove", ...args, "--ratio", "128"]);
    expect(refusal(c128)).toMatch(
      /memory = \d+: bytes are needed for the kept plans \(17,213,816,832 batches, estimated\)/,
    );
    expect(refusal(run(["prove", ...args, "--ratio", "4"]))).toMatch(/bytes are needed for the kept plans/);
  });

  test("--find-max on ring 4,096: refused at once, not minutes of silence", () => {
    for (const ratio of ["4", "128"]) {
      const r = run(["prove", "residency", "--ratio", ratio, "--ring", "4096", "--swa-page", "4096", "--find-max"]);
      expect(refusal(r)).toMatch(/bytes are needed for the kept plans/);
    }
  });

  test("a state space under a lowered --max-states default is refused with the flag to raise", () => {
    const r = run([
      "prove",
      "residency",
      "--ratio",
      "4",
      "--ring",
      "16",
      "--swa-page",
      "256",
      "--draft-tokens",
      "10",
      "--max-states",
      "100",
    ]);
    expect(refusal(r)).toContain("--max-states = 100: is below the proof's state space: at least 512 states");
  });

  test("--time-limit: a partial result, marked in text and --json, exit 3, with progress through a pipe", () => {
    const args = ["prove", "residency", "--ratio", "4", "--ring", "16", "--swa-page", "256", "--draft-tokens", "10"];
    const r = run([...args, "--time-limit", "2.5", "--json"]);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({
      proved: false,
      complete: false,
      stoppedBy: "time-limit",
      timeLimitSeconds: 2.5,
    });
    expect(r.stderr).toMatch(
      /^prove residency: c4 ring 16 \(paged, SWA page 256\): 512 canonical prefixes × 538 chunk lengths/,
    );
    expect(r.stderr).toMatch(PLAIN_PROGRESS);
    const text = run([...args, "--time-limit", "1", "--quiet"]);
    expect(text.code).toBe(3);
    expect(text.stderr).toBe("");
    expect(text.stdout).toMatch(/PARTIAL: stopped at the time limit \(--time-limit 1 s\) after/);
    expect(text.stdout).toMatch(/not proved: no batch sequence of at most \d+ batch(es)? loses a committed position/);
  });
});

describe("simulate residency --replay: a 1.5 MB file of 40,000 large prefills", () => {
  const batches = Array.from({ length: 40_000 }, () => ({ kind: "prefill", tokens: 65_535 }));
  const file = join(mkdtempSync(join(tmpdir(), "dsv4-replay-")), "big.json");
  writeFileSync(
    file,
    JSON.stringify({
      ring: { compressRatio: 4, ringSize: 16, swaPageSize: 256, useReqRing: false },
      writePad: 10,
      counterexample: { batches, violation: {} },
    }),
  );

  test("states its work, shows progress, and stops at --time-limit with a partial result", () => {
    const r = run(["simulate", "residency", "--replay", file, "--time-limit", "3", "--json"]);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /^simulate residency --replay: 40,000 batches planning 2,621,400,000 tokens on c4 ring 16/,
    );
    expect(r.stderr).toMatch(PLAIN_PROGRESS);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ complete: false, stoppedBy: "time-limit", batches: 40_000, violations: 0 });
    expect(out.steps).toBeGreaterThan(0);
    expect(out.steps).toBeLessThan(40_000);
  });
});

describe("simulate residency, online-mtp, compress at their documented maxima", () => {
  test("simulate residency --steps 10000000: estimate, plain progress lines, partial at --time-limit", () => {
    const r = run(["simulate", "residency", "--steps", "10000000", "--time-limit", "3", "--json"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /^simulate residency: 2 rings × 10,000,000 batches after the initial prefill = 20,000,000/,
    );
    expect(r.stderr).toMatch(PLAIN_PROGRESS);
    expect(JSON.parse(r.stdout)).toMatchObject({ complete: false, stoppedBy: "time-limit", violations: 0 });
    expect(JSON.parse(r.stdout).rings).toHaveLength(1); // the ring it was in when the limit came
  });

  test("simulate residency --time-limit bounds the initial prefill too (SWA page 2^30: up to 2^31 tokens)", () => {
    // the initial prefill draws up to 2 × the SWA page: 32,768 chunks of 65,535 tokens, minutes of planning that
    // used to run before the first --time-limit check
    const args = ["simulate", "residency", "--ratio", "4", "--ring", "16", "--swa-page", "1073741824"];
    const r = run([...args, "--draft-tokens", "10", "--time-limit", "1", "--json"], 20);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ complete: false, stoppedBy: "time-limit", timeLimitSeconds: 1, violations: 0 });
    expect(out.steps).toBeLessThan(32_768); // chunks of the initial prefill that ran: a part of it
    const text = run([...args, "--draft-tokens", "10", "--time-limit", "1", "--quiet"], 20);
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(/PARTIAL: stopped at the time limit \(--time-limit 1 s\) after [\d,]+ of 300 batches/);
  });

  test("simulate residency on a ring of 2^30: the ring state it may hold is refused up front, not a RangeError", () => {
    for (const ratio of ["4", "128"]) {
      const args = ["simulate", "residency", "--ratio", ratio, "--ring", "1073741824", "--swa-page", "1073741824"];
      const r = run([...args, "--draft-tokens", "4", "--steps", "10"]);
      expect(refusal(r)).toMatch(
        /--ring = 1073741824: with --swa-page 1073741824 and --steps 10, the run may hold [\d,]+ ring slots \(more than/,
      );
    }
  });

  test("simulate online-mtp --steps 1000000: estimate, plain progress lines, partial at --time-limit", () => {
    const r = run([
      "simulate",
      "online-mtp",
      "--requests",
      "8",
      "--steps",
      "1000000",
      "--draft-tokens",
      "4",
      "--time-limit",
      "3",
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^simulate online-mtp: 1,000,000 steps of up to 8 requests × 4 draft tokens/);
    expect(r.stderr).toMatch(PLAIN_PROGRESS);
    expect(r.stdout).toMatch(/PARTIAL: stopped at the time limit \(--time-limit 3 s\) after [\d,]+ of 1,000,000 steps/);
    expect(r.stdout).toMatch(/OK so far/);
  });

  test("simulate compress --steps 1000000: partial at --time-limit, in --json too", () => {
    const r = run([
      "simulate",
      "compress",
      "--ratio",
      "4",
      "--draft-tokens",
      "8",
      "--steps",
      "1000000",
      "--time-limit",
      "3",
      "--json",
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^simulate compress: 1,000,000 steps of up to 4 requests; \d+ state rows/);
    expect(r.stderr).toMatch(PLAIN_PROGRESS);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, complete: false, stoppedBy: "time-limit" });
  });

  test("simulate compress of 64 requests on rings of 65,536: a typed refusal naming the flags and the bytes", () => {
    const args = ["simulate", "compress", "--ratio", "128", "--draft-tokens", "1024", "--ring-size", "65536"];
    const r = run([...args, "--swa-page-size", "65536", "--steps", "1000000", "--requests", "64"]);
    expect(refusal(r)).toContain(
      "--max-memory-gib = 4: is less than the run needs: 34,359,738,368 bytes (32.0 GiB: 4,194,304 state rows × 1024 " +
        "elements, the pool and its fp32 fill on the host); lower --requests, --ring-size, --swa-page-size, --head-dim",
    );
    const raised = run([...args, "--swa-page-size", "65536", "--requests", "64", "--max-memory-gib", "1024"]);
    expect(refusal(raised)).toContain("more than the 4,294,967,295 one buffer holds (34,359,738,368 bytes in all)");
  });
});
