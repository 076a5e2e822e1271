/**
 * `dsv4-kv check --engine vllm`: vLLM flags or a pasted `vllm serve` command in, the report of vLLM's KV cache for
 * DeepSeek-V4 out (text or --json). Exit 0 valid, 1 a vLLM rule refuses, 2 unusable input.
 */
import {
  CHECK_REPORT_SCHEMA_VERSION,
  DEFAULT_VLLM_VERSION,
  type ModelPreset,
  ServerConfigError,
  VLLM_ENV_SWITCHES,
  VLLM_SERVER_ARGS,
  type VllmArgField,
  type VllmCheckReportJson,
  checkVllmDeployment,
  vllmReportJson,
} from "@dsv4-kv/server-config";
import { DEFAULT_MODEL } from "@dsv4-kv/server-config/internal";
import { paintFor } from "../../colour.js";
import { UsageError } from "../../commands/args.js";
import { type CommandSpec, renderHelp } from "../../commands/help.js";
import type { CommandIO } from "../../commands/registry.js";
import { loadModel, readModelFile } from "../model-source.js";
import { VLLM_ALL_FLAGS } from "./flags.js";
import { type VllmParsed, parseVllmWords, readVllmEnv, splitVllmLaunch } from "./parse.js";
import { formatVllmReport } from "./report.js";

export const vllmSpec: CommandSpec = {
  usage: [
    "--engine vllm [--model MODEL | --model-config FILE] [vLLM flags] [--vllm-version V] [--json]",
    "--engine vllm [dsv4-kv options] -- [NAME=value …] vllm serve MODEL [vLLM flags]",
    "--engine vllm --against-log FILE [--model MODEL] [vLLM flags] [--vllm-version V] [--json]",
  ],
  description: `Checks a DeepSeek-V4 vLLM server configuration before it starts, per rank (the latent KV head is replicated
on every tensor-parallel rank): vLLM's arguments resolved (what vLLM picks when unset, and why), the layer specs,
the KV cache groups with their page sizes, the page stride of the one block pool, the blocks one request of
max_model_len takes, the budget, the block count, vLLM's start-up check, and the two figures vLLM prints ("GPU KV
cache size: N tokens", "Maximum concurrency for L tokens per request: Cx") as vLLM computes and rounds them, in
the layout of --vllm-version. Then every VL-* rule: vLLM's own refusals (each names the vLLM code that enforces
it) and the settings vLLM accepts that waste or endanger the cache, with their cost and fix.

Flags are vLLM's, as vLLM's parser takes them: -tp/--tensor-parallel-size, _ or - in names, an unambiguous
prefix (--kv-cache-memory), --no-NAME for switches, JSON arguments whole or by key
(--speculative-config.method mtp --speculative-config.num_speculative_tokens 3), sizes with a k suffix (128k).
A pasted \`vllm serve MODEL …\` after -- may start with NAME=value assignments (VLLM_USE_V2_MODEL_RUNNER and
VLLM_ALLOW_LONG_MAX_MODEL_LEN are read; the rest are listed). Flags that do not change the KV cache are listed as ignored; one that may change it and
is not modelled is listed as such; an unknown flag is refused with a suggestion.

Budget: --kv-cache-memory-bytes (vLLM's own, used as given), --kv-budget-bytes (a logged "Available KV cache
memory"), or the device's total memory (--gpu-memory-gib, default an H200) × --gpu-memory-utilization less the
weights (--weights-gib, default the checkpoint over TP × PP) and the profile run's other memory (--runtime-gib,
default 0: an upper bound on the cache).

--against-log FILE (or - for standard input) reads a vLLM start-up log of DeepSeek-V4 as people paste it (vLLM's
process prefixes, journald or docker prefixes, prose and tables, wrapped lines): its non-default args or vllm
serve command, the version, and every KV line (available memory, GPU KV cache size, maximum concurrency, blocks,
the start-up refusal, block size, layout, indexer). The logged budget is the anchor; every figure sized from it is
recomputed and shown equal, within the print's rounding, or different with a named cause (an unstated
max_num_batched_tokens, async scheduling, FP4 indexer or layer-tuple stride that reproduces it; a layout, draft or
vLLM version not modelled). vLLM flags given here win over the log's. The figures are sized as the vLLM version
the log printed (--vllm-version overrides it, with a warning when the two size differently; a log without a
version gets the default). Exit 0 when no figure differs, 1 when one differs or is not computed, 2 when the file
holds no vLLM DeepSeek-V4 material.`,
  flags: VLLM_ALL_FLAGS,
  exitCodes: [
    [0, "vLLM starts with this configuration (warnings may remain)"],
    [1, "vLLM refuses it (a VL-R* rule), or it fits nothing"],
    [2, "unusable input"],
  ],
};

export const vllmHelp: string = renderHelp(["check"], vllmSpec);

/** Words before `--` and after it: the launch command's first, then the options' (the command line wins). */
function parseInput(options: readonly string[], rest: readonly string[] | null, env: CommandIO["env"]): VllmParsed {
  const parsed: VllmParsed = { args: {}, options: {}, ignored: [], spelling: {} };
  const processEnv = Object.fromEntries(
    Object.keys(VLLM_ENV_SWITCHES).flatMap((name) => (env[name] ? [[name, env[name]!]] : [])),
  );
  readVllmEnv(processEnv, parsed);
  if (rest !== null) {
    const launch = splitVllmLaunch(rest);
    if (launch) readVllmEnv(launch.env, parsed);
    parseVllmWords(launch ? launch.serverWords : rest, false, parsed);
  }
  return parseVllmWords(options, true, parsed);
}

async function modelOf(p: VllmParsed, io: CommandIO): Promise<{ model: ModelPreset; resolvedAs: string }> {
  const file = p.options["model-config"];
  if (typeof file === "string") {
    if (p.args.model !== undefined)
      throw new UsageError("--model-config", file, "cannot be combined with a model: give a preset or a file");
    return { model: await readModelFile(file, io.stdin), resolvedAs: `${file} (--model-config)` };
  }
  const name = typeof p.args.model === "string" ? p.args.model : DEFAULT_MODEL;
  return loadModel(name, p.spelling.model ?? "--model");
}

/** A library refusal named by the flag as typed (`speculativeConfig.method` → `--speculative-config.method`). */
function asUsage(error: unknown, p: VllmParsed): never {
  if (!ServerConfigError.isInstance(error)) throw error;
  const [field, ...keys] = error.field.split(".");
  const entry = VLLM_SERVER_ARGS[field as VllmArgField];
  const typed =
    p.spelling[field as VllmArgField] ?? entry?.spellings[0] ?? (field === "vllmVersion" ? "--vllm-version" : field!);
  const flag = [typed.replace(/\.….*$/, ""), ...keys].join(".");
  throw new UsageError(flag, error.value, error.rule, error.params);
}

export async function runVllmCheck(options: readonly string[], rest: readonly string[] | null, io: CommandIO) {
  const p = parseInput(options, rest, io.env);
  if (p.options.help === true) {
    io.stdout.write(vllmHelp);
    return 0;
  }
  const { model, resolvedAs } = await modelOf(p, io);
  const o = p.options;
  const num = (name: string) => (typeof o[name] === "number" ? (o[name] as number) : undefined);
  let report: ReturnType<typeof checkVllmDeployment>;
  try {
    report = checkVllmDeployment({
      model,
      given: p.args,
      vllmVersion: typeof o["vllm-version"] === "string" ? o["vllm-version"] : DEFAULT_VLLM_VERSION,
      budget: {
        kvBudgetBytes: num("kv-budget-bytes"),
        gpuMemoryGiB: num("gpu-memory-gib"),
        weightsGiB: num("weights-gib"),
        runtimeGiB: num("runtime-gib"),
      },
    });
  } catch (error) {
    asUsage(error, p);
  }
  const ignored = p.ignored.map((i) => ({ name: i.name, value: i.value, effect: i.effect }));
  const part = vllmReportJson(report, {
    modelName: model.name,
    modelResolvedAs: resolvedAs,
    ignored,
    typed: p.spelling,
  });
  if (o.json === true) {
    const json: VllmCheckReportJson = {
      schemaVersion: CHECK_REPORT_SCHEMA_VERSION,
      engine: "vllm",
      ok: report.ok,
      vllm: part,
    };
    io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    io.stdout.write(formatVllmReport(part, report.ok, paintFor(io.stdout, io.env)));
    if (!report.ok) {
      const count = report.errors.length;
      const bad = paintFor(io.stderr, io.env).bad;
      io.stderr.write(
        `${bad(`dsv4-kv check --engine vllm: vLLM refuses this configuration (${count} error${count === 1 ? "" : "s"})`)}\n`,
      );
    }
  }
  return report.ok ? 0 : 1;
}
