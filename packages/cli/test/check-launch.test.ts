import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_DEPLOYMENT, SGLANG_FLAGS } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { dsv4FlagOf, parseCheckWords, splitLaunchCommand, tokenizeCommand } from "../src/check/launch.js";
import { ALL_FLAGS } from "../src/check/flags.js";
import { cli } from "./cli-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4-launch-"));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const jsonOf = (stdout: string) =>
  JSON.parse(stdout) as { ok: boolean; args: Record<string, unknown>; ignored: { name: string; value: unknown }[] };

/*
 * SGLang's DeepSeek MTP example (its documentation page basic_usage/deepseek_v3, "Multi-token Prediction",
 * https://docs.sglang.io/basic_usage/deepseek_v3.html#multi-token-prediction):
 *   python3 -m sglang.launch_server \
 *     --model-path deepseek-ai/DeepSeek-V3-0324 \
 *     --speculative-algorithm EAGLE \
 *     --trust-remote-code \
 *     --tp 8
 * pasted as one string, with the model swapped for DeepSeek-V4-Flash (dsv4-kv models DeepSeek-V4 only).
 */
const DOCS_COMMAND = `python3 -m sglang.launch_server \\
  --model-path deepseek-ai/DeepSeek-V4-Flash \\
  --speculative-algorithm EAGLE \\
  --trust-remote-code \\
  --tp 8`;

describe("dsv4-kv check -- <launch command> (end to end)", () => {
  it("SGLang's documented DeepSeek MTP launch command pastes and checks", () => {
    const r = cli(["check", "--", DOCS_COMMAND]);
    expect(r.code === 0 || r.code === 1).toBe(true);
    expect(r.stdout).toMatch(/Ignored \(no effect on KV state\):\n {2}--trust-remote-code/);
    const j = cli(["check", "--json", "--", DOCS_COMMAND]);
    expect(jsonOf(j.stdout).args).toMatchObject({ tpSize: 8, speculativeAlgorithm: "EAGLE" });
  });

  it("the same command as separate words, sglang serve, and without --", () => {
    const words = ["--model-path", "DeepSeek-V4-Flash", "--tp", "4", "--trust-remote-code"];
    for (const argv of [
      ["check", "--json", "--", "sglang", "serve", ...words],
      ["check", "--json", "--", "python", "-m", "sglang.launch_server", ...words],
      ["check", "--json", ...words],
    ]) {
      const r = cli(argv);
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r.stdout).args.tpSize).toBe(4);
    }
  });

  it("accepts --model-path, --tp, --dp, --trust-remote-code, --host, --port, --moe-runner-backend; lists ignored", () => {
    const r = cli([
      "check",
      "--",
      "sglang",
      "serve",
      "--model-path",
      "DeepSeek-V4-Flash",
      "--tp",
      "8",
      "--dp",
      "8",
      "--enable-dp-attention",
      "--trust-remote-code",
      "--host",
      "0.0.0.0",
      "--port",
      "30000",
      "--moe-runner-backend",
      "marlin",
    ]);
    expect(r.code === 0 || r.code === 1, r.stderr).toBe(true);
    const ignored = r.stdout.slice(r.stdout.indexOf("Ignored (no effect on KV state):"));
    expect(ignored).toContain('--host "0.0.0.0"');
    expect(ignored).toContain("--port 30000");
    expect(ignored).toContain('--moe-runner-backend "marlin"');
    expect(ignored).toContain("--trust-remote-code");
    expect(ignored).not.toContain("--tp");
    const j = cli(["check", "--json", "--tp", "8", "--dp", "8", "--enable-dp-attention"]);
    expect(jsonOf(j.stdout).args).toMatchObject({ tpSize: 8, dpSize: 8, enableDpAttention: true });
  });

  it("honours NAME=value switches we model and lists the others as ignored", () => {
    const cmd = "SGLANG_DSV4_COMPRESS_STATE_DTYPE=bfloat16 CUDA_VISIBLE_DEVICES=0,1 sglang serve --tp 8";
    const r = cli(["check", "--json", "--", cmd]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r.stdout).args.compressStateDtype).toBe("bfloat16");
    expect(jsonOf(r.stdout).ignored).toContainEqual({ name: "CUDA_VISIBLE_DEVICES", value: "0,1", effect: "ignored" });
    // The command's assignment wins over the process environment.
    const env = cli(["check", "--json", "--", cmd], undefined, { SGLANG_DSV4_COMPRESS_STATE_DTYPE: "float32" });
    expect(jsonOf(env.stdout).args.compressStateDtype).toBe("bfloat16");
  });

  it("--flag=value and aliases (--tensor-parallel-size, --ep, --model)", () => {
    const r = cli(["check", "--json", "--tensor-parallel-size=4", "--ep=4", "--model=DeepSeek-V4-Flash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r.stdout).args).toMatchObject({ tpSize: 4, epSize: 4 });
  });

  it("pnpm start -- --tp-size 4: flags after a leading -- are flags, not a program", () => {
    const r = cli(["check", "--json", "--", "--tp-size", "4"]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r.stdout).args.tpSize).toBe(4);
  });

  it("an unknown flag is exit 2 with a suggestion", () => {
    const r = cli(["check", "--", "sglang", "serve", "--speculative-num-draft-token", "4"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--speculative-num-draft-token: is not a flag");
    expect(r.stderr).toContain('(did you mean "--speculative-num-draft-tokens"?)');
  });

  it("--tp-size -1 is refused naming --tp-size (and --tp as typed)", () => {
    const r = cli(["check", "--tp-size", "-1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--tp-size = -1: must be in [1, 65535]");
    expect(r.stderr).not.toMatch(/ambiguous|ERR_PARSE_ARGS/);
    const short = cli(["check", "--", "sglang serve --tp -1"]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("--tp = -1");
  });

  it("errors name the flag as typed, never an internal camelCase field", () => {
    for (const argv of [
      ["--mem-fraction-static", "1.5"],
      ["--kv-budget-bytes", "0"],
      ["--", "sglang serve --context-length abc"],
      ["--", "sglang serve --port x"],
    ]) {
      const r = cli(["check", ...argv]);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr).not.toMatch(/memFractionStatic|availableBytes|contextLength|kvBudgetBytes/);
      expect(r.stderr).toMatch(/--(mem-fraction-static|kv-budget-bytes|context-length|port)/);
    }
  });

  it("refuses what needs a shell, naming the token", () => {
    for (const [cmd, token] of [
      ["sglang serve --tp $(nproc)", "$(nproc)"],
      ["sglang serve --tp 8 | tee log", "|"],
      ["sglang serve --host '0.0.0.0", "'0.0.0.0"],
      ["sglang serve --tp $TP", "$TP"],
    ] as const) {
      const r = cli(["check", "--", cmd]);
      expect(r.code, cmd).toBe(2);
      expect(r.stderr).toContain(`launch command = ${JSON.stringify(token)}`);
    }
    const notSglang = cli(["check", "--", "vllm", "serve", "x"]);
    expect(notSglang.code).toBe(2);
    expect(notSglang.stderr).toContain("is not an SGLang launch command");
  });
});

describe("dsv4-kv check --config in SGLang's format (end to end)", () => {
  it("YAML with SGLang's keys (dashes or underscores), None values unset, ignored keys listed", () => {
    const path = file(
      "sglang.yaml",
      [
        "model-path: deepseek-ai/DeepSeek-V4-Flash",
        "tp_size: 4",
        "trust-remote-code: true",
        "host: 0.0.0.0",
        "context_length: None",
        "max-running-requests: null",
        "",
      ].join("\n"),
    );
    const r = cli(["check", "--json", "--config", path]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r.stdout).args).toMatchObject({ tpSize: 4 });
    expect(jsonOf(r.stdout).ignored).toContainEqual({ name: "host", value: "0.0.0.0", effect: "ignored" });
    const inCommand = cli(["check", "--json", "--", "sglang", "serve", "--config", path]);
    expect(jsonOf(inCommand.stdout).args.tpSize).toBe(4);
  });

  it("JSON config works too", () => {
    const path = file("sglang.json", JSON.stringify({ "tp-size": 2, port: 30000, speculative_algorithm: null }));
    const r = cli(["check", "--json", "--config", path]);
    expect(r.code === 0 || r.code === 1, r.stderr).toBe(true);
    expect(jsonOf(r.stdout).args).toMatchObject({ tpSize: 2, speculativeAlgorithm: null });
  });

  it("reports every unknown key at once, with suggestions", () => {
    const path = file("typos.yaml", "tp-sise: 8\nspeculative_num_draft_token: 4\nhost: x\nzzzzzzzzzzzz: 1\n");
    const r = cli(["check", "--config", path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tp-sise = 8: is not a setting of dsv4-kv check or SGLang");
    expect(r.stderr).toContain('(did you mean "tp-size"?)');
    expect(r.stderr).toContain("speculative_num_draft_token (did you mean speculative-num-draft-tokens?)");
    expect(r.stderr).toContain("zzzzzzzzzzzz");
    expect(r.stderr).not.toContain("host");
  });
});

describe("launch-command parsing (unit)", () => {
  it("tokenises like a POSIX shell: quotes, escapes, continuations, comments", () => {
    expect(tokenizeCommand(`a 'b c' "d \\"e\\"" f\\ g \\\n h # note\n i`)).toEqual([
      "a",
      "b c",
      'd "e"',
      "f g",
      "h",
      "i",
    ]);
    expect(tokenizeCommand(`--json-model-override-args '{"a": 1}'`)).toEqual([
      "--json-model-override-args",
      '{"a": 1}',
    ]);
  });

  it("splits assignments and the program", () => {
    expect(splitLaunchCommand(["A=1", "B=x=y", "sglang", "serve", "--tp", "8"])).toEqual({
      env: { A: "1", B: "x=y" },
      program: "sglang serve",
      serverWords: ["--tp", "8"],
    });
    expect(splitLaunchCommand(["/usr/bin/python3.11", "-m", "sglang.launch_server"])?.program).toBe(
      "/usr/bin/python3.11 -m sglang.launch_server",
    );
    expect(splitLaunchCommand(["--tp", "8"])).toBeNull();
  });

  it("SGLang's list, optional-boolean and optional-value flags consume their words", () => {
    const r = parseCheckWords([
      "--cuda-graph-bs-decode",
      "1",
      "2",
      "4",
      "--no-dllm-fdfo",
      "--model-checksum",
      "--tp",
      "2",
    ]);
    expect(r.values["tp-size"]).toBe(2);
    expect(r.ignored).toEqual([
      { name: "--cuda-graph-bs-decode", value: ["1", "2", "4"], effect: "ignored" },
      { name: "--no-dllm-fdfo", value: false, effect: "ignored" },
      { name: "--model-checksum", value: "", effect: "ignored" },
    ]);
  });

  it("every KV-relevant SGLang flag maps to a check flag of a compatible kind", () => {
    for (const flag of SGLANG_FLAGS) {
      const name = dsv4FlagOf(flag);
      if (name === null || name === "config") continue;
      const spec = ALL_FLAGS[name];
      expect(spec, flag.name).toBeDefined();
      expect(spec!.type === "bool", flag.name).toBe(flag.kind === "bool");
    }
  });

  it("the default deployment is a server-config preset the report names as defaulted", () => {
    const r = cli(["check", "--json"]);
    const report = JSON.parse(r.stdout) as { notes: { field: string; kind: string; to: unknown }[] };
    expect(report.notes).toContainEqual(
      expect.objectContaining({ field: "tpSize", kind: "defaulted", to: DEFAULT_DEPLOYMENT.tpSize.value }),
    );
  });
});
