/**
 * `dsv4-kv check`: will this DeepSeek-V4 server configuration corrupt KV, how much does every pool take, how
 * many tokens fit, and which setting is wrong. Exit 0 valid, 1 invalid, 2 unusable input.
 */
import { readFile } from "node:fs/promises";
import { closestMatch } from "@dsv4-kv/errors";
import {
  DEFAULT_MODEL,
  checkServerConfig,
  parseCustomModel,
  parseServerArgs,
  type BudgetInput,
  type ConfigNote,
  type ModelPreset,
} from "@dsv4-kv/server-config";
import { parse as parseYaml } from "yaml";
import { ALL_FLAGS, ENV_SWITCHES, SERVER_FLAGS } from "../check/flags.js";
import { formatReport, toJson } from "../check/report.js";
import { loadModel } from "../check/model-source.js";
import { InputError, UsageError } from "./args.js";
import { flagValueFromData, flagValueFromText, helpTable, parseFlags, refuseRest } from "./flags.js";
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
${helpTable(ALL_FLAGS, 40)}

Exit codes: 0 the configuration is valid, 1 it is not, 2 unusable input.
`;

const H200_GIB = 139;
const DEFAULT_TP_SIZE = 8;
const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);

type Value = string | boolean | number | number[];
type Values = Record<string, Value | undefined>;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, ALL_FLAGS);
  refuseRest(rest);
  if (values.help) {
    io.stdout.write(help);
    return 0;
  }
  return check(values, io);
}

/** An environment switch: a boolean word, or a value parsed like the flag it stands for. */
function envValue(envName: string, flag: string, raw: string): Value {
  const spec = ALL_FLAGS[flag]!;
  if (spec.type !== "bool") return flagValueFromText(envName, spec, raw);
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word) || FALSE_WORDS.has(word)) return TRUE_WORDS.has(word);
  throw new UsageError(envName, raw, `must be one of ${[...TRUE_WORDS, ...FALSE_WORDS].join(", ")}`);
}

async function check(flags: Values, io: CommandIO): Promise<number> {
  // Precedence: defaults < env < config file < flags.
  const merged: Values = {};
  for (const [envName, flag] of Object.entries(ENV_SWITCHES)) {
    const raw = io.env[envName];
    if (raw === undefined || raw === "") continue;
    merged[flag] = envValue(envName, flag, raw);
  }
  if (typeof flags.config === "string") Object.assign(merged, await readConfigFile(flags.config));
  for (const [name, value] of Object.entries(flags)) if (value !== undefined && name !== "config") merged[name] = value;

  // Model.
  let model: ModelPreset;
  if (typeof merged["model-config"] === "string") {
    model = await readModelFile(merged["model-config"]);
    if (merged.model !== undefined)
      throw new UsageError("--model", merged.model, "cannot be combined with --model-config: give a preset or a file");
  } else {
    const name = typeof merged.model === "string" ? merged.model : DEFAULT_MODEL;
    model = (await loadModel(name, "--model")).model;
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
  if (!parsed.ok) throw serverArgsError(parsed.issues);
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
          "--weights-gib",
          undefined,
          `is needed: the model config of ${model.name} has no checkpointGiB (or give --kv-budget-bytes)`,
        );
      weightsGiB = model.checkpointGiB / ranks;
      assumption = `${tpDefaulted ? "one rank of an 8×H200 tensor-parallel deployment (default): " : ""}each of the ${ranks} rank(s) (tp ${args.tpSize} × pp ${args.ppSize}) holds 1/${ranks} of the ${model.checkpointGiB.toFixed(2)} GiB checkpoint = ${weightsGiB.toFixed(2)} GiB of weights; KV is not sharded by TP (one KV head)`;
    }
    const gpuMemoryGiB = (merged["gpu-memory-gib"] as number | undefined) ?? H200_GIB;
    const runtimeGiB = (merged["runtime-gib"] as number | undefined) ?? 0;
    assumption += `; ${gpuMemoryGiB} GiB free before load${merged["gpu-memory-gib"] === undefined ? " (H200)" : ""}; ${runtimeGiB} GiB runtime overhead`;
    budget = { kind: "gpu", gpuMemoryGiB, weightsGiB, runtimeGiB, assumption };
  }
  // The flag table allows only these two.
  const sizing = (merged.sizing ?? "exact") as "exact" | "sglang-gen-b";

  const report = checkServerConfig(args, model, budget, {
    sizing,
    residencySteps: merged["residency-steps"] as number | undefined,
  });
  report.notes.unshift(...cliNotes.filter((note) => !report.notes.some((other) => other.field === note.field)));
  io.stdout.write(merged.json ? `${JSON.stringify(toJson(report), null, 2)}\n` : formatReport(report));
  if (!report.ok && !merged.json)
    io.stderr.write(
      `dsv4-kv check: the configuration is invalid (${report.errors.length} error${report.errors.length === 1 ? "" : "s"})\n`,
    );
  return report.ok ? 0 : 1;
}

const kebab = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * server-config's schema refused the arguments (the flag table above catches types and ranges first, so this is
 * rare). Its issues are shown as they come, the first one's field named as its flag.
 */
function issueText(issue: unknown): string {
  return typeof issue === "string" ? issue : String((issue as { message?: unknown } | null)?.message ?? issue);
}

function serverArgsError(issues: readonly unknown[]): UsageError {
  const first = issues[0] as { field?: unknown; path?: unknown; value?: unknown } | string | undefined;
  const text = issues.map(issueText);
  const field = typeof first === "object" && typeof first.field === "string" ? `--${kebab(first.field)}` : "";
  const value = typeof first === "object" ? first.value : undefined;
  return new UsageError(field, value, `server arguments refused: ${text.join("; ")}`, { issues: [...issues] });
}

async function readText(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    throw new InputError(flag, path, `cannot read the file (${code})`, { errno: code });
  }
}

/** A file's parse error, first line only (YAML's next lines quote the file). */
function parseFailure(flag: string, path: string, format: string, error: unknown): InputError {
  const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 200);
  return new InputError(flag, path, `is not valid ${format} (${reason})`);
}

async function readConfigFile(path: string): Promise<Values> {
  const text = await readText("--config", path);
  const isJson = /\.json$/i.test(path);
  let raw: unknown;
  try {
    raw = isJson ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw parseFailure("--config", path, isJson ? "JSON" : "YAML", error);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new InputError("--config", path, "must hold an object of settings");
  const out: Values = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>))
    out[configKey(path, key, value)] = configValue(path, key, value);
  return out;
}

/** A config key in any spelling (`page-size`, `page_size`, `pageSize`) as its flag name. */
function configKey(path: string, key: string, value: unknown): string {
  const name = key
    .replace(/^-+/, "")
    .replace(/_/g, "-")
    .replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  if (name === "config" || name === "help")
    throw new InputError(key, value, `cannot be set in a config file (${path})`, { file: path });
  if (!Object.hasOwn(ALL_FLAGS, name)) {
    const suggestion = closestMatch(
      name,
      Object.keys(ALL_FLAGS).filter((k) => k !== "config" && k !== "help"),
    );
    throw new InputError(key, value, `is not a setting of dsv4-kv check (in ${path})`, {
      file: path,
      ...(suggestion === null ? {} : { suggestion }),
    });
  }
  return name;
}

/** A config value is typed by its file (YAML/JSON): checked like the flag, but never coerced from a string. */
function configValue(path: string, key: string, value: unknown): Value {
  const spec = ALL_FLAGS[configKey(path, key, value)]!;
  try {
    // YAML `null` for a string setting means "unset upstream", which the schema spells "null".
    return flagValueFromData(key, spec, spec.type === "string" && value === null ? "null" : value)!;
  } catch (error) {
    if (!UsageError.isInstance(error)) throw error;
    throw new InputError(error.field, error.value, `${error.rule} (in ${path})`, { ...error.params, file: path });
  }
}

async function readModelFile(path: string): Promise<ModelPreset> {
  const text = await readText("--model-config", path);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw parseFailure("--model-config", path, "JSON", error);
  }
  const result = parseCustomModel(raw);
  if (!result.ok) {
    throw new InputError(
      "--model-config",
      path,
      `is not a model config: ${result.issues.map(issueText).join("; ").slice(0, 500)}`,
      {
        issues: [...result.issues],
      },
    );
  }
  return result.model;
}
