/**
 * The Node-free part of `dsv4-kv check`: from the merged flag values and the model to the report (defaults
 * applied, server arguments parsed, budget built, `checkServerConfig` run, the CLI's notes added). The command
 * and the HTML report's page both call it, so the page's verdict is the CLI's by construction. Files, logs,
 * the environment and output stay in the command (commands/check.ts).
 */
import {
  type BudgetInput,
  type CheckReport,
  type ConfigNote,
  DEFAULT_DEPLOYMENT,
  type DeploymentDefault,
  type ModelPreset,
  type OverriddenSetting,
  type ServerConfigError,
  checkServerConfig,
  flagName,
  parseServerArgs,
} from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";
import { flagValueFromText } from "../commands/flags.js";
import { ALL_FLAGS, SERVER_FLAGS } from "./flags.js";
import type { IgnoredSetting, Value, Values } from "./launch.js";

export interface CheckPipelineInput {
  /** Flag values by the CLI's flag names, merged (env < log < config file < flags), before defaults. */
  values: Values;
  model: ModelPreset;
  /** How the model was resolved (shown as `model.resolvedAs`). */
  modelResolvedAs: string;
  /** Settings accepted and not read. */
  ignored: readonly IgnoredSetting[];
  /** Settings given more than once that SGLang's loader accepts, and which one won. */
  overridden?: readonly OverriddenSetting[];
}

export interface CheckPipelineResult {
  report: CheckReport;
  /** The values with check's defaults applied (what was checked). */
  values: Values;
  /** The KV budget the report was sized for. */
  budget: BudgetInput;
}

const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);

/** A switch given as a word (an environment variable, a URL fragment): 1/true/yes/on or 0/false/no/off. */
export function switchFromText(name: string, raw: string): boolean {
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word) || FALSE_WORDS.has(word)) return TRUE_WORDS.has(word);
  throw new UsageError(name, raw, `must be one of ${[...TRUE_WORDS, ...FALSE_WORDS].join(", ")}`);
}

/** Check flag `flag`'s value given as text under `name`: a switch as a word, the rest as on the command line. */
export function checkValueFromText(name: string, flag: string, raw: string): Value {
  const spec = ALL_FLAGS[flag]!;
  return spec.type === "bool" ? switchFromText(name, raw) : flagValueFromText(name, spec, raw);
}

export function runCheckPipeline(input: CheckPipelineInput): CheckPipelineResult {
  const merged: Values = { ...input.values };
  const { model } = input;
  const cliNotes = applyDefaults(merged);
  const tpDefaulted = input.values["tp-size"] === undefined;

  const serverRaw: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(merged))
    if (name in SERVER_FLAGS && value !== undefined) serverRaw[name] = value;
  delete serverRaw.model;
  const parsed = parseServerArgs({ ...serverRaw, model: model.name }, { fieldName: flagName });
  if (!parsed.ok) throw serverArgsError(parsed.errors);
  const args = parsed.args;

  const budget = budgetOf(merged, model, args, tpDefaulted);
  // The flag table allows only these two.
  const sizing = (merged.sizing ?? "exact") as "exact" | "sglang-gen-b";

  const report = checkServerConfig(args, model, budget, {
    modelResolvedAs: input.modelResolvedAs,
    ignored: [...input.ignored],
    overridden: [...(input.overridden ?? [])],
    sizing,
    residencySteps: merged["residency-steps"] as number | undefined,
  });
  report.notes.unshift(...cliNotes.filter((note) => !report.notes.some((other) => other.field === note.field)));
  return { report, values: merged, budget };
}

/** Check's default run: EAGLE 3 steps, top-k 1, 4 draft tokens, tp 8 (a server-config deployment preset). */
function applyDefaults(merged: Values): ConfigNote[] {
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
  const deployment = DEFAULT_DEPLOYMENT;
  // Steps follow the draft count when only that is given.
  const applyAll = (defaults: readonly DeploymentDefault[]) => {
    const stepsOpen =
      merged["speculative-num-steps"] === undefined && merged["speculative-num-draft-tokens"] === undefined;
    for (const d of defaults) {
      const isStep = d.flag === "speculative-num-steps" || d.flag === "speculative-num-draft-tokens";
      if (!isStep || stepsOpen) applyDefault(d.flag, d.value, d.reason);
    }
  };
  const algorithm = merged["speculative-algorithm"];
  if (algorithm === undefined) applyAll(deployment.speculative);
  else if (typeof algorithm === "string" && ["none", "null", ""].includes(algorithm.toLowerCase()))
    delete merged["speculative-algorithm"];
  else if (algorithm === "EAGLE") applyAll(deployment.eagleSteps);
  applyDefault(deployment.tpSize.flag, deployment.tpSize.value, deployment.tpSize.reason);
  return cliNotes;
}

/** The KV budget: --kv-budget-bytes, or device memory less this rank's share of the weights. */
function budgetOf(
  merged: Values,
  model: ModelPreset,
  args: { tpSize: number; ppSize: number },
  tpDefaulted: boolean,
): BudgetInput {
  if (merged["kv-budget-bytes"] !== undefined)
    return { kind: "bytes", kvBudgetBytes: merged["kv-budget-bytes"] as number };
  const deployment = DEFAULT_DEPLOYMENT;
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
    assumption =
      `${tpDefaulted ? `${deployment.description}: ` : ""}each of the ${ranks} rank(s) (tp ${args.tpSize} × pp ` +
      `${args.ppSize}) holds 1/${ranks} of the ${model.checkpointGiB.toFixed(2)} GiB checkpoint = ` +
      `${weightsGiB.toFixed(2)} GiB of weights; KV is not sharded by TP (one KV head)`;
  }
  const gpuMemoryGiB = (merged["gpu-memory-gib"] as number | undefined) ?? deployment.gpuMemoryGiB;
  const runtimeGiB = (merged["runtime-gib"] as number | undefined) ?? 0;
  const gpuName = merged["gpu-memory-gib"] === undefined ? ` (${deployment.gpuName})` : "";
  assumption += `; ${gpuMemoryGiB} GiB free before load${gpuName}; ${runtimeGiB} GiB runtime overhead`;
  return { kind: "gpu", gpuMemoryGiB, weightsGiB, runtimeGiB, assumption };
}

/**
 * server-config's schema refused the arguments (the flag table catches types and ranges first, so this is
 * rare: an empty candidate list from a config file). The first refusal names the flag and its value; every
 * refusal's text is in the rule.
 */
function serverArgsError(errors: readonly ServerConfigError[]): UsageError {
  const [first, ...others] = errors;
  const rule = [first!.rule, ...others.map((e) => e.message)].join("; ");
  return new UsageError(first!.field, first!.value, `server arguments refused: ${rule}`, {
    issues: errors.map((e) => e.message),
  });
}
