// `dsv4-kv check --json` end to end: the built CLI's output validates against the published JSON Schema
// (`@dsv4-kv/server-config/check-report.schema.json`, resolved through the package's exports) with ajv.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { CheckReportJson } from "@dsv4-kv/server-config";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const schemaPath = createRequire(import.meta.url).resolve("@dsv4-kv/server-config/check-report.schema.json");
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(readFileSync(schemaPath, "utf8")));

function checkJson(args: string[], env: NodeJS.ProcessEnv = {}): { code: number; report: CheckReportJson } {
  const r = cli(["check", "--json", ...args], undefined, env);
  const report: unknown = JSON.parse(r.stdout);
  const ok = validate(report);
  expect(validate.errors ?? []).toEqual([]);
  expect(ok).toBe(true);
  return { code: r.code, report: report as CheckReportJson };
}

const rulesAndCodes = (issues: CheckReportJson["errors"]) => issues.map((i) => [i.rule, i.code]);

describe("dsv4-kv check --json validates against the published schema", () => {
  it("the default check: schemaVersion 3, valid, pools with ids, shapes and bytes", () => {
    const { code, report } = checkJson([]);
    expect(code).toBe(0);
    expect(report.schemaVersion).toBe(3);
    expect(Object.keys(report)[0]).toBe("schemaVersion");
    expect(report.sizing!.sizes.maxTotalNumTokens).toBe(13_156_864);
    for (const pool of report.sizing!.stages[0]!.pools) expect(pool.totalBytes).toBeGreaterThan(0);
  });

  it("an invalid configuration: exit 1, every error with its rule id and code", () => {
    const { code, report } = checkJson(["--tp-size", "1", "--kv-cache-dtype", "bf16"]);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(rulesAndCodes(report.errors)).toEqual([
      ["V-A3", "UNSUPPORTED_ARGUMENT"],
      ["V-M1", "NO_MEMORY"],
    ]);
  });

  it("a configuration with warnings: V-S0 for speculative arguments without an algorithm", () => {
    const { code, report } = checkJson(["--speculative-algorithm", "none", "--speculative-num-steps", "3"]);
    expect(code).toBe(0);
    expect(rulesAndCodes(report.warnings)).toEqual([["V-S0", "IGNORED_ARGUMENT"]]);
  });

  it("online c128 with MTP from the environment switches", () => {
    const env = { SGLANG_OPT_USE_ONLINE_COMPRESS: "1", SGLANG_EXPERIMENTAL_ONLINE_C128_MTP: "1" };
    const { report } = checkJson([], env);
    expect(report.derived.onlineC128).toBe(true);
    expect(rulesAndCodes(report.warnings)).toContainEqual(["V-S7", "EXPERIMENTAL"]);
  });

  it("non-speculative, a KV budget in bytes", () => {
    const { code, report } = checkJson(["--speculative-algorithm", "none", "--kv-budget-bytes", "40000000000"]);
    expect(code).toBe(0);
    expect(report.derived.isSpeculative).toBe(false);
    expect(report.budget.kind).toBe("bytes");
  });

  it("a pasted launch command: how the model was resolved, the ignored flags and environment in the report", () => {
    const launch = ["SGLANG_FOO=1", "python", "-m", "sglang.launch_server", "--model-path"];
    const server = ["deepseek-ai/DeepSeek-V4-Flash", "--tp", "8", "--host", "0.0.0.0", "--trust-remote-code"];
    const { code, report } = checkJson(["--", ...launch, ...server]);
    expect(code).toBe(0);
    expect(report.model.resolvedAs).toMatch(/deepseek-ai\/DeepSeek-V4-Flash/);
    expect(report.ignored).toEqual([
      { name: "SGLANG_FOO", value: "1", effect: "ignored" },
      { name: "--host", value: "0.0.0.0", effect: "ignored" },
      { name: "--trust-remote-code", value: true, effect: "ignored" },
    ]);
  });
});
