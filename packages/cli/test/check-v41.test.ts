// `dsv4-kv check` for DeepSeek-V4.1 (docs/reference/deepseek-v4.1.md §6): names, ids, checkpoint folders and launch
// commands that were refused before now give a pools and sizing report; V4 inputs are read as before.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const fixture = (name: string) => join(import.meta.dirname, "fixtures", "models", name);
const json = (args: string[]) => {
  const r = cli(["check", "--json", ...args]);
  return { ...r, report: r.code === 0 || r.code === 1 ? JSON.parse(r.stdout) : null };
};

describe("dsv4-kv check --model <DeepSeek-V4.1>", () => {
  it("the HF id: DSpark by default, one rank of 8x H200, every pool with reserved against allocated", () => {
    const r = json(["--model", "deepseek-ai/DeepSeek-V4.1-Flash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report).toMatchObject({ generation: "V4.1", ok: true, model: { name: "DeepSeek-V4.1-Flash" } });
    expect(r.report.config).toMatchObject({ isSpeculative: true, draftTokens: 6, pageSize: 256 });
    const pools = Object.fromEntries(
      r.report.sizing.pools.map((p: { id: string; layers: number }) => [p.id, p.layers]),
    );
    expect(pools).toEqual({
      "swa-kv": 40,
      "c2-kv": 3,
      "c2-indexer-k": 3,
      "c1-kv": 1,
      "c1-indexer-k": 1,
      "c2-pair-state": 3,
      "draft-swa-kv": 3,
    });
    expect(r.report.warnings.join(" ")).toMatch(/DSpark draft: 3 SWA layers allocated/);
    expect(r.report.sizing.poolInitLines.map((l: { worker: string }) => l.worker)).toEqual(["target", "draft"]);
  });

  it("the worked example of the reference: 54.15 GiB, 256 requests, ratio 0.1, with and without DSpark", () => {
    const base = ["--model", "DeepSeek-V4.1-Flash", "--kv-budget-bytes", "58143119769", "--max-running-requests"];
    const plain = json([...base, "256", "--swa-full-tokens-ratio", "0.1", "--speculative-algorithm", "none"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.report.sizing).toMatchObject({
      configurator: { fullToken: 14_658_560 },
      allocatedBytes: 58_243_920_512,
    });
    const spark = json([...base, "256", "--swa-full-tokens-ratio", "0.1", "--speculative-algorithm", "DSPARK"]);
    expect(spark.report.sizing).toMatchObject({ configurator: { fullToken: 14_296_576 }, unusedBytes: -1_187_475_687 });
  });

  it("a launch command and a checkpoint folder give the same report as the name", () => {
    const flags = ["--tp", "8", "--speculative-algorithm", "DSPARK", "--speculative-dspark-block-size", "5"];
    const launch = cli([
      "check",
      "--json",
      "--",
      "python",
      "-m",
      "sglang.launch_server",
      "--model-path",
      "deepseek-ai/DeepSeek-V4.1-Flash",
      ...flags,
    ]);
    expect(launch.code, launch.stderr).toBe(0);
    const byName = JSON.parse(launch.stdout);
    const byFolder = json(["--model", fixture("v4.1-flash-hf"), ...flags]);
    expect(byFolder.code, byFolder.stderr).toBe(0);
    expect(byFolder.report.model.resolvedAs).toMatch(/DeepSeek-V4.1, hf-nested layout\) → preset DeepSeek-V4.1-Flash/);
    expect({ ...byFolder.report, model: null }).toEqual({ ...byName, model: null });
  });

  it("the text report names the configurator figures, the pools, the gaps and what is not checked", () => {
    const r = cli(["check", "--model", "deepseek-v4.1-flash-fp8"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/bytes_per_full_token=4065\.15/);
    expect(r.stdout).toMatch(/Initialize DeepSeekV4TokenToKVPool \(draft\): .* c4_size=0/);
    expect(r.stdout).toMatch(
      /Pair-state ring \(V41-R1\): R2 8 serves verify blocks of up to 8 tokens \(proved\); it serves/,
    );
    expect(r.stdout).not.toMatch(/Not checked for DeepSeek-V4\.1 yet: the ratio-2 pair-state ring/);
  });

  it("V41-R1 refuses a pair-state ring sized from fewer draft tokens than the block DSpark verifies", () => {
    const flags = ["--speculative-dspark-block-size", "5", "--speculative-num-draft-tokens", "2"];
    const text = cli(["check", "--model", "DeepSeek-V4.1-Flash", ...flags]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(
      /ERROR \[V41-R1\] the ratio-2 pair-state ring R₂ = 4, .*--speculative-num-draft-tokens 2/,
    );
    expect(text.stdout).toMatch(/--speculative-dspark-block-size 5 verifies 6/);
    expect(text.stdout).toMatch(/it does NOT serve the widest block, 6/);
    const r = json(["--model", "DeepSeek-V4.1-Flash", ...flags]);
    expect(r.report.ok).toBe(false);
    expect(r.report.errors).toContainEqual(
      expect.objectContaining({ rule: "V41-R1", code: "DRAFT_EXCEEDS_RING", field: "--speculative-num-draft-tokens" }),
    );
  });

  it("a custom V4.1 folder needs a budget; bad flags are refused; --html under --against-log is refused", () => {
    expect(cli(["check", "--model", fixture("v4.1-like")])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--weights-gib.*is needed: the config of v4\.1-like gives no checkpoint size/),
    });
    // No γ in the config and none given: V4.1's rule V41-S2 refuses DSpark (SGLang cannot resolve the width).
    const noGamma = json(["--model", fixture("v4.1-like"), "--kv-budget-bytes", "20000000000"]);
    expect(noGamma.code, noGamma.stderr).toBe(1);
    expect(noGamma.report.errors[0]).toMatchObject({ rule: "V41-S2", field: "speculativeDsparkBlockSize" });
    expect(noGamma.report.errors[0].message).toMatch(/declares no dspark_block_size/);
    const custom = json([
      "--model",
      fixture("v4.1-like"),
      "--kv-budget-bytes",
      "20000000000",
      "--speculative-dspark-block-size",
      "3",
    ]);
    expect(custom.code, custom.stderr).toBe(0);
    expect(custom.report.model).toMatchObject({ name: "v4.1-like", kvSourceLayerIds: [2, 5], draftLayers: 1 });
    // --html draws V4.1, also under --against-log (test/browser/v41-page.test.ts): the page is written.
    const logFile = join(import.meta.dirname, "fixtures", "logs", "gen-b-tp8.log");
    const page = join(mkdtempSync(join(tmpdir(), "dsv4kv-v41-log-")), "log.html");
    const withLog = cli(["check", ...["--model", "DeepSeek-V4.1-Flash", "--against-log", logFile, "--html", page]]);
    expect(withLog.code, withLog.stderr).toBeLessThan(2);
    expect(readFileSync(page, "utf8")).toMatch(/"kind":"check-v41"/);
    const floor = json(["--model", "DeepSeek-V4.1-Flash", "--swa-full-tokens-ratio", "0.00001"]);
    expect(floor.code).toBe(1);
    expect(floor.report.errors[0]).toMatchObject({ code: "SWA_FLOOR" });
  });

  it("V4 names and folders are read as before", () => {
    const r = json(["--model", "deepseek-ai/DeepSeek-V4-Flash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.generation).toBeUndefined();
    expect(r.report.model.name).toBe("DeepSeek-V4-Flash");
  });
});
