/**
 * `dsv4-kv check`: will this DeepSeek-V4 server configuration corrupt KV, how much does every pool take, how
 * many tokens fit, and which setting is wrong. Exit 0 valid, 1 invalid, 2 unusable input.
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import {
  DEFAULT_MODEL,
  MODEL_PRESETS,
  checkServerConfig,
  parseCustomModel,
  parseServerArgs,
  type BudgetInput,
  type ConfigNote,
  type ModelPreset,
} from "@dsv4-kv/server-config";
import { parse as parseYaml } from "yaml";
import { ALL_FLAGS, ENV_SWITCHES, SERVER_FLAGS, helpTable } from "../check/flags.js";
import { formatReport, toJson } from "../check/report.js";
import { UsageError } from "./args.js";
import type { CommandIO } from "./registry.js";

export const help = `Usage: dsv4-kv check [--model PRESET | --model-config FILE] [--config FILE] [server flags] [--json]

Checks a DeepSeek-V4 SGLang server configuration before it starts: the resolved arguments (what was defaulted
or corrected, and why), the compress-state rings and the draft tokens they serve, a residency check of the
resolved rings (the planner's ring simulator), every KV pool with shape and bytes, the capacity in tokens and
requests, the unused bytes, and every error and warning of the start-up rules (V-A*, V-S*, V-D*, V-M*, V-P*,
V-K*), all at once.

With no flags: DeepSeek-V4-Flash, EAGLE 3 steps, top-k 1, 4 draft tokens, on one rank of an 8×H200
tensor-parallel deployment (139 GiB per GPU, each rank loads 1/8 of the checkpoint's weights),
--mem-fraction-static 0.85. The whole checkpoint on one H200 (--tp-size 1) does not fit.

Budget: --kv-budget-bytes N, or --gpu-memory-gib/--weights-gib/--runtime-gib with --mem-fraction-static.
Environment switches may also come from SGLANG_OPT_USE_ONLINE_COMPRESS, SGLANG_EXPERIMENTAL_ONLINE_C128_MTP
and SGLANG_DSV4_COMPRESS_STATE_DTYPE (flags and --config win).

Options:
${helpTable()}

Exit codes: 0 the configuration is valid, 1 it is not, 2 unusable input.
`;

const H200_GIB = 139;
const DEFAULT_TP_SIZE = 8;
const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);

type Values = Record<string, string | boolean | number | number[] | undefined>;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  let values: Values;
  try {
    const options = Object.fromEntries(
      Object.entries(ALL_FLAGS).map(([name, spec]) => [
        name,
        { type: spec.kind === "bool" ? ("boolean" as const) : ("string" as const) },
      ]),
    );
    const parsed = parseArgs({ args: argv, options, allowPositionals: false, strict: true });
    values = parsed.values as Values;
  } catch (error) {
    io.stderr.write(
      `dsv4-kv check: ${error instanceof Error ? error.message : String(error)}\n(see dsv4-kv check --help)\n`,
    );
    return 2;
  }
  if (values.help) {
    io.stdout.write(help);
    return 0;
  }
  try {
    return await check(values, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`dsv4-kv check: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

async function check(flags: Values, io: CommandIO): Promise<number> {
  // Precedence: defaults < env < config file < flags.
  const merged: Values = {};
  for (const [envName, flag] of Object.entries(ENV_SWITCHES)) {
    const raw = io.env[envName];
    if (raw === undefined || raw === "") continue;
    merged[flag] = ALL_FLAGS[flag]!.kind === "bool" ? TRUE_WORDS.has(raw.toLowerCase()) : raw;
  }
  if (typeof flags.config === "string") Object.assign(merged, await readConfigFile(flags.config));
  for (const [name, raw] of Object.entries(flags))
    if (raw !== undefined && name !== "config") merged[name] = convert(name, raw, "--" + name);

  // Model.
  let model: ModelPreset;
  if (typeof merged["model-config"] === "string") {
    model = await readModelFile(merged["model-config"]);
    if (merged.model !== undefined)
      throw new UsageError("--model and --model-config are mutually exclusive: give a preset or a file");
  } else {
    const name = typeof merged.model === "string" ? merged.model : DEFAULT_MODEL;
    const preset = MODEL_PRESETS[name];
    if (!preset)
      throw new UsageError(
        `--model = ${JSON.stringify(name)}: unknown preset; use one of ${Object.keys(MODEL_PRESETS).join(", ")} or --model-config FILE`,
      );
    model = preset;
  }

  // Default run: EAGLE 3 steps, top-k 1, 4 draft tokens (steps follow the draft count when only that is given).
  const cliNotes: ConfigNote[] = [];
  const applyDefault = (flag: string, value: number | string, reason: string) => {
    if (merged[flag] !== undefined) return;
    merged[flag] = value;
    cliNotes.push({
      field: flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
      kind: "defaulted",
      from: null,
      to: value,
      reason,
    });
  };
  const algorithm = merged["speculative-algorithm"];
  if (algorithm === undefined) {
    applyDefault("speculative-algorithm", "EAGLE", "check's default run (EAGLE 3 steps, top-k 1, 4 draft tokens)");
    applyDefault("speculative-eagle-topk", 1, "check's default run; DSV4 requires top-k 1");
    if (merged["speculative-num-steps"] === undefined && merged["speculative-num-draft-tokens"] === undefined) {
      applyDefault("speculative-num-steps", 3, "check's default run");
      applyDefault("speculative-num-draft-tokens", 4, "check's default run (steps + 1)");
    }
  } else if (typeof algorithm === "string" && ["none", "null", ""].includes(algorithm.toLowerCase())) {
    delete merged["speculative-algorithm"];
  } else if (algorithm === "EAGLE") {
    applyDefault("speculative-eagle-topk", 1, "DSV4 requires EAGLE top-k 1");
    if (merged["speculative-num-steps"] === undefined && merged["speculative-num-draft-tokens"] === undefined) {
      // Upstream auto-chooses steps when none is given (model-dependent, not modelled): check assumes 3 / 4.
      applyDefault("speculative-num-steps", 3, "upstream auto-chooses (model-dependent); check assumes 3");
      applyDefault("speculative-num-draft-tokens", 4, "steps + 1");
    }
  }
  const tpDefaulted = merged["tp-size"] === undefined;
  applyDefault("tp-size", DEFAULT_TP_SIZE, "check's default: one rank of an 8×H200 tensor-parallel deployment");

  const serverRaw: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(merged))
    if (name in SERVER_FLAGS && value !== undefined) serverRaw[name] = value;
  delete serverRaw.model;
  const parsed = parseServerArgs({ ...serverRaw, model: model.name });
  if (!parsed.ok) throw new UsageError(parsed.issues.join("\n"));
  const args = parsed.args;

  // Budget.
  let budget: BudgetInput;
  if (merged["kv-budget-bytes"] !== undefined) {
    budget = { kind: "bytes", kvBudgetBytes: merged["kv-budget-bytes"] as number };
  } else {
    const ranks = args.tpSize * args.ppSize;
    let weightsGiB = merged["weights-gib"] as number | undefined;
    let assumption: string;
    if (weightsGiB !== undefined) assumption = `each rank loads ${weightsGiB} GiB of weights (--weights-gib)`;
    else {
      if (!Number.isFinite(model.checkpointGiB))
        throw new UsageError(
          `the model config of ${model.name} has no checkpointGiB: give --weights-gib or --kv-budget-bytes`,
        );
      weightsGiB = model.checkpointGiB / ranks;
      assumption = `${tpDefaulted ? "one rank of an 8×H200 tensor-parallel deployment (default): " : ""}each of the ${ranks} rank(s) (tp ${args.tpSize} × pp ${args.ppSize}) holds 1/${ranks} of the ${model.checkpointGiB.toFixed(2)} GiB checkpoint = ${weightsGiB.toFixed(2)} GiB of weights; KV is not sharded by TP (one KV head)`;
    }
    const gpuMemoryGiB = (merged["gpu-memory-gib"] as number | undefined) ?? H200_GIB;
    const runtimeGiB = (merged["runtime-gib"] as number | undefined) ?? 0;
    assumption += `; ${gpuMemoryGiB} GiB free before load${merged["gpu-memory-gib"] === undefined ? " (H200)" : ""}; ${runtimeGiB} GiB runtime overhead`;
    budget = { kind: "gpu", gpuMemoryGiB, weightsGiB, runtimeGiB, assumption };
  }
  const sizing = merged.sizing ?? "exact";
  if (sizing !== "exact" && sizing !== "sglang-gen-b")
    throw new UsageError(`--sizing = ${JSON.stringify(sizing)}: must be exact or sglang-gen-b`);

  const report = checkServerConfig(args, model, budget, {
    sizing,
    residencySteps: merged["residency-steps"] as number | undefined,
  });
  report.notes.unshift(...cliNotes.filter((note) => !report.notes.some((other) => other.field === note.field)));
  io.stdout.write(merged.json ? JSON.stringify(toJson(report), null, 2) + "\n" : formatReport(report));
  if (!report.ok && !merged.json)
    io.stderr.write(
      `dsv4-kv check: the configuration is invalid (${report.errors.length} error${report.errors.length === 1 ? "" : "s"})\n`,
    );
  return report.ok ? 0 : 1;
}

/** Converts a flag or config value to its kind; `where` names it in messages. */
function convert(name: string, raw: unknown, where: string): string | boolean | number | number[] {
  const spec = ALL_FLAGS[name];
  if (!spec) throw new UsageError(`${where}: unknown setting`);
  const fail = (rule: string) => new UsageError(`${where} = ${JSON.stringify(raw)}: ${rule}`);
  switch (spec.kind) {
    case "bool":
      if (typeof raw === "boolean") return raw;
      if (typeof raw === "string" && ["true", "false"].includes(raw)) return raw === "true";
      throw fail("must be true or false");
    case "string":
      if (typeof raw === "string") return raw;
      if (raw === null) return "null";
      throw fail("must be a string");
    case "int": {
      const v =
        typeof raw === "number"
          ? raw
          : typeof raw === "string" && /^-?\d+$/.test(raw.trim())
            ? Number(raw)
            : Number.NaN;
      if (!Number.isSafeInteger(v)) throw fail("must be an integer");
      return v;
    }
    case "float": {
      const v = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
      if (!Number.isFinite(v)) throw fail("must be a number");
      return v;
    }
    case "intList": {
      const items = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : null;
      if (!items || items.length === 0) throw fail("must be a comma-separated list of integers");
      return items.map((item) => {
        const v = typeof item === "number" ? item : Number(String(item).trim());
        if (!Number.isSafeInteger(v)) throw fail("must be a comma-separated list of integers");
        return v;
      });
    }
  }
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`${what} ${path}: cannot read (${error instanceof Error ? error.message : String(error)})`);
  }
}

async function readConfigFile(path: string): Promise<Values> {
  const text = await readText(path, "--config");
  let raw: unknown;
  try {
    raw = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new UsageError(
      `--config ${path}: not valid ${/\.json$/i.test(path) ? "JSON" : "YAML"} (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`,
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new UsageError(`--config ${path}: must hold an object of settings`);
  const out: Values = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const name = key
      .replace(/^-+/, "")
      .replace(/_/g, "-")
      .replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
    if (name === "config" || name === "help")
      throw new UsageError(`--config ${path}: key ${JSON.stringify(key)} is not allowed in a config file`);
    if (!(name in ALL_FLAGS))
      throw new UsageError(
        `--config ${path}: unknown key ${JSON.stringify(key)} (keys are the check flags, e.g. speculative-num-draft-tokens)`,
      );
    out[name] = convert(name, value, `--config ${path}: ${key}`);
  }
  return out;
}

async function readModelFile(path: string): Promise<ModelPreset> {
  const text = await readText(path, "--model-config");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `--model-config ${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const result = parseCustomModel(raw);
  if (!result.ok) throw new UsageError(`--model-config ${path}:\n  ${result.issues.join("\n  ")}`);
  return result.model;
}
