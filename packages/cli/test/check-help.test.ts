// `check --help` (SGLang, the default engine) names --engine; `check --engine vllm --help`, in every spelling and
// order, prints the vLLM path's help, whose options are the vLLM flag table and whose stated defaults are what the
// check without flags resolves.
import { describe, expect, it } from "vitest";
import { ENGINE_FLAG } from "../src/check/flags.js";
import { VLLM_ALL_FLAGS } from "../src/check/vllm/flags.js";
import { VLLM_FLAGS_DOC, vllmHelp } from "../src/check/vllm/help.js";
import { help as sglangHelp } from "../src/commands/check.js";
import { HELP_WIDTH } from "../src/commands/help.js";
import { cli } from "./cli-helpers.js";

const widest = (text: string) => Math.max(...text.split("\n").map((l) => l.length));
/** The prose between the usage and the options. */
const description = (text: string) => text.slice(text.indexOf("\n\n"), text.indexOf("\nOptions:\n"));

describe("check --engine vllm --help", () => {
  it.each([
    [["check", "--engine", "vllm", "--help"]],
    [["check", "--engine=vllm", "--help"]],
    [["check", "--help", "--engine", "vllm"]],
    [["check", "-h", "--engine=vllm"]],
    [["check", "--engine", "vllm", "--tensor-parallel-size", "8", "--help"]],
  ])("%j prints the vLLM usage on stdout, exit 0", (args) => {
    const r = cli(args);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(vllmHelp);
    expect(r.stdout).toMatch(/^Usage: dsv4-kv check --engine vllm /);
    expect(r.stdout).not.toContain("--mem-fraction-static");
  });

  it("lists every flag of the vLLM flag table, with its help", () => {
    const options = vllmHelp.slice(vllmHelp.indexOf("\nOptions:\n"));
    for (const [name, spec] of Object.entries(VLLM_ALL_FLAGS)) {
      expect(options).toContain(`  --${name}`);
      expect(options).toContain(spec.help);
    }
  });

  it("shows the forms, the report, the version and where the full flag table is", () => {
    for (const text of [
      "-- [NAME=value …] vllm serve MODEL",
      "--against-log FILE",
      "page stride",
      '"GPU KV cache size: N tokens"',
      '"Maximum concurrency for L tokens per request: Cx"',
      "VL-* rule",
      "--vllm-version V (default 0.31.1",
      "listed as ignored",
      VLLM_FLAGS_DOC,
    ])
      expect(vllmHelp.replace(/\s+/g, " ")).toContain(text);
  });

  it("is no wider than the SGLang help, its prose wrapped at the help width", () => {
    expect(widest(vllmHelp)).toBeLessThanOrEqual(widest(sglangHelp));
    expect(widest(description(vllmHelp))).toBeLessThanOrEqual(HELP_WIDTH);
  });

  it("states the deployment the check resolves with no flags", () => {
    const r = cli(["check", "--engine", "vllm", "--json"]);
    expect(r.code).toBe(1);
    const vllm = JSON.parse(r.stdout).vllm as {
      args: { dest: string; value: unknown }[];
      errors: { rule: string }[];
      model: { name: string };
    };
    const arg = (dest: string) => vllm.args.find((a) => a.dest === dest)?.value;
    const stated = [
      `With no flags: ${vllm.model.name} on one H200`,
      `--tensor-parallel-size ${arg("tensor_parallel_size")} `,
      `--gpu-memory-utilization ${arg("gpu_memory_utilization")},`,
      `--max-num-batched-tokens ${arg("max_num_batched_tokens")},`,
      `--block-size ${arg("block_size")},`,
      `async scheduling ${arg("async_scheduling") ? "on" : "off"}`,
      `prefix caching ${arg("enable_prefix_caching") ? "on" : "off"}`,
      `--kv-cache-dtype ${arg("kv_cache_dtype")}, which vLLM refuses for DeepSeek-V4 (VL-R1)`,
    ];
    for (const text of stated) expect(description(vllmHelp).replace(/\s+/g, " ")).toContain(text);
    expect(arg("speculative_config")).toBeNull();
    expect(vllm.errors.map((e) => e.rule)).toEqual(["VL-R1"]);
  });

  it("is right that fp8 alone does not fit one H200 and -tp 8 does", () => {
    const one = cli(["check", "--engine", "vllm", "--json", "--kv-cache-dtype", "fp8"]);
    expect(JSON.parse(one.stdout).vllm.errors.map((e: { rule: string }) => e.rule)).toEqual(["VL-R3"]);
    const eight = cli(["check", "--engine", "vllm", "--kv-cache-dtype", "fp8", "--tensor-parallel-size", "8"]);
    expect(eight.code).toBe(0);
  });
});

describe("a usage error points at the help of its engine", () => {
  it("vLLM's at the vLLM help, SGLang's at check --help", () => {
    const vllm = cli(["check", "--engine", "vllm", "--tensor-parallel-size", "0"]);
    expect(vllm.code).toBe(2);
    expect(vllm.stderr).toMatch(/\(see dsv4-kv check --engine vllm --help\)\n$/);
    const sglang = cli(["check", "--tp-size", "0"]);
    expect(sglang.code).toBe(2);
    expect(sglang.stderr).toMatch(/\(see dsv4-kv check --help\)\n$/);
  });
});

describe("check --help", () => {
  it("lists --engine and points at the vLLM help", () => {
    const r = cli(["check", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(sglangHelp);
    expect(r.stdout).toMatch(/\n {2}--engine sglang\|vllm +the serving engine .*\(default sglang\)\n/);
    expect(r.stdout).toContain(ENGINE_FLAG.help);
    expect(r.stdout).toContain("--engine vllm checks a DeepSeek-V4 vLLM server instead");
    expect(r.stdout).toContain("`dsv4-kv check --engine vllm --help`");
  });

  it("stays the SGLang help for --engine sglang, and for a launch command's --engine after --", () => {
    expect(cli(["check", "--engine", "sglang", "--help"]).stdout).toBe(sglangHelp);
    expect(cli(["check", "--help", "--", "--engine", "vllm"]).stdout).toBe(sglangHelp);
    expect(cli(["help", "check"]).stdout).toBe(sglangHelp);
  });
});
