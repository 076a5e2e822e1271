/**
 * `dsv4-kv check --engine vllm --against-log FILE` end to end on public vLLM DeepSeek-V4 logs
 * (server-config's fixtures/vllm-logs): exit codes, the text report, --json against its schema, standard input,
 * vLLM's own flags as overrides, and the SGLang path left as it was.
 */
import { readFileSync } from "node:fs";
import { CheckReportJsonSchema, VllmLogCheckJsonSchema } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const LOG = (name: string) => new URL(`../../server-config/test/fixtures/vllm-logs/${name}`, import.meta.url).pathname;
const vllm = (file: string, ...more: string[]) =>
  cli(["check", "--engine", "vllm", "--against-log", LOG(file), ...more]);

describe("check --engine vllm --against-log", () => {
  it("reproduces the 0.27.1 GB10 log with the flags its source states: exit 0, every figure equal", () => {
    const r = vllm(
      "nepenth-gb10-v0271-dspark-kvmem.txt",
      "--model",
      "DeepSeek-V4-Flash-0731",
      "--kv-cache-memory-bytes",
      "28235618304",
      "--speculative-config",
      '{"method":"dspark","num_speculative_tokens":5}',
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/13\s+kvCacheTokens\s+2740813\s+2740813\s+equal/);
    expect(r.stdout).toContain("Summary: 3 equal, 0 within rounding, 0 different, 0 not computed");
  });

  it("a 0.25.0 log: sized as its version, concurrency within rounding, tokens with the version as the cause", () => {
    const r = vllm("rtxpro6000-tp2-v0250-mtp2.txt");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("vLLM 0.25.0");
    expect(r.stdout).toContain(
      "sizing: vLLM 0.25.0 (the log's version): sliding groups reserve the batched tokens alone",
    );
    expect(r.stdout).toMatch(/max_num_batched_tokens\s+4096\s+the log's arguments \(line 10\)/);
    expect(r.stdout).toMatch(/maxConcurrency\s+1\.90\s+1\.9…1\.91\s+within rounding/);
    expect(r.stdout).toContain("[version-sizing] not explained");
    expect(r.stderr).toContain("the log differs from ours in 1 figure");
  });

  it("--vllm-version on the log path: it wins over the log's version, with a warning naming both", () => {
    const r = vllm("rtxpro6000-tp2-v0250-mtp2.txt", "--vllm-version", "0.27.1");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("sizing: vLLM 0.27.1 (--vllm-version): sliding groups reserve every concurrent batch");
    expect(r.stdout).toContain("warning [version-flag-differs]: --vllm-version 0.27.1 sizes as vLLM 0.26");
    expect(r.stdout).toMatch(/maxConcurrency\s+1\.90\s+1\.48\s+DIFFERENT/);
    const json = JSON.parse(vllm("rtxpro6000-tp2-v0250-mtp2.txt", "--vllm-version=0.27.1", "--json").stdout);
    expect(VllmLogCheckJsonSchema.safeParse(json).success).toBe(true);
    expect(json.vllmLogComparison.versionUsed).toMatchObject({
      version: "0.27.1",
      from: "flag",
      logVersion: "0.25.0",
      warning: { id: "version-flag-differs" },
    });
    const bad = vllm("rtxpro6000-tp2-v0250-mtp2.txt", "--vllm-version", "newest");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--vllm-version");
  });

  it("--json: the vLLM comparison, valid against its schema; the alternative that reproduces is named", () => {
    const r = vllm("b300-tp2-v0300-vision-exp.txt", "--model", "DeepSeek-V4-Flash-0731", "--json");
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(VllmLogCheckJsonSchema.safeParse(json).success).toBe(true);
    const cause = json.vllmLogComparison.figures.find((f: { cause?: { id: string } }) => f.cause)?.cause;
    expect(cause).toMatchObject({ id: "unlogged-batched-tokens", explained: true });
    expect(cause.text).toContain("max_num_batched_tokens 16384");
    // The check report's schema carries the same part, optional.
    expect(CheckReportJsonSchema.shape.vllmLogComparison).toBeDefined();
  });

  it("a flag wins over the default and over the alternative: --max-num-batched-tokens 16384 reproduces it", () => {
    const r = vllm(
      "b300-tp2-v0300-vision-exp.txt",
      "--model",
      "DeepSeek-V4-Flash-0731",
      "--max-num-batched-tokens",
      "16384",
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/max_num_batched_tokens\s+16384\s+a flag/);
  });

  it("reads the log from standard input with -", () => {
    const body = readFileSync(LOG("b12x-sm120-tp2-v0261-dspark5.txt"), "utf8");
    const r = cli(["check", "--engine", "vllm", "--against-log", "-", "--model", "DeepSeek-V4-Flash"], body);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("within rounding");
  });

  it("exit 2 on a file with no vLLM DeepSeek-V4 material, and on a flag vLLM's table does not know", () => {
    const glm = vllm("not-dsv4-glm53-tp3-v0261.txt");
    expect(glm.code).toBe(2);
    expect(glm.stderr).toContain("names no DeepSeek-V4");
    const bad = vllm("b12x-sm120-tp2-v0261-dspark5.txt", "--mem-fraction-static", "0.8");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--mem-fraction-static");
  });

  it("without --engine vllm the file still goes to the SGLang reader, which finds nothing of its own to reconcile", () => {
    const r = cli(["check", "--against-log", LOG("rtxpro6000-tp2-v0250-mtp2.txt")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("nothing to reconcile");
    expect(r.stdout).not.toContain("vLLM start-up log");
  });
});
