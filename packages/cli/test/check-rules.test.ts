import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

// Two configurations once reported VALID; each is now INVALID (exit 1) naming its start-up rule.
describe("dsv4-kv check: the start-up rules SGLang lacks, end to end", () => {
  it("--context-length 2000000 on a 1,048,576-position model is V-C1", () => {
    const r = cli(["check", "--context-length", "2000000"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/INVALID/);
    expect(r.stdout).toMatch(/\[V-C1\] --context-length 2000000 exceeds the 1,048,576 positions/);
  });
  it("--enable-dp-attention --dp-size 8 --max-running-requests 7 (0 requests per rank) is V-DP1", () => {
    const r = cli(["check", "--enable-dp-attention", "--dp-size", "8", "--max-running-requests", "7"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/INVALID/);
    expect(r.stdout).toMatch(/\[V-DP1\].*0 requests per rank/);
  });
  it("the JSON report carries the rule id and its code", () => {
    const r = cli(["check", "--context-length", "2000000", "--json"]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; errors: Array<{ rule: string; code: string }> };
    expect(report.ok).toBe(false);
    expect(report.errors).toContainEqual(expect.objectContaining({ rule: "V-C1", code: "CONTEXT_LENGTH" }));
  });
});
