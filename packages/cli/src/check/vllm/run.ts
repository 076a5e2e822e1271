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
import type { CommandIO } from "../../commands/registry.js";
import { loadModel, readModelFile } from "../model-source.js";
import { vllmHelp } from "./help.js";
import { type VllmParsed, parseVllmWords, readVllmEnv, splitVllmLaunch } from "./parse.js";
import { formatVllmReport } from "./report.js";

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
