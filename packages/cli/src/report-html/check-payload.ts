/**
 * What `check --html` puts in its page: the inputs the page recomputes from (the merged flag values by the CLI's
 * flag names, the model as resolved, the settings not read, the budget) and the CLI's own report JSON. Browser-safe:
 * the page imports the types and `modelFromPayload`.
 */
import {
  type BudgetInput,
  type CheckReportJson,
  type LogComparison,
  MODEL_PRESETS,
  type ModelPreset,
  type OverriddenSetting,
} from "@dsv4-kv/server-config";
import type { IgnoredSetting, Values } from "../check/launch.js";

/** The model as `check` resolved it: a preset by name, or the whole custom model (a file or a folder's config). */
export type PayloadModel =
  | { source: "preset"; name: string; resolvedAs: string }
  | {
      source: "custom";
      /** The model, with a non-finite `checkpointGiB` (none given) as null: JSON has no NaN. */
      model: Omit<ModelPreset, "checkpointGiB"> & { checkpointGiB: number | null };
      resolvedAs: string;
    };

export interface CheckInputs {
  /** Flag values by the CLI's flag names (env < log < config file < flags), before check's defaults. */
  values: Values;
  model: PayloadModel;
  ignored: IgnoredSetting[];
  /** Settings given more than once and which one won (absent when none, so older pages read the same). */
  overridden?: OverriddenSetting[];
  /** The KV budget the CLI sized (from the values; kept for the reader of the payload). */
  budget: BudgetInput;
}

export interface CheckPayload {
  kind: "check";
  inputs: CheckInputs;
  /** `dsv4-kv check --json`'s object (with `logComparison` under --against-log). */
  report: Omit<CheckReportJson, "logComparison" | "sections"> & {
    logComparison?: LogComparison;
    /** Every section of the log, each checked and reconciled (the page shows them and the primary one). */
    sections?: Array<{ section: number; ok: boolean; report: unknown; logComparison: LogComparison }>;
  };
}

/** Flags that name files or outputs: the page has no files, and the values they produced are already merged. */
const NOT_RECOMPUTED = new Set(["config", "against-log", "section", "model-config", "json", "html", "help"]);

export interface CheckPayloadSource {
  values: Values;
  model: ModelPreset;
  modelResolvedAs: string;
  ignored: readonly IgnoredSetting[];
  overridden?: readonly OverriddenSetting[];
  budget: BudgetInput;
  report: CheckPayload["report"];
}

export function checkPayload(source: CheckPayloadSource): CheckPayload {
  const values: Values = {};
  for (const [name, value] of Object.entries(source.values))
    if (value !== undefined && !NOT_RECOMPUTED.has(name)) values[name] = value;
  return {
    kind: "check",
    inputs: {
      values,
      model: payloadModel(source.model, source.modelResolvedAs),
      ignored: [...source.ignored],
      ...(source.overridden?.length ? { overridden: [...source.overridden] } : {}),
      budget: source.budget,
    },
    report: source.report,
  };
}

function payloadModel(model: ModelPreset, resolvedAs: string): PayloadModel {
  // A preset by identity: the name is enough (the page holds the same table).
  if (Object.hasOwn(MODEL_PRESETS, model.name) && MODEL_PRESETS[model.name] === model)
    return { source: "preset", name: model.name, resolvedAs };
  const checkpointGiB = Number.isFinite(model.checkpointGiB) ? model.checkpointGiB : null;
  return { source: "custom", model: { ...model, checkpointGiB }, resolvedAs };
}

/** The payload's model as the pipeline takes it. */
export function modelFromPayload(model: PayloadModel): { model: ModelPreset; resolvedAs: string } {
  if (model.source === "preset") return { model: MODEL_PRESETS[model.name]!, resolvedAs: model.resolvedAs };
  return {
    model: { ...model.model, checkpointGiB: model.model.checkpointGiB ?? Number.NaN },
    resolvedAs: model.resolvedAs,
  };
}
