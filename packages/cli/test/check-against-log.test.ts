/** `dsv4-kv check --against-log FILE` end to end, on a Gen B log written in SGLang's formats (fixtures/logs). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckReportJsonSchema, MODEL_PRESETS, checkServerConfig, parseServerArgs } from "@dsv4-kv/server-config";
import { renderSglangSizingLog } from "@dsv4-kv/server-config/testing";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const FLASH_MODEL = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const EAGLE_ARGS = { speculativeAlgorithm: "EAGLE", speculativeNumSteps: 3, speculativeEagleTopk: 1 };
const GEN_B = new URL("./fixtures/logs/gen-b-tp8.log", import.meta.url).pathname;
const text = readFileSync(GEN_B, "utf8");
const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-log-"));
const write = (name: string, body: string) => {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
};

describe("check --against-log", () => {
  it("reproduces every figure of a Gen B log: exit 0, the generation and its evidence", () => {
    const r = cli(["check", "--against-log", GEN_B]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("configurator generation: gen-b");
    expect(r.stdout).toContain("evidence:");
    expect(r.stdout).toMatch(/pools\.c4_state\s+TP7\s+6176\s+6176\s+yes/);
    expect(r.stdout).toContain("every compared figure matches");
    expect(r.stdout).toContain("server_args (line 2, ServerArgs(…) form)");
  });

  it("--json adds logComparison, valid against the published schema", () => {
    const r = cli(["check", "--against-log", GEN_B, "--json"]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(CheckReportJsonSchema.safeParse(json).success).toBe(true);
    expect(json.logComparison.generation).toBe("gen-b");
    expect(json.logComparison.figures.length).toBeGreaterThan(0);
    expect(json.logComparison.figures.every((f: { match: boolean | null }) => f.match !== false)).toBe(true);
    expect(json.logComparison.figures.find((f: { name: string }) => f.name === "available_bytes").role).toBe("input");
    expect(json.sections).toHaveLength(1);
    expect(json.args.tpSize).toBe(8);
    expect(json.budget.availableBytes).toBe(Math.round(9.31 * 2 ** 30));
  });

  it("a logged figure that differs from ours: exit 1, the difference shown with its reason", () => {
    const path = write(
      "differs.log",
      text.replace("TP3] DSV4 pool sizes: full=494080, swa=49408", "TP3] DSV4 pool sizes: full=494080, swa=49152"),
    );
    const r = cli(["check", "--against-log", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/pools\.swa\s+TP3\s+49152\s+49408\s+NO/);
    expect(r.stdout).toContain("pools.swa (TP3), line");
    // c4_state and the pool's swa_size are computed from the logged swa: the log's own inconsistency shows there.
    expect(r.stdout).toMatch(/pools\.c4_state\s+TP3\s+6176\s+6144\s+NO/);
    expect(r.stdout).toMatch(/pool-init\.swa_size\s+TP3\s+49408\s+49152\s+NO/);
    expect(r.stdout).toContain(
      "unexplained: no alternative arithmetic SGLang used reproduces 49152 (ours 49408, residual -256)",
    );
    expect(r.stderr).toContain("the log differs from ours in 3 figures");
  });

  it("flags override the log's server_args (here the budget, so every figure moves)", () => {
    const r = cli(["check", "--against-log", GEN_B, "--kv-budget-bytes", "20000000000", "--json"]);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.budget.availableBytes).toBe(20000000000);
    expect(json.logComparison.figures.some((f: { match: boolean | null }) => f.match === false)).toBe(true);
  });

  it("reads the dict form of server_args the same way", () => {
    const dict = text.replace(/server_args=ServerArgs\((.*)\)$/m, (_, body: string) => {
      const items = body.split(/, (?=[a-z0-9_]+=)/).map((kv) => kv.replace(/^([a-z0-9_]+)=/, "'$1': "));
      return `server_args={${items.join(", ")}}`;
    });
    expect(dict).toContain("server_args={'model_path': ");
    const r = cli(["check", "--against-log", write("dict.log", dict), "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).logComparison.generation).toBe("gen-b");
  });

  it.each([
    ["empty", "", "is empty"],
    ["garbage", "hello\nworld\n", "holds no DSV4 start-up material"],
    ["cut off in server_args", text.slice(0, text.indexOf("speculative_algorithm")), "cut off"],
  ])("refuses a %s log with exit 2 and the reason", (_name, body, words) => {
    const r = cli(["check", "--against-log", write(`${_name.replace(/ /g, "-")}.log`, body)]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(words);
  });

  it("refuses a missing file", () => {
    const r = cli(["check", "--against-log", join(dir, "nope.log")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--against-log");
  });

  it("refuses a server_args value of the wrong type, naming the key and the line", () => {
    const r = cli(["check", "--against-log", write("type.log", text.replace("tp_size=8", "tp_size='8'"))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("server_args.tp_size");
    expect(r.stderr).toContain("line 2");
  });
});

describe("the Ascend NPU's own rules", () => {
  it("an NPU log whose server_args carry the bf16 KV it ran with: every figure matches, exit 0 (V-A3 is NPU's)", () => {
    const parsed = parseServerArgs({ ...EAGLE_ARGS, platform: "npu", kvCacheDtype: "bfloat16" });
    if (!parsed.ok) throw new Error(parsed.issues.join("; "));
    const report = checkServerConfig(
      parsed.args,
      FLASH_MODEL,
      { kind: "bytes", kvBudgetBytes: 60e9 },
      { sizing: "sglang-gen-b" },
    );
    const text = renderSglangSizingLog(report, "npu").text.replace(
      "ServerArgs(device='npu')",
      "ServerArgs(device='npu', kv_cache_dtype='bfloat16', speculative_algorithm='EAGLE', speculative_num_steps=3, " +
        "speculative_eagle_topk=1)",
    );
    const r = cli([
      "check",
      "--against-log",
      write("npu-bf16.log", text),
      "--kv-budget-bytes",
      "60000000000",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.args).toMatchObject({ platform: "npu", kvCacheDtype: "bfloat16" });
    expect(json.errors).toEqual([]);
    expect(json.logComparison).toMatchObject({ generation: "npu", platform: "npu" });
    expect(json.logComparison.figures.filter((f: { match: boolean | null }) => f.match === false)).toEqual([]);
  });
});

describe("every modelled configurator generation, end to end", () => {
  const eagle = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1"];
  const budget = ["--kv-budget-bytes", "100000000000", "--sizing", "sglang-gen-b"];
  for (const generation of ["gen-a", "gen-b", "gen-b-cap", "npu"] as const) {
    it(`${generation}: a log written in its line formats reconciles figure by figure (exit 0)`, () => {
      const parsed = parseServerArgs(EAGLE_ARGS);
      if (!parsed.ok) throw new Error(parsed.issues.join("; "));
      const report = checkServerConfig(
        parsed.args,
        FLASH_MODEL,
        { kind: "bytes", kvBudgetBytes: 100e9 },
        {
          sizing: "sglang-gen-b",
        },
      );
      const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-log-"));
      const file = join(dir, `${generation}.log`);
      writeFileSync(file, renderSglangSizingLog(report, generation).text);
      const r = cli(["check", "--against-log", file, ...budget, ...eagle, "--json"]);
      rmSync(dir, { recursive: true, force: true });
      expect(r.code, r.stderr).toBe(0);
      const json = JSON.parse(r.stdout);
      expect(json.logComparison.generation).toBe(generation);
      expect(json.logComparison.figures.filter((f: { match: boolean | null }) => f.match === false)).toEqual([]);
    });
  }
});
