import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4-check-"));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const json = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = cli(["check", "--json", ...args], undefined, env);
  return { ...r, report: r.stdout ? JSON.parse(r.stdout) : null };
};

describe("dsv4-kv check (end to end)", () => {
  it("default run: Flash, EAGLE 3/1/4, one rank of 8×H200 TP — valid, every pool and the capacity", () => {
    const r = cli(["check"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Result: VALID/);
    expect(r.stdout).toMatch(/one rank of an 8×H200 tensor-parallel deployment/);
    expect(r.stdout).toMatch(/c4 {4}ring 16 +write pad 10 +serves at most 10/);
    expect(r.stdout).toMatch(/c4 ring 16, SWA page 256, 4 draft tokens: .* 0 violations/);
    for (const pool of [
      "SWA KV",
      "C4 KV",
      "C4 indexer K",
      "C4 attention state",
      "C4 indexer state",
      "C128 KV",
      "C128 attention state",
      "draft SWA KV",
    ]) {
      expect(r.stdout).toContain(pool);
    }
    expect(r.stdout).toMatch(/full tokens \(max_total_num_tokens\) 13,156,864/);
  });

  it("no command runs the default check", () => {
    const r = cli([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/dsv4-kv check: DeepSeek-V4-Flash/);
  });

  it("--json: the same report as one object; exact sizing accounts every byte", () => {
    const { code, report } = json([]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.derived).toMatchObject({
      draftTokens: 4,
      maxDraftTokens: 4,
      ringSizes: { c4: 16, c128: 256 },
      maxDraftTokensServed: 10,
    });
    expect(report.sizing.sizes.maxTotalNumTokens).toBe(13_156_864);
    expect(report.sizing.maxRunningRequests).toBe(256);
    for (const pool of report.sizing.stages[0].pools) expect(pool.unaccountedBytes).toBe(0);
    expect(report.sizing.unusedBytes).toBeGreaterThanOrEqual(0);
    expect(report.sizing.allocatedBytes + report.sizing.unusedBytes).toBe(report.budget.availableBytes);
    expect(report.notes.map((n: { field: string }) => n.field)).toEqual(
      expect.arrayContaining(["speculativeAlgorithm", "tpSize", "pageSize", "swaFullTokensRatio"]),
    );
  });

  it("the whole checkpoint on one H200 at 0.85 gives V-M1 with the minimum viable fraction, exit 1", () => {
    const r = cli(["check", "--tp-size", "1"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /\[V-M1\] Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.85/,
    );
    expect(r.stdout).toMatch(/Raise --mem-fraction-static above 0.997/);
    expect(r.stdout).not.toMatch(/Pools \(/);
  });

  it("--speculative-num-draft-tokens 11: exit 1 with the limit, the advisor's ring and the residency failure", () => {
    const r = cli(["check", "--speculative-num-draft-tokens", "11"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /\[V-S8\] speculative_num_draft_tokens=11 exceeds .* \(ring_size=16 serves at most 10 draft tokens\)/,
    );
    expect(r.stdout).toMatch(/a c4 ring of 32 \(write pad 26\) would serve 11 draft tokens/);
    expect(r.stdout).toMatch(/\[R1\] residency check: c4 ring 16 with 11 draft tokens loses committed positions/);
    expect(r.stderr).toMatch(/invalid/);
  });

  it("--sizing sglang-gen-b reproduces upstream arithmetic (scenario B budget)", () => {
    const { code, report } = json(["--sizing", "sglang-gen-b", "--kv-budget-bytes", "104314018201"]);
    expect(code).toBe(0);
    expect(report.sizing.sizes).toMatchObject({
      maxTotalNumTokens: 10_679_552,
      swaTokens: 1_067_776,
      c4StatePoolSize: 133_472,
      c128StatePoolSize: 65_792,
    });
    expect(report.sizing.bytesPerFullToken.total).toBeCloseTo(9259.902325581, 8);
    expect(report.sizing.fixedBytes).toBe(5_421_137_920);
  });

  it("every validation error at once: V-A2, V-A3, V-D1 collected in one run", () => {
    const { code, report } = json([
      "--speculative-eagle-topk",
      "2",
      "--kv-cache-dtype",
      "bf16",
      "--compress-state-dtype",
      "fp16",
    ]);
    expect(code).toBe(1);
    expect(report.errors.map((e: { rule: string }) => e.rule)).toEqual(
      expect.arrayContaining(["V-A2", "V-A3", "V-D1"]),
    );
  });

  it("--config YAML and JSON (flags win), --model preset", () => {
    const yaml = file(
      "server.yaml",
      "speculative-algorithm: EAGLE\nspeculative_num_steps: 5\nspeculativeEagleTopk: 1\nmax-running-requests: 128\n",
    );
    const a = json(["--config", yaml]);
    expect(a.code).toBe(0);
    expect(a.report.derived).toMatchObject({ draftTokens: 6, mrrPerWorker: 128 });
    const b = json(["--config", yaml, "--speculative-num-steps", "2"]);
    expect(b.report.derived.draftTokens).toBe(3);
    const jsonCfg = file(
      "server.json",
      JSON.stringify({ model: "DeepSeek-V4-Pro", "speculative-algorithm": "none", "kv-budget-bytes": 60e9 }),
    );
    const c = json(["--config", jsonCfg]);
    expect(c.code).toBe(0);
    expect(c.report.model.name).toBe("DeepSeek-V4-Pro");
    expect(c.report.derived).toMatchObject({ isSpeculative: false, ringSizes: { c4: 8, c128: 128 } });
  });

  it("--model-config: a custom model from HF config.json keys", () => {
    const model = file(
      "model.json",
      JSON.stringify({
        num_hidden_layers: 4,
        head_dim: 512,
        qk_rope_head_dim: 64,
        index_head_dim: 128,
        sliding_window: 128,
        compress_ratios: [0, 4, 128, 4, 0],
        max_position_embeddings: 65536,
        vocab_size: 1,
      }),
    );
    const r = json(["--model-config", model, "--kv-budget-bytes", "20000000000"]);
    expect(r.code).toBe(0);
    expect(r.report.derived.layers).toEqual({ total: 4, ratio0: 1, ratio4: 2, ratio128: 1 });
  });

  it("DSpark on Flash-0731: γ = 5 from the checkpoint → 6 draft tokens", () => {
    const { code, report } = json(["--model", "DeepSeek-V4-Flash-0731", "--speculative-algorithm", "DSPARK"]);
    expect(code).toBe(0);
    expect(report.derived.draftTokens).toBe(6);
  });

  it("environment switches come from io.env; flags win", () => {
    const a = json([], { SGLANG_OPT_USE_ONLINE_COMPRESS: "1" });
    expect(a.code).toBe(1);
    expect(a.report.errors.map((e: { rule: string }) => e.rule)).toContain("V-S6");
    const b = json(["--online-c128-mtp"], { SGLANG_OPT_USE_ONLINE_COMPRESS: "1" });
    expect(b.code).toBe(0);
    expect(b.report.derived).toMatchObject({ onlineC128: true, ringSizes: { c128: 1 } });
  });

  it("unusable input exits 2 with a message naming the value", () => {
    expect(cli(["check", "--page-size", "abc"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--page-size = "abc": must be an integer/),
    });
    expect(cli(["check", "--model", "DeepSeek-V9"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown preset/),
    });
    expect(cli(["check", "--bogus"]).code).toBe(2);
    expect(cli(["check", "--config", join(dir, "missing.yaml")])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/cannot read/),
    });
    expect(cli(["check", "--config", file("bad.yaml", "speculative-num-stepz: 3\n")])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /speculative-num-stepz = 3: is not a setting .*did you mean "speculative-num-steps"/,
      ),
    });
    expect(cli(["check", "--swa-full-tokens-ratio", "2"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--swa-full-tokens-ratio = 2: must be in \(0, 1\]/),
    });
    expect(cli(["check", "--sizing", "fast"]).code).toBe(2);
  });

  it("--help prints the flags and exit codes", () => {
    const r = cli(["check", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--speculative-num-draft-tokens/);
    expect(r.stdout).toMatch(/Exit codes: 0/);
  });
});
