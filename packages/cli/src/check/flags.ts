/**
 * The flags of `dsv4-kv check`: the server arguments (derived from server-config's flag table: names, types,
 * ranges, help), then check's own options (the budget, the inputs, the output). This drives the command-line
 * parser, the config-file keys, every value's check and the help text. Values outside a range are refused here,
 * by the flag's name, before server-config sees them.
 */
import {
  ENV_SWITCHES,
  SERVER_ARG_HELP_ORDER,
  SGLANG_SERVER_ARGS,
  type ServerFlag,
  serverFlagName,
} from "@dsv4-kv/server-config";
import { VLLM_DEFAULTS } from "@dsv4-kv/server-config/internal";
import { type FlagSpec, type FlagTable, choice } from "../commands/flags.js";

const INT32_MAX = 2 ** 31 - 1;
/** Any GiB figure above a PiB is a typo. */
const GIB_MAX = 2 ** 20;

const str = (help: string, arg = "S"): FlagSpec => ({ type: "string", help, arg });
const bool = (help: string): FlagSpec => ({ type: "bool", help });
const int = (min: number, max: number, help: string): FlagSpec => ({ type: "int", min, max, help });
const num = (min: number, max: number, help: string, minExclusive = false): FlagSpec => ({
  type: "number",
  min,
  max,
  minExclusive,
  help,
});

/** A server argument's flag: its name, type, range and help, all from server-config's flag table. */
function serverFlagSpec(flag: ServerFlag): FlagSpec {
  const { value, help, arg } = flag;
  switch (value.type) {
    case "bool":
      return bool(help);
    case "string":
      return value.choices ? { type: "string", choices: value.choices, help } : str(help, arg);
    case "int":
      return int(value.min, value.max, help);
    case "number":
      return num(value.min, value.max, help, value.minExclusive);
    case "intList":
      return { type: "intList", min: value.min, max: value.max, help };
  }
}

/** The server arguments' flags (`--page-size` …): server-config's table, field names in kebab-case, in help order. */
export const SERVER_FLAGS: FlagTable = Object.fromEntries(
  SERVER_ARG_HELP_ORDER.map((field) => [serverFlagName(field), serverFlagSpec(SGLANG_SERVER_ARGS[field])]),
);

export const CLI_FLAGS: FlagTable = {
  "model-config": str("custom model JSON (preset fields, or HF config.json keys)", "FILE"),
  config: str("server arguments as a JSON or YAML object (flags win)", "FILE"),
  "against-log": str(
    "an SGLang server's start-up log (cut, wrapped, with prose, several servers): its server_args and SGLANG_* " +
      "environment supply the arguments (--config and flags win), and every DSV4 sizing figure it logged is " +
      "compared with ours, each difference with its cause (exit 1 on a difference)",
    "FILE",
  ),
  section: int(
    1,
    INT32_MAX,
    "with --against-log: check and reconcile only section N of the log (one per server start; default: all)",
  ),
  "kv-budget-bytes": int(1, Number.MAX_SAFE_INTEGER, "KV budget per worker in bytes (instead of the GPU budget)"),
  "gpu-memory-gib": num(0, GIB_MAX, "device memory free before load (default 139 = H200)", true),
  "weights-gib": num(0, GIB_MAX, "weights loaded per rank (default: checkpoint / (tp·pp))"),
  "runtime-gib": num(0, GIB_MAX, "other memory taken before the KV budget (default 0)"),
  sizing: choice(["exact", "sglang-gen-b"], "exact (default) or SGLang's Gen B arithmetic"),
  "residency-steps": int(0, 10_000_000, "batches per residency run (default 300)"),
  "compare-engines": bool(
    "also show the deployment on vLLM: tokens, concurrency and bytes per token of each cache kind on both engines, " +
      "and every difference as a named cause with its size (docs/reference/engines-compared.md)",
  ),
  "compare-gpu-memory-utilization": num(
    0,
    1,
    "with --compare-engines: vLLM's --gpu-memory-utilization on the same device and weights (default: vLLM gets " +
      "SGLang's KV budget in bytes)",
    true,
  ),
  "compare-vllm-overhead-gib": num(
    0,
    GIB_MAX,
    "with --compare-gpu-memory-utilization: activations, CUDA graphs and non-torch memory vLLM takes (default 0)",
  ),
  "compare-max-num-batched-tokens": int(
    1,
    INT32_MAX,
    `with --compare-engines: vLLM's --max-num-batched-tokens (default ${VLLM_DEFAULTS.maxNumBatchedTokens})`,
  ),
  json: bool("print the report as one JSON object"),
  html: str(
    "also write the report as one self-contained HTML page: charts of memory, capacity and the ring, and controls " +
      "that rerun the check in the browser (no network needed)",
    "FILE",
  ),
  help: bool("show this help"),
};

export const ALL_FLAGS: FlagTable = { ...SERVER_FLAGS, ...CLI_FLAGS };

/** The engines `check` models; `--engine` is read before any other flag (commands/check.ts), so no table parses it. */
export const ENGINES = ["sglang", "vllm"] as const;
export type Engine = (typeof ENGINES)[number];

/** `--engine`, in both help texts: SGLang (the default) or vLLM, whose flags and report differ. */
export const ENGINE_FLAG = choice(
  ENGINES,
  "the serving engine whose configuration is checked: vllm takes vLLM's flags or a pasted vllm serve command and " +
    "reports vLLM's KV cache (its usage and flags: dsv4-kv check --engine vllm --help)",
  "sglang",
);

/** The Options of `check --help`: the table the SGLang path parses with, and `--engine` before the tool's own. */
export const CHECK_HELP_FLAGS: FlagTable = { ...SERVER_FLAGS, engine: ENGINE_FLAG, ...CLI_FLAGS };

/** Env variables the CLI maps to switches (lowest precedence: flags > config file > env > defaults). */
export { ENV_SWITCHES };
