// `dsv4-kv check --against-log FILE --model DeepSeek-V4.1-Flash` (docs/reference/deepseek-v4.1.md §8): every real
// V4.1 start-up log of the corpus reconciles figure by figure (or names why a figure is an input), text and --json,
// and the V4.1 launch lines of the corpus give a V4.1 report. Before, --against-log for V4.1 exited 2.
import { join } from "node:path";
import { V41CheckReportJsonSchema } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const LOGS = join(import.meta.dirname, "..", "..", "server-config", "test", "fixtures");
const log = (file: string) => join(LOGS, file);
const V41 = ["--model", "DeepSeek-V4.1-Flash"];

interface Figure {
  name: string;
  match: boolean | null;
  role: string;
  logged: string;
  why?: string;
}

function againstLog(file: string, ...flags: string[]) {
  const r = cli(["check", "--json", "--against-log", log(file), ...V41, ...flags]);
  const json = r.code === 0 || r.code === 1 ? JSON.parse(r.stdout) : null;
  return { ...r, json, figures: (json?.logComparison?.figures ?? []) as Figure[] };
}

/** The corpus files with DSV4 sizing or scheduler lines, and the figures each must compare equal (at least). */
const RECONCILED: readonly [string, number][] = [
  ["sglang-logs-v41/lecywza-runtime-report-20260912-tp3-gb10-sizing.log", 31],
  ["sglang-logs-v41/lecywza-runtime-report-20260912-tp3-gb10-header.log", 1],
  ["sglang-logs/v41-local-ai-registry-gb10-tp4-boot-lines.log", 5],
  ["sglang-logs/v41-local-ai-registry-gb10-tp4-tuned-boot-lines.log", 5],
  ["sglang-logs/v41-miaai-issue-27-gb10-tp4-swa-sizing-truncated.log", 4],
  ["sglang-logs/v41-miaai-tp4-validation-20260925-two-boots.log", 0],
];

describe("check --against-log for the V4.1 corpus", () => {
  for (const [file, matched] of RECONCILED)
    it(`${file}: exit 0, no figure differs, --json valid against the V4.1 schema`, () => {
      const r = againstLog(file);
      expect(r.code, r.stderr).toBe(0);
      expect(V41CheckReportJsonSchema.safeParse(r.json).success).toBe(true);
      expect(r.json).toMatchObject({ generation: "V4.1", ok: true, logComparison: { generation: "dev-dsv41" } });
      expect(r.figures.filter((f) => f.match === false)).toEqual([]);
      expect(r.figures.filter((f) => f.match === true).length).toBeGreaterThanOrEqual(matched);
      // Every figure not compared says why.
      for (const f of r.figures.filter((x) => x.match === null)) expect(f.why, f.name).toBeTruthy();
    });

  it("the LECYWZA sizing lines as text: the check sized in cap mode from the logged cap and requests", () => {
    const r = cli(["check", "--against-log", log(RECONCILED[0]![0]), ...V41]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/cap-mode SWA: request_cap\+headroom 13312 from line 4/);
    expect(r.stdout).toMatch(/bytes_per_full_token=1670\.75/);
    expect(r.stdout).toMatch(/configurator generation: dev-dsv41/);
    expect(r.stdout).toMatch(/Log reconciled: 0 figure\(s\) differ, 31 match/);
  });

  it("a budget flag makes available_bytes a compared figure, and a wrong one differs with its cause", () => {
    const r = againstLog(RECONCILED[0]![0], "--kv-budget-bytes", "8000000000");
    expect(r.code).toBe(1);
    const avail = r.figures.find((f) => f.name === "available_bytes");
    expect(avail).toMatchObject({ match: false, logged: "8.84" });
  });

  it("a V4.1 log read with V4.1 flags the server did not use differs (DSpark off: the price)", () => {
    const r = againstLog(RECONCILED[0]![0], "--speculative-algorithm", "none");
    expect(r.code).toBe(1);
    expect(r.figures.filter((f) => f.match === false).map((f) => f.name)).toContain("bytes_per_full_token");
  });
});

describe("V4.1 launch lines of the corpus give a V4.1 report", () => {
  it("0xSero's RTX PRO 6000 argv (DSpark block 5, bounded replay, HiCache): V4.1 check of its flags", () => {
    const r = againstLog("sglang-logs/v41-local-ai-registry-rtxpro6000-tp4-launch-argv.log");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.config).toMatchObject({ isSpeculative: true, draftTokens: 6, maxRunningRequests: 8 });
    expect(r.json.config).toMatchObject({ contextLen: 524_288, maxTotalTokens: 4_200_000 });
    expect(r.json.logComparison.nothingToReconcile).toMatch(/no DSV4 sizing line/);
  });

  it("the vLLM #56700 field report's SGLang launch (TP 8, no speculation flags): the server ran without drafts", () => {
    const r = againstLog("sglang-logs/v41-vllm-issue-56700-sglang-rtxpro6000-tp8-table.log");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.budget).toMatchObject({ kind: "gpu" });
    expect(r.json.config).toMatchObject({ isSpeculative: false, draftTokens: 0 });
    expect(r.json.sizing.pools.map((p: { id: string }) => p.id)).not.toContain("draft-swa-kv");
  });

  it("that argv as a pasted launch line (the HF id as --model-path), bounded replay included (refused before)", () => {
    const words = [
      "--model-path",
      "deepseek-ai/DeepSeek-V4.1-Flash",
      "--tp",
      "4",
      "--ep-size",
      "4",
      "--attention-backend",
      "dsv4",
      "--mem-fraction-static",
      "0.95",
      "--chunked-prefill-size",
      "2048",
      "--context-length",
      "524288",
      "--max-running-requests",
      "8",
      "--speculative-algorithm",
      "DSPARK",
      "--speculative-dspark-block-size",
      "5",
      "--enable-decoder-swa-bounded-replay",
      "--max-total-tokens",
      "4200000",
      "--enable-hierarchical-cache",
    ];
    const r = cli(["check", "--json", "--", "python", "-m", "sglang.launch_server", ...words]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ generation: "V4.1", config: { draftTokens: 6 } });
  });

  it("V4.1's rules judge a launch: EAGLE and pipeline parallelism are refused with their rule ids", () => {
    const r = cli(["check", "--json", ...V41, "--speculative-algorithm", "EAGLE", "--pp-size", "2"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors.map((e: { rule: string }) => e.rule)).toEqual(["V41-S1", "V41-F1"]);
    const text = cli(["check", ...V41, "--speculative-algorithm", "EAGLE"]);
    expect(text.stdout).toMatch(/ERROR \[V41-S1\] --speculative-algorithm EAGLE: DeepSeek-V4\.1 serves/);
  });
});
