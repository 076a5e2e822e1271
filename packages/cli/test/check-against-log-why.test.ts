/**
 * `check --against-log` on the logs operators really have (every kind of mess a pasted log shows): a cut line, a
 * line wrapped by a person, a number run into the next words, prose that mentions a figure, two servers in one
 * file, a launch without sizing lines, an Ascend NPU log with bf16 KV, the earliest configurator on MI300X, a
 * full_token difference that must not cascade, the budget taken from the log as an input, a number cut at the end
 * of a line. Each test failed on the reader that refused such logs (before docs/decisions.md D31).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckReportJsonSchema } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const GEN_B = new URL("./fixtures/logs/gen-b-tp8.log", import.meta.url).pathname;
const CORPUS = new URL("../../server-config/test/fixtures/sglang-logs/", import.meta.url).pathname;
const text = readFileSync(GEN_B, "utf8");
const lines = text.split("\n");
const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-why-"));
const write = (name: string, body: string) => {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
};

interface Figure {
  name: string;
  rank: string | null;
  line?: number;
  logged: string;
  computed: string | null;
  match: boolean | null;
  role: string;
  derivedFrom: string[];
  cause?: { explained: boolean; alternatives: string[]; text: string };
}

function json(args: string[]) {
  const r = cli(["check", ...args, "--json"]);
  const parsed = r.stdout ? JSON.parse(r.stdout) : null;
  if (parsed)
    expect(
      CheckReportJsonSchema.safeParse(parsed).success,
      JSON.stringify(CheckReportJsonSchema.safeParse(parsed).error?.issues?.slice(0, 3)),
    ).toBe(true);
  return { ...r, json: parsed };
}
const figures = (j: { logComparison: { figures: Figure[] } }) => j.logComparison.figures;
const differing = (j: { logComparison: { figures: Figure[] } }) => figures(j).filter((f) => f.match === false);

describe("the messes of real logs", () => {
  it("a cut `Initialize DeepSeekV4TokenToKVPool` line: the rest is compared, the cut value is marked truncated", () => {
    const i = lines.findIndex((l) => l.includes("TP3] Initialize DeepSeekV4TokenToKVPool"));
    const cut = [...lines];
    cut[i] = cut[i]!.slice(0, cut[i]!.indexOf("c128_size=") + "c128_size=38".length);
    const r = json(["--against-log", write("cut-init.log", cut.join("\n"))]);
    expect(r.code, r.stderr).toBe(0);
    const truncated = r.json.logComparison.truncated as Array<{ line: number; name: string; logged: string }>;
    expect(truncated).toContainEqual(
      expect.objectContaining({ line: i + 1, name: "pool-init.c128_size", logged: "38" }),
    );
    expect(truncated).toContainEqual(
      expect.objectContaining({
        line: i + 1,
        name: "pool-init line",
        logged: "c4_state_pool_size, c128_state_pool_size",
      }),
    );
    const c128 = figures(r.json).find((f) => f.name === "pool-init.c128_size" && f.rank === "TP3")!;
    expect(c128).toMatchObject({ role: "truncated", match: null });
    expect(figures(r.json).find((f) => f.name === "pool-init.c4_size" && f.rank === "TP3")).toMatchObject({
      match: true,
    });
  });

  it("a memory line wrapped onto two lines by a person is joined and compared", () => {
    const i = lines.findIndex((l) => l.includes("TP0] DSV4 memory calculation"));
    const wrapped = [...lines];
    const at = wrapped[i]!.indexOf("c128_state_fixed");
    wrapped.splice(i, 1, wrapped[i]!.slice(0, at).trimEnd(), `    ${wrapped[i]!.slice(at)}`);
    const r = json(["--against-log", write("wrapped.log", wrapped.join("\n"))]);
    expect(r.code, r.stderr).toBe(0);
    const full = figures(r.json).find((f) => f.name === "full_token" && f.rank === "TP0")!;
    expect(full).toMatchObject({ logged: "494080", match: true, line: i + 1 });
    expect(r.json.logComparison.skipped).toEqual([]);
  });

  it("`max_total_num_tokens=494080  avail mem=…`: the number ends at its delimiter", () => {
    const body = text.replace(
      /TP0\] max_total_num_tokens=494080, .*$/m,
      "TP0] max_total_num_tokens=494080  avail mem=12.40 GB…",
    );
    const r = json(["--against-log", write("runon.log", body)]);
    expect(r.code, r.stderr).toBe(0);
    expect(figures(r.json).find((f) => f.name === "max_total_num_tokens" && f.rank === "TP0")).toMatchObject({
      logged: "494080",
      match: true,
    });
  });

  it("prose that mentions `full=…` and `bytes_per_full_token=…` is skipped, the real lines are compared", () => {
    const prose = [
      "The pool line says `DSV4 pool sizes: full=…, swa=…` and the memory line bytes_per_full_token=… as usual.",
      "| figure | DSV4 memory calculation: full_token=… |",
    ];
    const r = json(["--against-log", write("prose.log", [...prose, ...lines].join("\n"))]);
    expect(r.code, r.stderr).toBe(0);
    const skipped = r.json.logComparison.skipped as Array<{ line: number; reason: string }>;
    expect(skipped.map((s) => s.line)).toEqual([1, 2]);
    expect(skipped[0]!.reason).toMatch(/^prose/);
    expect(skipped[1]!.reason).toMatch(/^table/);
    expect(differing(r.json)).toEqual([]);
  });

  it("two servers in one file: two sections, each reconciled; --section 2 picks the second", () => {
    const second = text.replace("tp_size=8", "tp_size=8, random_seed=2");
    const both = `${text}\n${second}`;
    const path = write("two.log", both);
    const r = json(["--against-log", path]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.sections).toHaveLength(2);
    expect(r.json.sections[1].logComparison.startedBy).toBe("server_args");
    expect(r.json.sections[1].logComparison.firstLine).toBe(lines.length + 2);
    expect(r.json.sections.every((s: { ok: boolean }) => s.ok)).toBe(true);
    const ranks = new Set(r.json.sections[1].logComparison.figures.map((f: Figure) => f.rank));
    expect(ranks.size).toBe(8);
    const picked = json(["--against-log", path, "--section", "2"]);
    expect(picked.code).toBe(0);
    expect(picked.json.logComparison.section).toBe(2);
    expect(picked.json.sections).toHaveLength(1);
    const text2 = cli(["check", "--against-log", path]);
    expect(text2.stdout).toContain("=== section 2 of 2");
    expect(text2.stdout).toContain("Sections of the log (--section N picks one):");
    expect(cli(["check", "--against-log", path, "--section", "3"]).code).toBe(2);
    const alone = cli(["check", "--section", "1"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--section");
  });

  it("a server_args line and a launch command without sizing lines: checked as a launch, nothing to reconcile", () => {
    const argsOnly = write("args-only.log", lines.slice(0, 10).join("\n"));
    const r = json(["--against-log", argsOnly]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.logComparison.nothingToReconcile).toMatch(/checked as a launch, nothing to reconcile/);
    expect(r.json.args.tpSize).toBe(8);
    const launch = write(
      "launch.log",
      "$ python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp 4\n",
    );
    const l = json(["--against-log", launch]);
    expect(l.code, l.stderr).toBe(0);
    expect(l.json.args.tpSize).toBe(4);
    expect(l.json.logComparison.nothingToReconcile).toBeDefined();
  });

  it("an Ascend NPU log with the bf16 KV its servers run: V-A3 does not apply CUDA's dtype rule there", () => {
    const npu = text
      .replace("tp_size=8", "tp_size=8, device='npu', kv_cache_dtype='bfloat16'")
      .replaceAll("page_size=256", "page_size=128");
    const r = json(["--against-log", write("npu.log", npu)]);
    expect(r.json.errors.map((e: { rule: string }) => e.rule)).not.toContain("V-A3");
    expect(r.json.args.platform).toBe("npu");
    expect(r.json.logComparison.platform).toBe("npu");
    expect(r.json.logComparison.platformEvidence[0]).toContain("device='npu'");
    // The same dtype on CUDA is still refused.
    const cuda = json([
      "--against-log",
      write("cuda-bf16.log", text.replace("tp_size=8", "tp_size=8, kv_cache_dtype='bfloat16'")),
    ]);
    expect(cuda.json.errors.map((e: { rule: string }) => e.rule)).toContain("V-A3");
    expect(cuda.code).toBe(1);
  });

  it("the MI300X log of the earliest configurator reconciles exactly: its rings, layers and request split", () => {
    const log = join(CORPUS, "sglang-issue-25118-mi300x-tp4-dp4-earliest-dsv4-assert.log");
    // The issue gives the server's arguments (its server_args line is not in the excerpt).
    const args = ["--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", "--swa-full-tokens-ratio", "0.8"];
    const r = json(["--against-log", log, ...args, "--max-running-requests", "256", "--speculative-algorithm", "none"]);
    expect(differing(r.json).map((f) => `${f.rank} ${f.name}`)).toEqual([]);
    expect(r.json.logComparison.generation).toBe("gen-a");
    expect(r.json.logComparison.platform).toBe("hip");
    expect(r.code, r.stderr).toBe(0);
    const reqs = figures(r.json).find((f) => f.name === "pool-init.max_num_reqs")!;
    expect(reqs).toMatchObject({ logged: "256", computed: "256", derivedFrom: [] });
    const state = figures(r.json).find((f) => f.name === "pool-init.c128_state_pool_size")!;
    expect(state.derivedFrom).toEqual(["pool-init.swa_size@20"]);
    // Under today's rings (the check's own): the difference is named, term and value.
    const modern = json(["--against-log", log, ...args, "--max-running-requests", "256"]);
    const bpft = differing(modern.json).find((f) => f.name === "bytes_per_full_token")!;
    expect(bpft.cause).toMatchObject({ explained: true, alternatives: ["rings-mtp"] });
    expect(bpft.cause!.text).toContain("c4/c128 rings 16/256");
  });

  it("a full_token difference does not cascade: the pools are computed from the logged full_token", () => {
    const body = text.replace(/(TP2\] DSV4 memory calculation: .*full_token=)494080/, "$1481280");
    const r = json(["--against-log", write("full-miss.log", body)]);
    expect(r.code).toBe(1);
    const diff = differing(r.json);
    // Only the two figures that disagree with each other: full_token, and the pool line's full (= full_token).
    expect(diff.map((f) => `${f.rank} ${f.name}`)).toEqual(["TP2 full_token", "TP2 pools.full"]);
    const pools = figures(r.json).filter((f) => f.rank === "TP2" && f.name.startsWith("pool"));
    expect(pools.filter((f) => f.match === false).map((f) => f.name)).toEqual(["pools.full"]);
    expect(pools.find((f) => f.name === "pools.c4")!.derivedFrom).toEqual(["pools.full@21"]);
    expect(pools.find((f) => f.name === "pool-init.c128_state_pool_size")!.derivedFrom).toEqual([
      "pool-init.max_num_reqs@29",
    ]);
  });

  it("available_bytes taken from the log is an input, not a match", () => {
    const r = json(["--against-log", GEN_B]);
    const avail = figures(r.json).filter((f) => f.name === "available_bytes");
    expect(avail).toHaveLength(8);
    expect(avail.every((f) => f.role === "input" && f.match === null && f.computed === null)).toBe(true);
    const given = json(["--against-log", GEN_B, "--kv-budget-bytes", String(Math.round(9.31 * 2 ** 30))]);
    expect(figures(given.json).find((f) => f.name === "available_bytes")).toMatchObject({
      role: "compared",
      match: true,
    });
  });

  it("a number cut at the end of a line (`full_token=4940`) is truncated, not an arithmetic miss", () => {
    const body = text.replace(/(TP5\] DSV4 memory calculation: .*full_token=)494080/, "$14940");
    const r = json(["--against-log", write("cut-number.log", body)]);
    expect(r.code, r.stderr).toBe(0);
    expect(figures(r.json).find((f) => f.name === "full_token" && f.rank === "TP5")).toMatchObject({
      role: "truncated",
      match: null,
    });
    expect(r.json.logComparison.truncated).toContainEqual(
      expect.objectContaining({ name: "full_token", logged: "4940" }),
    );
    // The pools of that rank are still compared, from our own full_token.
    expect(figures(r.json).find((f) => f.name === "pools.c4" && f.rank === "TP5")).toMatchObject({ match: true });
  });

  it("exit 2 only for a file with nothing DSV4 in it", () => {
    const r = cli(["check", "--against-log", write("nothing.log", "# notes\nThe server ran fine.\n")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("holds no DSV4 start-up material");
  });
});
