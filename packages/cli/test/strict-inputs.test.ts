// Hostile inputs, end to end: every refusal exits 2 with a typed error naming the field or the flag.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, ftruncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN, cli } from "./cli-helpers.js";
import { flagArgs } from "./helpers.js";

const ex1 = { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };
const decode = { kind: "decode", compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [640] };
const legacy = { kind: "decode-legacy", compressRatio: 128, seqLens: [640] };

/** Runs `dsv4-kv plan` on one case; the case's error object (or null when it was planned). */
function planError(c: unknown): { code: number; error: Record<string, unknown> | null; stderr: string } {
  const r = cli(["plan"], JSON.stringify(c));
  const out = JSON.parse(r.stdout);
  return { code: r.code, error: out.error ?? null, stderr: r.stderr };
}

describe("dsv4-kv check: numeric flags are refused by name (exit 2)", () => {
  test.each([
    [["--weights-gib=-100"], /^dsv4-kv check: --weights-gib = -100: must be in \[0, \d+\]/],
    [["--residency-steps=-5"], /--residency-steps = -5: must be in \[0, 10000000\]/],
    [["--mem-fraction-static", "0x1"], /--mem-fraction-static = "0x1": must be a decimal number/],
    [["--mem-fraction-static", "1.5"], /--mem-fraction-static = 1.5: must be in \(0, 1\]/],
    [["--tp-size", "1.5"], /--tp-size = "1.5": must be an integer/],
    [["--tp-size", "-1"], /--tp-size = -1: must be in \[1, /],
    [["--context-length", "1e3"], /--context-length = "1e3": must be an integer/],
    [["--page-size", ""], /--page-size = "": must be an integer/],
    [["--page-size", " 4"], /--page-size = " 4": must be an integer/],
    [["--kv-budget-bytes", "0"], /--kv-budget-bytes = 0: must be in \[1, /],
    [
      ["--speculative-num-draft-token", "4"],
      /--speculative-num-draft-token: .*did you mean "--speculative-num-draft-tokens"/,
    ],
    [["--speculative-num-steps"], /--speculative-num-steps: needs a value/],
    [["--sizing", "fast"], /--sizing = "fast": must be one of exact, sglang-gen-b/],
  ])("%j", (args, message) => {
    const r = cli(["check", ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });

  test("a negative value where one is meaningful (--chunked-prefill-size -1) is accepted", () => {
    expect(cli(["check", "--chunked-prefill-size", "-1"]).code).toBe(0);
  });

  test("an environment switch that is not a boolean word is refused by its name", () => {
    const r = cli(["check"], undefined, { SGLANG_OPT_USE_ONLINE_COMPRESS: "maybe" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SGLANG_OPT_USE_ONLINE_COMPRESS = "maybe": must be one of 1, true/);
  });

  test("config-file values are typed by the file: a string is not a number or a boolean (INPUT)", () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-strict-"));
    const path = join(dir, "server.json");
    writeFileSync(path, JSON.stringify({ "tp-size": "2", "enable-hisparse": "false" }));
    const r = cli(["check", "--config", path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/tp-size = "2": must be an integer \(in .*server.json\)/);
  });

  test("a config-file value server-config's schema refuses is named by its flag (USAGE)", () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-strict-"));
    const path = join(dir, "server.json");
    writeFileSync(path, JSON.stringify({ "speculative-adaptive-candidates": [] }));
    const r = cli(["check", "--config", path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dsv4-kv check: --speculative-adaptive-candidates = \[\]: server arguments refused: /);
  });
});

describe("simulate commands: the same refusal classes", () => {
  test.each([
    [{ steps: -5 }, /--steps = -5: must be in \[0, 10000000\]/],
    [{ seed: "0x10" }, /--seed = "0x10": must be an integer/],
    [{ steps: "2.5" }, /--steps = "2.5": must be an integer/],
    [{ pad: "-1" }, /--pad = -1: must be in \[0, /],
  ])("simulate residency %j", (flags, message) => {
    const r = cli(["simulate", "residency", ...flagArgs(flags)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test.each([
    [{ requests: 0, steps: 1, "draft-tokens": 1 }, /--requests = 0: must be in \[1, 4096\]/],
    [{ requests: 1, steps: 1, "draft-tokens": "1e0" }, /--draft-tokens = "1e0": must be an integer/],
    [{ requests: 1, steps: 1 }, /--draft-tokens: is required/],
    [{ requests: 1, steps: 1, "draft-tokens": 1, lifecycel: "x" }, /did you mean "--lifecycle"/],
  ])("simulate online-mtp %j", (flags, message) => {
    const r = cli(["simulate", "online-mtp", ...flagArgs(flags)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test("an unknown command gets a suggestion", () => {
    const r = cli(["simulate", "residencey"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"simulate residencey": is not a dsv4-kv command \(did you mean "simulate residency"\?\)/);
  });
});

describe("dsv4-kv plan: hostile input", () => {
  test("EPIPE (the reader stops early) ends quietly with the usual exit code", async () => {
    const cases = JSON.stringify(Array.from({ length: 3000 }, () => ex1));
    const child = spawn(process.execPath, [BIN, "plan"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.once("data", () => child.stdout.destroy());
    child.stdin.end(cases);
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  test("a 50 MB string is echoed as at most ~100 characters", () => {
    const r = cli(["plan"], JSON.stringify({ ...ex1, kind: "x".repeat(50_000_000) }));
    expect(r.code).toBe(2);
    expect(r.stdout.length).toBeLessThan(2000);
    expect(r.stderr.length).toBeLessThan(1000);
    expect(r.stdout).toMatch(/\(50000002 chars\)/);
  });

  test("10,000-deep nesting is refused with INPUT and the limit, not a stack overflow", () => {
    const r = cli(["plan"], `${"[".repeat(10_000)}${"]".repeat(10_000)}`);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: "INPUT", params: { maxDepth: 64 } });
    expect(r.stderr).not.toMatch(/call stack/);
  });

  test("a file over 256 MiB is refused before it is read", () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-big-"));
    const path = join(dir, "big.json");
    const fd = openSync(path, "w");
    ftruncateSync(fd, 256 * 2 ** 20 + 1); // sparse: no 256 MiB written
    closeSync(fd);
    const r = cli(["plan", "--input", path]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "INPUT",
      field: "--input",
      params: { maxBytes: 2 ** 28 },
    });
  });

  test("a missing --input file is INPUT with the errno, no stack", () => {
    const r = cli(["plan", "--input", "/nonexistent/cases.json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: "INPUT", params: { errno: "ENOENT" } });
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

// These refusals come from the planner's strict case schema; the CLI passes the parsed case through untouched.
describe("dsv4-kv plan: the case is validated as given (the planner's schema)", () => {
  test.each([
    ["useReqRing", { ...ex1, useReqRing: "false" }],
    ["useCudaGraph", { ...ex1, useCudaGraph: "false" }],
    ["use_req_ring", { ...ex1, use_req_ring: true }],
    ["reqToToken", { ...ex1, reqToToken: [Array.from({ length: 600 }, (_, p) => (p === 515 ? 2 ** 32 + p : p))] }],
    ["path", { ...decode, path: "device" }],
    ["numQTokens", { ...decode, numQTokens: -7 }],
    ["path", { ...legacy, path: "host" }],
    ["numQTokens", { ...legacy, numQTokens: -7 }],
    ["ringSize", { ...legacy, ringSize: 7 }],
  ])("%s refused (exit 2, the field named)", (field, c) => {
    const { code, error } = planError(c);
    expect(code).toBe(2);
    expect(error).not.toBeNull();
    expect(String(error!.field)).toContain(field);
  });

  test("a misspelled key gets a suggestion", () => {
    const { error } = planError({ ...ex1, use_req_ring: true });
    expect(error!.params).toMatchObject({ suggestion: "useReqRing" });
    expect(error!.message).toMatch(/did you mean "useReqRing"/);
  });
});
