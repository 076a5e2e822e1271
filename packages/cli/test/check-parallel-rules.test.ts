// V-TP1-3 on real launch lines, end to end. The lines are quoted verbatim from their sources; only the
// checkpoint path is swapped for a local folder holding that model's config.json (the line names a path on the
// poster's machine).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODEL_PRESETS } from "@dsv4-kv/server-config";
import { presetConfigJson } from "@dsv4-kv/server-config/testing";
import { describe, expect, test } from "vitest";
import { cli } from "./cli-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4-tp-"));
function checkpoint(name: string): string {
  const path = join(dir, name);
  mkdirSync(path);
  writeFileSync(join(path, "config.json"), JSON.stringify(presetConfigJson(MODEL_PRESETS[name]!, "deepseek")));
  return path;
}

interface Issue {
  rule: string;
  message: string;
}
const report = (stdout: string) =>
  JSON.parse(stdout) as { errors: Issue[]; warnings: Issue[]; args: Record<string, unknown> };
const parallelIssues = (r: ReturnType<typeof report>) =>
  [...r.errors, ...r.warnings].filter((i) => /^V-(TP|DP)/.test(i.rule)).map((i) => i.rule);

/*
 * sgl-project/sglang pull request #23933 ("Deepseek v4 dp attention is not TP size for H20", 2026-04-28): DeepSeek-V4-Pro
 * on two 8×H20 nodes with attention DP 2 over TP 16 (attention TP 8: 128 heads and 16 groups split evenly).
 */
const PR_23933 =
  "SGLANG_SHARED_EXPERT_TP1=1 SGLANG_ENABLE_THINKING=1 SGLANG_DSV4_FP4_EXPERTS=1 SGLANG_JIT_DEEPGEMM_PRECOMPILE=0 GLOO_SOCKET_IFNAME=eth0 NCCL_MIN_NCHANNELS=24 NCCL_IB_QPS_PER_CONNECTION=8 sglang serve --trust-remote-code --model-path /data00/models/DeepSeek-V4-Pro --tp 16 --dp-size 2  --enable-dp-attention --cuda-graph-max-bs 8 --max-running-requests 16 --enable-metrics --host 0.0.0.0 --port 8080 --mem-fraction-static 0.9 --moe-runner-backend marlin --dist-init-addr 192.168.3.198:30300 --nnodes 2 --node-rank 0 --tool-call-parser deepseekv4 --reasoning-parser deepseek-v4";

/*
 * sgl-project/sglang#2591 ("[Feature] DeepSeek V3 optimization", 2025-02-12): DeepSeek-V3 on 14 H100s with
 * --tp 14. Pointed at a DeepSeek-V4-Flash checkpoint, 14 divides neither its 64 heads, its 8 output groups nor its
 * expert width 2048.
 */
const ISSUE_2591 =
  "python3 -m sglang.launch_server --model-path /models/dsv3 --tp 14 --dist-init-addr 10.21.99.116:5000 --nnodes 4 --node-rank 0 --trust-remote-code --enable-torch-compile --host 0.0.0.0 --port 30000 --grammar-backend xgrammar";

describe("check on real launch lines: what the parallel layout must divide", () => {
  test("PR #23933's DeepSeek-V4-Pro TP 16 / attention DP 2 launch raises no V-TP rule", () => {
    const line = PR_23933.replace("/data00/models/DeepSeek-V4-Pro", checkpoint("DeepSeek-V4-Pro"));
    const r = cli(["check", "--json", "--kv-budget-bytes", String(40 * 2 ** 30), "--", line]);
    expect([0, 1], r.stderr).toContain(r.code);
    const out = report(r.stdout);
    expect(out.args).toMatchObject({ tpSize: 16, dpSize: 2, enableDpAttention: true });
    expect(parallelIssues(out)).toEqual([]);
  });
  test("sgl-project/sglang#2591's --tp 14 on a DeepSeek-V4-Flash checkpoint is refused by V-TP1 and V-TP3", () => {
    const line = ISSUE_2591.replace("/models/dsv3", checkpoint("DeepSeek-V4-Flash"));
    const r = cli(["check", "--json", "--", line]);
    expect(r.code).toBe(1);
    expect(parallelIssues(report(r.stdout))).toEqual(["V-TP1", "V-TP1", "V-TP3"]);
    const text = cli(["check", "--", line]);
    expect(text.stdout).toMatch(/\[V-TP1\] --tp-size 14 does not divide DeepSeek-V4-Flash's 64 num_attention_heads/);
  });
  test("--dp-size 3 --enable-dp-attention on TP 8 is INVALID (V-TP2), not only V-DP1's warning", () => {
    const r = cli(["check", "--json", "--tp-size", "8", "--dp-size", "3", "--enable-dp-attention"]);
    expect(r.code).toBe(1);
    expect(report(r.stdout).errors.map((e) => e.rule)).toEqual(["V-TP2"]);
  });
  test("--kv-budget-bytes 9007199254740991 is INVALID (V-I1)", () => {
    const r = cli(["check", "--json", "--kv-budget-bytes", "9007199254740991"]);
    expect(r.code).toBe(1);
    expect(report(r.stdout).errors.map((e) => e.rule)).toEqual(["V-I1"]);
  });
});
