/**
 * parseSglangLog: SGLang's line formats, per-rank prefixes, repeated lines, env; what a pasted log holds besides
 * (cut and wrapped lines, prose, several servers) is kept, skipped or marked, and only a file with nothing DSV4 in
 * it is refused.
 */
import { ServerConfigError } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { parseSglangLog } from "../src/sglang-log/parse.js";
import { readPythonLiteral } from "../src/sglang-log/python-literal.js";

const P = (ranks: string) => `[2026-08-10 09:19:13${ranks ? ` ${ranks}` : ""}] `;
const MEM =
  "DSV4 memory calculation: bytes_per_full_token=7705.45, available_bytes=1.57 GB, c128_state_fixed=0.07 GB, " +
  "full_token=209280";
const POOLS = "DSV4 pool sizes: full=209280, swa=20864, c4=52320, c128=1635, c4_state=1304, c128_state=0";
const INIT =
  "Initialize DeepSeekV4TokenToKVPool with max_num_reqs=4 swa_size=3200 c4_size=8192 c4_logical_size=8192 " +
  "c128_size=256 c4_state_pool_size=1024 c128_state_pool_size=1536";
const MAXTOK =
  "max_total_num_tokens=32768, chunked_prefill_size=1024, max_prefill_tokens=16384, max_running_requests=4, " +
  "context_len=1048576, available_gpu_mem=7.68 GB";
const DICT_ARGS =
  "server_args={'model_path': '/models/DeepSeek-V4-Flash', 'trust_remote_code': True, 'context_length': None, " +
  "'mem_fraction_static': 0.85, 'page_size': 256, 'uvicorn_access_log_exclude_prefixes': [], " +
  "'cuda_graph_config': {'decode': {'backend': 'full', 'bs': [1, 2, 4]}}, 'tp_size': 4, " +
  "'speculative_algorithm': 'EAGLE', 'watchdog_timeout': 1800.0, 'api_key': \"it's\"}";
const REPR_ARGS =
  "server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V4-Flash', tp_size=8, context_length=None, " +
  "enable_dp_attention=False, mem_fraction_static=0.85, speculative_algorithm='EAGLE', " +
  "speculative_num_steps=3, lora_paths=None, json_model_override_args='{}', schedule_conservativeness=1.0, " +
  "random_seed=11713072, cuda_graph_bs=[1, 2, 4, 8], weird=<LoadFormat.AUTO: 'auto'>, eps=1e-05)";

const log = (...lines: string[]) => `${lines.join("\n")}\n`;

/** The first section of a log (most tests hold one server). */
const first = (text: string) => parseSglangLog(text).sections[0]!;

function refusal(text: string): ServerConfigError {
  try {
    parseSglangLog(text);
  } catch (error) {
    if (ServerConfigError.isInstance(error)) return error as ServerConfigError;
    throw error;
  }
  throw new Error("not refused");
}

describe("parseSglangLog: sizing lines", () => {
  it("reads the memory calculation with its printed precision and units", () => {
    const parsed = first(log(P("TP0") + MEM));
    const [line] = parsed.sizingLines;
    expect(line!.kind).toBe("memory-calculation");
    expect(line!.label).toBe("DSV4 memory calculation");
    expect(line!.line).toBe(1);
    expect(line!.rank).toEqual({ tp: 0, dp: null, ep: null, pp: null, label: "TP0" });
    expect(line!.fields.available_bytes).toEqual({ text: "1.57", value: 1.57, decimals: 2, unit: "GB" });
    expect(line!.fields.bytes_per_full_token).toEqual({ text: "7705.45", value: 7705.45, decimals: 2, unit: "" });
    expect(line!.fields.full_token).toEqual({ text: "209280", value: 209280, decimals: 0, unit: "", atLineEnd: true });
  });

  it("keeps the earliest spelling `DSv4 memory calculation` (no c128_state_fixed) as the label", () => {
    const old = "DSv4 memory calculation: bytes_per_full_token=15955.85, available_bytes=19.58 GB, full_token=1317632";
    const [line] = first(log(P("TP0") + old)).sizingLines;
    expect(line!.label).toBe("DSv4 memory calculation");
    expect(Object.keys(line!.fields)).toEqual(["bytes_per_full_token", "available_bytes", "full_token"]);
  });

  it("reads pool sizes, the pool's init line (blank-separated) and the scheduler's max_total_num_tokens", () => {
    const parsed = first(log(P("TP0") + POOLS, P("TP0") + INIT, P("TP0") + MAXTOK));
    expect(parsed.sizingLines.map((s) => s.kind)).toEqual(["pool-sizes", "pool-init", "max-total-tokens"]);
    expect(parsed.sizingLines[1]!.label).toBe("Initialize DeepSeekV4TokenToKVPool");
    expect((parsed.sizingLines[1]!.fields.c128_state_pool_size as { value: number }).value).toBe(1536);
    expect((parsed.sizingLines[2]!.fields.available_gpu_mem as { unit: string }).unit).toBe("GB");
  });

  it("reads the cap SWA sizing line (mode text, a `+` in a key) and boolean fields", () => {
    const cap = "DSV4 SWA sizing: mode=cap, swa_tokens=13312, request_cap+headroom=13312, prefix_tails=16";
    const ratio = "DSV4 SWA sizing: mode=ratio (explicit), swa_tokens=512, swa_full_tokens_ratio=0.0042";
    const unified =
      "DSV4 memory calculation: unified=False, bytes_per_full_token=1670.75, available_bytes=8.84 GB, " +
      "c128_state_fixed=0.00 GB, swa_fixed=0.30 GB, full_token=5491200";
    const parsed = first(log(P("TP0 EP0") + cap, P("TP0 EP0") + ratio, P("TP0 EP0") + unified));
    expect(parsed.sizingLines[0]!.fields.mode).toBe("cap");
    expect(parsed.sizingLines[0]!.fields["request_cap+headroom"]).toMatchObject({ value: 13312 });
    expect(parsed.sizingLines[1]!.fields.mode).toBe("ratio (explicit)");
    expect(parsed.sizingLines[2]!.fields.unified).toBe("False");
    expect(parsed.sizingLines[2]!.rank).toEqual({ tp: 0, dp: null, ep: 0, pp: null, label: "TP0 EP0" });
  });

  it("reads every rank of an interleaved multi-rank log, and repeated lines in order", () => {
    const resized = "DSV4 pool sizes: full=32768, swa=3200, c4=8192, c128=256, c4_state=200, c128_state=0";
    const parsed = first(
      log(
        P("DP0 TP0 EP0") + MEM,
        P("DP1 TP1 EP1") + MEM,
        P("DP0 TP0 EP0") + POOLS,
        P("DP1 TP1 EP1") + POOLS,
        P("DP0 TP0 EP0") + resized,
        P("DP1 TP1 EP1") + resized,
      ),
    );
    const pools = parsed.sizingLines.filter((s) => s.kind === "pool-sizes");
    expect(pools.map((s) => [s.rank!.label, (s.fields.full as { value: number }).value])).toEqual([
      ["DP0 TP0 EP0", 209280],
      ["DP1 TP1 EP1", 209280],
      ["DP0 TP0 EP0", 32768],
      ["DP1 TP1 EP1", 32768],
    ]);
    expect(pools[1]!.rank).toEqual({ tp: 1, dp: 1, ep: 1, pp: null, label: "DP1 TP1 EP1" });
  });

  it("reads a line glued after a progress bar, colour codes, and lines without a prefix", () => {
    const parsed = first(
      log(`Capturing batches (bs=4):   0%|   | 0/4 [00:00<?, ?it/s]${P("PP1 TP3")}${POOLS}`, `\x1b[32m${MEM}\x1b[0m`),
    );
    expect(parsed.sizingLines[0]!.rank).toEqual({ tp: 3, dp: null, ep: null, pp: 1, label: "PP1 TP3" });
    expect(parsed.sizingLines[1]!.rank).toBeNull();
  });

  it("does not take max_total_num_tokens inside another line for the scheduler's line", () => {
    const parsed = first(log(P("TP0") + POOLS, `${P("TP0")}Capped: max_total_num_tokens=1000 by the user`));
    expect(parsed.sizingLines.map((s) => s.kind)).toEqual(["pool-sizes"]);
  });
});

describe("parseSglangLog: server_args, environment, launch command", () => {
  it("reads the dict form: None, booleans, floats, nested dicts and lists, either quote", () => {
    const parsed = first(log(P("") + DICT_ARGS, P("TP0") + MEM));
    expect(parsed.serverArgsLine).toBe(1);
    expect(parsed.serverArgsForm).toBe("dict");
    expect(parsed.serverArgs).toMatchObject({
      model_path: "/models/DeepSeek-V4-Flash",
      trust_remote_code: true,
      context_length: null,
      mem_fraction_static: 0.85,
      uvicorn_access_log_exclude_prefixes: [],
      cuda_graph_config: { decode: { backend: "full", bs: [1, 2, 4] } },
      watchdog_timeout: 1800,
      api_key: "it's",
    });
  });

  it("reads the ServerArgs(...) repr", () => {
    const parsed = first(log(P("") + REPR_ARGS, P("TP0") + MEM));
    expect(parsed.serverArgsForm).toBe("repr");
    expect(parsed.serverArgs).toMatchObject({
      model_path: "deepseek-ai/DeepSeek-V4-Flash",
      tp_size: 8,
      context_length: null,
      enable_dp_attention: false,
      json_model_override_args: "{}",
      cuda_graph_bs: [1, 2, 4, 8],
      weird: "<LoadFormat.AUTO: 'auto'>",
      eps: 1e-5,
    });
  });

  it("keeps the same server_args on several lines as one server; two that differ are two sections", () => {
    expect(parseSglangLog(log(P("") + REPR_ARGS, P("") + REPR_ARGS, MEM)).sections).toHaveLength(1);
    const two = parseSglangLog(log(P("") + REPR_ARGS, MEM, P("") + REPR_ARGS.replace("tp_size=8", "tp_size=4"), MEM));
    expect(two.sections.map((x) => [x.section, x.firstLine, x.lastLine, x.startedBy])).toEqual([
      [1, 1, 2, "file-start"],
      [2, 3, 4, "server_args"],
    ]);
    expect(two.sections[1]!.serverArgs).toMatchObject({ tp_size: 4 });
  });

  it("starts a section at a restart: a rank sizing again after its pool was built, or its pools growing", () => {
    const INIT_LINE = P("TP0") + INIT;
    const restart = parseSglangLog(log(P("TP0") + MEM, INIT_LINE, P("TP0") + MEM, INIT_LINE));
    expect(restart.sections.map((x) => x.startedBy)).toEqual(["file-start", "restart"]);
    const grow = parseSglangLog(log(P("TP0") + POOLS.replace("full=209280", "full=1000"), P("TP0") + POOLS));
    expect(grow.sections).toHaveLength(2);
    const shrink = parseSglangLog(log(P("TP0") + POOLS, P("TP0") + POOLS.replace("full=209280", "full=1000")));
    expect(shrink.sections).toHaveLength(1);
  });

  it("reads environment lines and the launch command (continued with \\) with its assignments", () => {
    const parsed = first(
      log(
        "SGLANG_OPT_USE_ONLINE_COMPRESS=1",
        "export SGLANG_DSV4_COMPRESS_STATE_DTYPE=bfloat16",
        "NOT AN ENV LINE=1",
        "$ SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=0 python3 -m sglang.launch_server " +
          "--model-path 'deepseek-ai/DeepSeek-V4-Flash' \\",
        "    --tp 8 --speculative-algorithm EAGLE",
        "  Example: sglang serve --model-path <model> [options]",
        MEM,
      ),
    );
    expect(parsed.env).toEqual({
      SGLANG_OPT_USE_ONLINE_COMPRESS: "1",
      SGLANG_DSV4_COMPRESS_STATE_DTYPE: "bfloat16",
      SGLANG_EXPERIMENTAL_ONLINE_C128_MTP: "0",
    });
    expect(parsed.launchCommand).toEqual([
      "SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=0",
      "python3",
      "-m",
      "sglang.launch_server",
      "--model-path",
      "deepseek-ai/DeepSeek-V4-Flash",
      "--tp",
      "8",
      "--speculative-algorithm",
      "EAGLE",
    ]);
    expect(parsed.serverArgs).toBeNull();
  });
});

describe("parseSglangLog: refusals (nothing DSV4 in the file)", () => {
  it.each([
    ["empty", "", "is empty"],
    ["blank", "\n \n", "is empty"],
    ["binary", "abc\0def", "binary"],
    ["garbage", "lorem ipsum\nhello world\n{not a log}\n", "holds no DSV4 start-up material"],
    ["prose only", "The pool was `DSV4 pool sizes: full=…` on that run.\n", "skipped line 1: prose"],
  ])("refuses %s", (_name, text, words) => {
    const e = refusal(text);
    expect(e.code).toBe("SGLANG_LOG");
    expect(e.rule).toContain(words);
  });
});

describe("parseSglangLog: what a pasted log holds besides SGLang's whole lines", () => {
  it("a log cut off before sizing keeps its server_args: a section without sizing lines", () => {
    const s = first(log(P("") + REPR_ARGS, `${P("TP0")}Load weight begin. avail mem=111.47 GB`));
    expect(s.sizingLines).toEqual([]);
    expect(s.serverArgs).toMatchObject({ tp_size: 8 });
    expect(s.startupLines).toEqual([{ line: 2, text: "Load weight begin. avail mem=111.47 GB" }]);
  });

  it("a server_args line cut off mid-way is skipped, naming the line; the sizing lines are read", () => {
    const file = parseSglangLog(log(MEM, P("") + REPR_ARGS.slice(0, 150)));
    expect(file.skipped).toEqual([
      expect.objectContaining({ line: 2, reason: expect.stringContaining("cut off mid-way") }),
    ]);
    expect(file.sections[0]!.sizingLines).toHaveLength(1);
  });

  it("server_args that are not a Python literal are skipped with the reason", () => {
    const bad = parseSglangLog(log(`${P("")}server_args={'a': os.getenv('X')}`, MEM));
    expect(bad.skipped[0]!.reason).toContain("not a Python literal");
    expect(parseSglangLog(log(`${P("")}server_args=hello`, MEM)).skipped[0]!.reason).toContain("neither");
  });

  it("a sizing line cut before its last field keeps what it has, lists what is missing, marks the last value", () => {
    const [line] = first(log(P("TP0") + MEM.slice(0, MEM.lastIndexOf(", full_token") + 2))).sizingLines;
    expect(line!.missing).toEqual(["full_token"]);
    expect(line!.fields.c128_state_fixed).toMatchObject({ value: 0.07 });
    expect((line!.fields.c128_state_fixed as { truncated?: boolean }).truncated).toBeUndefined();
    const [mid] = first(log(P("TP0") + INIT.slice(0, INIT.indexOf("c128_size=") + 12))).sizingLines;
    expect(mid!.fields.c128_size).toMatchObject({ text: "25", truncated: true, atLineEnd: true });
    expect(mid!.missing).toEqual(["c4_state_pool_size", "c128_state_pool_size"]);
  });

  it("an ellipsis, a cut unit or a line ending inside a key marks the line cut", () => {
    const [ell] = first(log(`${P("TP0")}${POOLS.slice(0, POOLS.indexOf(", c4=") + 8)}...`)).sizingLines;
    expect(ell!.fields.c4).toMatchObject({ text: "523", truncated: true });
    const [unit] = first(log(P("TP0") + MEM.slice(0, MEM.indexOf("1.57 GB") + 6))).sizingLines;
    expect(unit!.fields.available_bytes).toMatchObject({ value: 1.57, truncated: true });
  });

  it("a line wrapped by a person is joined when the continuation completes its keys", () => {
    const at = MEM.indexOf("c128_state_fixed");
    const s = first(log(P("TP0") + MEM.slice(0, at).trimEnd(), `   ${MEM.slice(at)}`, P("TP0") + POOLS));
    expect(s.sizingLines[0]!.joined).toEqual([2]);
    expect(s.sizingLines[0]!.missing).toEqual([]);
    expect(s.sizingLines[0]!.fields.full_token).toMatchObject({ value: 209280 });
    expect(s.sizingLines[1]!.line).toBe(3);
  });

  it("values end at the format's delimiters: run-on text, blank separators and thousands separators", () => {
    const s = first(
      log(
        `${P("TP0")}max_total_num_tokens=3441920  avail mem=47.48 GB`,
        "DSV4 pool sizes: full=3441920 swa=516096 c4=860480 c128=26890 c4_state=32256 c128_state=516096",
        "max_total_num_tokens=3,895,296   cuda-graph capture 49s",
      ),
    );
    expect(s.sizingLines[0]!.fields.max_total_num_tokens).toMatchObject({ value: 3441920 });
    expect(s.sizingLines[1]!.fields).toMatchObject({ swa: { value: 516096 }, c128_state: { value: 516096 } });
    expect(s.sizingLines[2]!.fields.max_total_num_tokens).toMatchObject({ text: "3,895,296", value: 3895296 });
  });

  it("prose and tables that mention a sizing line are skipped, not read", () => {
    const file = parseSglangLog(
      log(
        "As the log said, `DSV4 pool sizes: full=…` was fine.",
        "| DSV4 memory calculation | full_token=1 |",
        P("TP0") + MEM,
      ),
    );
    expect(file.skipped.map((x) => [x.line, x.reason.split(":")[0]])).toEqual([
      [1, "prose"],
      [2, "table"],
    ]);
    expect(file.sections[0]!.sizingLines).toHaveLength(1);
  });

  it("a field that cannot be read is left out and listed; the line is kept", () => {
    const file = parseSglangLog(log(P("TP0") + POOLS.replace("swa=20864", "swa=lots")));
    expect(file.sections[0]!.sizingLines[0]!.fields.swa).toBeUndefined();
    expect(file.skipped[0]!.reason).toContain("swa=lots is not a number");
    const twice = parseSglangLog(log(P("TP0") + POOLS.replace("c4=52320", "c4=1, c4=2")));
    expect(twice.skipped[0]!.reason).toContain("c4 appears twice");
  });

  it("a launch command with an unclosed quote is skipped with the reason", () => {
    const file = parseSglangLog(log("sglang serve --model-path 'deepseek-ai/DeepSeek-V4-Flash", MEM));
    expect(file.skipped[0]).toMatchObject({ line: 1, reason: expect.stringContaining("unclosed") });
  });

  it("pieces of a ServerArgs repr whose head was cut are read by their pairs", () => {
    const s = first(
      log(
        "ked_prefill_size=4096, tp_size=8, page_size=256, mem_fraction_static=0.85, dp_size=1, " +
          "context_length=None, pp_size=1, x",
      ),
    );
    expect(s.serverArgsForm).toBe("fragment");
    expect(s.serverArgs).toMatchObject({ tp_size: 8, page_size: 256, mem_fraction_static: 0.85, context_length: null });
  });
});

describe("readPythonLiteral", () => {
  it.each([
    ["None", null],
    ["-3", -3],
    ["-inf", Number.NEGATIVE_INFINITY],
    ["(1, 'a',)", [1, "a"]],
    ["{1, 2}", [1, 2]],
    ["'a\\'b\\n\\x41\\u00e9'", "a'b\nAé"],
    ['"x\\\\y"', "x\\y"],
    ["{1: 'x', None: 2}", { "1": "x", None: 2 }],
    ["Outer(inner=Inner(a=[]), b=torch.bfloat16)", { inner: { a: [] }, b: "torch.bfloat16" }],
  ])("reads %s", (text, value) => {
    expect(readPythonLiteral(text).value).toEqual(value);
  });

  it("refuses nesting deeper than 64 levels", () => {
    expect(() => readPythonLiteral(`${"[".repeat(70)}${"]".repeat(70)}`)).toThrow(/deeper/);
  });
});
