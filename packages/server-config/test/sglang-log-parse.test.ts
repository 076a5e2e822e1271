/** parseSglangLog: SGLang's line formats, per-rank prefixes, repeated lines, env, and refusals of what is not a log. */
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
    const parsed = parseSglangLog(log(P("TP0") + MEM));
    const [line] = parsed.sizingLines;
    expect(line!.kind).toBe("memory-calculation");
    expect(line!.label).toBe("DSV4 memory calculation");
    expect(line!.line).toBe(1);
    expect(line!.rank).toEqual({ tp: 0, dp: null, ep: null, pp: null, label: "TP0" });
    expect(line!.fields.available_bytes).toEqual({ text: "1.57", value: 1.57, decimals: 2, unit: "GB" });
    expect(line!.fields.bytes_per_full_token).toEqual({ text: "7705.45", value: 7705.45, decimals: 2, unit: "" });
    expect(line!.fields.full_token).toEqual({ text: "209280", value: 209280, decimals: 0, unit: "" });
  });

  it("keeps the earliest spelling `DSv4 memory calculation` (no c128_state_fixed) as the label", () => {
    const old = "DSv4 memory calculation: bytes_per_full_token=15955.85, available_bytes=19.58 GB, full_token=1317632";
    const [line] = parseSglangLog(log(P("TP0") + old)).sizingLines;
    expect(line!.label).toBe("DSv4 memory calculation");
    expect(Object.keys(line!.fields)).toEqual(["bytes_per_full_token", "available_bytes", "full_token"]);
  });

  it("reads pool sizes, the pool's init line (blank-separated) and the scheduler's max_total_num_tokens", () => {
    const parsed = parseSglangLog(log(P("TP0") + POOLS, P("TP0") + INIT, P("TP0") + MAXTOK));
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
    const parsed = parseSglangLog(log(P("TP0 EP0") + cap, P("TP0 EP0") + ratio, P("TP0 EP0") + unified));
    expect(parsed.sizingLines[0]!.fields.mode).toBe("cap");
    expect(parsed.sizingLines[0]!.fields["request_cap+headroom"]).toMatchObject({ value: 13312 });
    expect(parsed.sizingLines[1]!.fields.mode).toBe("ratio (explicit)");
    expect(parsed.sizingLines[2]!.fields.unified).toBe("False");
    expect(parsed.sizingLines[2]!.rank).toEqual({ tp: 0, dp: null, ep: 0, pp: null, label: "TP0 EP0" });
  });

  it("reads every rank of an interleaved multi-rank log, and repeated lines in order", () => {
    const resized = "DSV4 pool sizes: full=32768, swa=3200, c4=8192, c128=256, c4_state=200, c128_state=0";
    const parsed = parseSglangLog(
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
    const parsed = parseSglangLog(
      log(`Capturing batches (bs=4):   0%|   | 0/4 [00:00<?, ?it/s]${P("PP1 TP3")}${POOLS}`, `\x1b[32m${MEM}\x1b[0m`),
    );
    expect(parsed.sizingLines[0]!.rank).toEqual({ tp: 3, dp: null, ep: null, pp: 1, label: "PP1 TP3" });
    expect(parsed.sizingLines[1]!.rank).toBeNull();
  });

  it("does not take max_total_num_tokens inside another line for the scheduler's line", () => {
    const parsed = parseSglangLog(log(P("TP0") + POOLS, `${P("TP0")}Capped: max_total_num_tokens=1000 by the user`));
    expect(parsed.sizingLines.map((s) => s.kind)).toEqual(["pool-sizes"]);
  });
});

describe("parseSglangLog: server_args, environment, launch command", () => {
  it("reads the dict form: None, booleans, floats, nested dicts and lists, either quote", () => {
    const parsed = parseSglangLog(log(P("") + DICT_ARGS, P("TP0") + MEM));
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
    const parsed = parseSglangLog(log(P("") + REPR_ARGS, P("TP0") + MEM));
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

  it("accepts the same server_args on several lines, refuses two that differ", () => {
    expect(parseSglangLog(log(P("") + REPR_ARGS, P("") + REPR_ARGS, MEM)).serverArgsLine).toBe(1);
    const e = refusal(log(P("") + REPR_ARGS, P("") + REPR_ARGS.replace("tp_size=8", "tp_size=4"), MEM));
    expect(e.code).toBe("SGLANG_LOG");
    expect(e.params).toMatchObject({ line: 2, firstLine: 1 });
  });

  it("reads environment lines and the launch command (continued with \\) with its assignments", () => {
    const parsed = parseSglangLog(
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

describe("parseSglangLog: refusals", () => {
  it.each([
    ["empty", "", "is empty"],
    ["blank", "\n \n", "is empty"],
    ["binary", "abc\0def", "binary"],
    ["garbage", "lorem ipsum\nhello world\n{not a log}\n", "no DSV4 sizing line"],
    [
      "a log cut off before sizing",
      log(P("") + REPR_ARGS, `${P("TP0")}Load weight begin. avail mem=111.47 GB`),
      "no DSV4",
    ],
  ])("refuses %s", (_name, text, words) => {
    const e = refusal(text);
    expect(e.code).toBe("SGLANG_LOG");
    expect(e.rule).toContain(words);
  });

  it("refuses a server_args line cut off mid-way, naming the line", () => {
    const e = refusal(log(MEM, P("") + REPR_ARGS.slice(0, 150)));
    expect(e.field).toBe("log line 2");
    expect(e.params).toMatchObject({ line: 2, truncated: true });
    expect(e.rule).toContain("cut off");
  });

  it("refuses a dict server_args cut inside a string", () => {
    const e = refusal(log(P("") + DICT_ARGS.slice(0, 40), MEM));
    expect(e.params).toMatchObject({ line: 1, truncated: true });
  });

  it("refuses server_args that are not a Python literal, or with text after them", () => {
    expect(refusal(log(`${P("")}server_args={'a': os.getenv('X')}`, MEM)).params).toMatchObject({ truncated: false });
    expect(refusal(log(`${P("")}server_args={'a': 1} trailing`, MEM)).rule).toContain("after");
    expect(refusal(log(`${P("")}server_args=hello`, MEM)).rule).toContain("neither");
  });

  it.each([
    ["a sizing line cut off before its last field", MEM.slice(0, MEM.lastIndexOf(", full_token") + 2), "full_token"],
    ["a sizing line cut off mid-value", MEM.slice(0, -"=209280".length + 1), "no value"],
    ["a pool-sizes line missing a pool", POOLS.replace(", c128_state=0", ""), "c128_state"],
    ["a value that is not a number", POOLS.replace("swa=20864", "swa=lots"), "swa is not a number"],
    ["a unit SGLang does not print", MEM.replace("1.57 GB", "1.57 parsecs"), "unit"],
    ["a line cut inside its first key", MEM.slice(0, 36), "key=value"],
    ["an init line without fields", "Initialize DeepSeekV4TokenToKVPool with nothing", "key=value"],
    ["a key twice", POOLS.replace("c4=52320", "c4=1, c4=2"), "twice"],
  ])("refuses %s", (_name, line, words) => {
    const e = refusal(log("first line", P("TP0") + line));
    expect(e.code).toBe("SGLANG_LOG");
    expect(e.field).toBe("log line 2");
    expect(e.rule).toContain(words);
  });

  it("refuses a launch command with an unclosed quote", () => {
    const e = refusal(log("sglang serve --model-path 'deepseek-ai/DeepSeek-V4-Flash", MEM));
    expect(e.params).toMatchObject({ line: 1 });
    expect(e.rule).toContain("unclosed");
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
