// check --engine vllm: real pasted `vllm serve` commands (fixtures/vllm-launch), vLLM's flag spellings, typed
// refusals, and the SGLang path left as it was.
import { readFileSync } from "node:fs";
import { VllmCheckReportJsonSchema } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { parseVllmWords, splitVllmLaunch } from "../src/check/vllm/parse.js";
import { cli } from "./cli-helpers.js";

const DIR = new URL("./fixtures/vllm-launch/", import.meta.url);
const MANIFEST = JSON.parse(readFileSync(new URL("manifest.json", DIR), "utf8")) as {
  launches: { file: string; expect: { exit: number; rules: string[] } }[];
};

/** The command of a fixture: from `vllm serve` through its last continued line (or the CI server_args value). */
function commandOf(file: string): string {
  const text = readFileSync(new URL(file, DIR), "utf8");
  const args = /^server_args: "(.*)"$/m.exec(text);
  if (args) return `vllm serve deepseek-ai/DeepSeek-V4-Flash ${args[1]}`;
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith("vllm serve"));
  let end = start;
  while (lines[end]!.endsWith("\\")) end++;
  return lines.slice(start, end + 1).join("\n");
}

function vllmJson(args: string[]) {
  const r = cli(["check", "--engine", "vllm", "--json", ...args]);
  const json = r.stdout ? JSON.parse(r.stdout) : null;
  return { ...r, json };
}

const rulesOf = (json: { vllm: { errors: { rule: string }[]; warnings: { rule: string }[] } }) =>
  [...json.vllm.errors, ...json.vllm.warnings].map((i) => i.rule);

describe("real vllm serve commands give a report", () => {
  for (const launch of MANIFEST.launches.filter((l) => !l.file.startsWith("flowtivity"))) {
    it(launch.file, () => {
      const r = vllmJson(["--", commandOf(launch.file)]);
      expect(r.code, r.stderr).toBe(launch.expect.exit);
      expect(VllmCheckReportJsonSchema.safeParse(r.json).success).toBe(true);
      expect(rulesOf(r.json)).toEqual(launch.expect.rules);
    });
  }

  it("flowtivity: the paste's <HEAD_IP> placeholder needs a shell (typed refusal); as words it is checked", () => {
    const file = "flowtivity-spark-0731-tp2-mtp2.md";
    const pasted = cli(["check", "--engine", "vllm", "--", commandOf(file)]);
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toContain('"<H"');
    const text = readFileSync(new URL(file, DIR), "utf8");
    const env = text
      .split("\n")
      .filter((l) => /^[A-Z_]+=/.test(l))
      .flatMap((l) => l.split(" "));
    const words = commandOf(file).replace(/\\\n/g, " ").replace(/'/g, "").split(/\s+/).filter(Boolean);
    const r = vllmJson(["--", ...env, ...words]);
    const expected = MANIFEST.launches.find((l) => l.file === file)!.expect;
    expect(r.code, r.stderr).toBe(expected.exit);
    expect(rulesOf(r.json)).toEqual(expected.rules);
    expect(r.json.vllm.model.name).toBe("DeepSeek-V4-Flash-0731");
    expect(r.json.vllm.sizing.maxModelLen).toBe(500_000);
    // vLLM reads the switch (a length past the positions then starts with a warning, VL-L1); 500,000 is within them.
    expect(r.json.vllm.ignored.map((i: { name: string }) => i.name)).not.toContain("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
    expect(r.json.vllm.args).toContainEqual(
      expect.objectContaining({ dest: "VLLM_ALLOW_LONG_MAX_MODEL_LEN", value: true, source: "given" }),
    );
    expect(r.json.vllm.ignored).toContainEqual({ name: "--master-addr", value: "<HEAD_IP>", effect: "ignored" });
  });
});

describe("vLLM's spellings", () => {
  const parse = (words: string[]) => parseVllmWords(words, true);

  it("reads aliases, underscores, prefixes, --no-NAME, size suffixes and dotted JSON keys", () => {
    const p = parse([
      "-tp",
      "4",
      "--max_model_len",
      "128k",
      "--kv-cache-memory",
      "28235618304",
      "--no-enable-prefix-caching",
      "--speculative-config.method",
      "mtp",
      "--speculative-config.num_speculative_tokens=3",
    ]);
    expect(p.args).toMatchObject({
      tensorParallelSize: 4,
      maxModelLen: 128_000,
      kvCacheMemoryBytes: 28_235_618_304,
      enablePrefixCaching: false,
    });
    expect(JSON.parse(p.args.speculativeConfig as string)).toEqual({ method: "mtp", num_speculative_tokens: 3 });
    expect(p.spelling.kvCacheMemoryBytes).toBe("--kv-cache-memory");
  });

  it("lets dotted keys replace a whole JSON argument, as vLLM appends them last", () => {
    const p = parse([
      "--speculative-config.num_speculative_tokens",
      "2",
      "--speculative-config",
      '{"method":"dspark"}',
    ]);
    expect(JSON.parse(p.args.speculativeConfig as string)).toEqual({ num_speculative_tokens: 2 });
  });

  it("refuses with typed errors naming the flag", () => {
    expect(() => parse(["--max-model-len", "1M"])).toThrow(/--max-model-len.*write the number out/);
    expect(() => parse(["--gpu-memory-utilization", "1.5"])).toThrow(/--gpu-memory-utilization/);
    expect(() => parse(["--max-num", "8"])).toThrow(/ambiguous/);
    expect(() => parse(["--enforce-eager=1"])).toThrow(/switch/);
    expect(() => parse(["--tensor-paralel-size", "2"])).toThrow(/did you mean "--tensor-parallel-size"/);
    expect(() => splitVllmLaunch(["sglang", "serve"])).toThrow(/not a vLLM launch command/);
  });

  it("reads a pasted command's program and environment", () => {
    const l = splitVllmLaunch(["VLLM_USE_V2_MODEL_RUNNER=1", ".venv/bin/vllm", "serve", "m", "-pp", "2"])!;
    expect(l).toMatchObject({
      env: { VLLM_USE_V2_MODEL_RUNNER: "1" },
      program: "vllm serve",
      serverWords: ["m", "-pp", "2"],
    });
  });
});

describe("the CLI", () => {
  it("VLLM_USE_V2_MODEL_RUNNER=1 with PP 2 keeps three batches in flight", () => {
    const v2 = vllmJson([
      "--",
      "VLLM_USE_V2_MODEL_RUNNER=1",
      "vllm",
      "serve",
      "deepseek-ai/DeepSeek-V4-Flash",
      "--kv-cache-dtype",
      "fp8",
      "-pp",
      "2",
    ]);
    expect(v2.json.vllm.sizing.inFlightTokens).toBe(3 * 8192);
    const v1 = vllmJson(["--kv-cache-dtype", "fp8", "-pp", "2"]);
    expect(v1.json.vllm.sizing.inFlightTokens).toBe(2 * 8192);
  });

  it("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lets a length past the positions start with a warning (VL-L1), as vLLM does", () => {
    const launch = ["vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "--kv-cache-dtype", "fp8", "-tp", "8"];
    const long = ["--max-model-len", "1048577"];
    const refused = vllmJson(["--kv-budget-bytes", "100000000000", "--", ...launch, ...long]);
    expect(refused.code).toBe(1);
    expect(rulesOf(refused.json)).toContain("VL-R5");
    const allowed = vllmJson([
      "--kv-budget-bytes",
      "100000000000",
      "--",
      "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
      ...launch,
      ...long,
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(rulesOf(allowed.json)).toContain("VL-L1");
    expect(rulesOf(allowed.json)).not.toContain("VL-R5");
    expect(allowed.json.vllm.sizing.maxModelLen).toBe(1_048_577);
  });

  it("judges --max-model-len against vLLM's derived length: small-dsv4's YaRN 65,536 × 16, not its 262,144 (D50)", () => {
    const model = new URL("./fixtures/models/small-dsv4", import.meta.url).pathname;
    const at = (len: string) =>
      vllmJson([
        "--model",
        model,
        "--kv-budget-bytes",
        "20000000000",
        "--kv-cache-dtype",
        "fp8",
        "--max-model-len",
        len,
      ]);
    const within = at("524288");
    expect(within.code, within.stderr).toBe(0);
    expect(rulesOf(within.json)).not.toContain("VL-R5");
    const above = at("1048577");
    expect(above.code).toBe(1);
    expect(above.json.vllm.errors.find((e: { rule: string }) => e.rule === "VL-R5").params).toEqual({
      max: 1_048_576,
      key: "rope_scaling",
    });
  });

  it("prints the figures in the version's layout and refuses an unknown version", () => {
    const main = cli(["check", "--engine", "vllm", "--kv-cache-dtype", "fp8", "--vllm-version", "main"]);
    expect(main.stdout).toMatch(
      /GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 1,048,576 tokens per request/,
    );
    const old = cli(["check", "--engine", "vllm", "--kv-cache-dtype", "fp8", "--vllm-version", "0.19.0"]);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain("--vllm-version");
  });

  it("names a bad speculative JSON key by the flag as typed", () => {
    const r = cli([
      "check",
      "--engine",
      "vllm",
      "--kv-cache-dtype",
      "fp8",
      "--speculative-config.method",
      "eagle",
      "--speculative-config.num_speculative_tokens",
      "2",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--speculative-config.method");
  });

  it("--engine sglang is the default: the same bytes as without it", () => {
    const plain = cli(["check", "--speculative-num-draft-tokens", "8", "--json"]);
    const explicit = cli(["check", "--engine", "sglang", "--speculative-num-draft-tokens", "8", "--json"]);
    expect(explicit.stdout).toBe(plain.stdout);
    expect(explicit.code).toBe(plain.code);
    expect(cli(["check", "--engine", "trtllm"]).code).toBe(2);
  });
});

// Regression: `check --engine vllm --help` printed the SGLang help (main answered --help before the command saw
// --engine), and `check --help` did not name --engine, so the vLLM flags could not be found from the help.
describe("the vLLM path's help is reachable", () => {
  it.each([
    [["check", "--engine", "vllm", "--help"]],
    [["check", "--engine=vllm", "--help"]],
    [["check", "--help", "--engine", "vllm"]],
  ])("%j prints the vLLM usage and vLLM's flags, exit 0", (args) => {
    const r = cli(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: dsv4-kv check --engine vllm /);
    expect(r.stdout).toContain("\n  --tensor-parallel-size N ");
    expect(r.stdout).toContain("\n  --vllm-version V ");
    expect(r.stdout).not.toContain("--mem-fraction-static");
  });

  it("check --help names --engine and the vLLM help", () => {
    const r = cli(["check", "--help"]);
    expect(r.stdout).toContain("\n  --engine sglang|vllm ");
    expect(r.stdout).toContain("dsv4-kv check --engine vllm --help");
  });
});
