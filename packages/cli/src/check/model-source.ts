/**
 * `--model` / `--model-path` as users name a model: a preset name today (the model helper extends this to Hugging
 * Face ids, checkpoint folders and config.json paths). The one place the CLI turns that value into a ModelPreset.
 */
import { closestMatch } from "@dsv4-kv/errors";
import { MODEL_PRESETS, type ModelPreset } from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";

export interface ModelSource {
  model: ModelPreset;
  /** How the value was resolved, for the report (e.g. "preset DeepSeek-V4-Flash"). */
  resolvedAs: string;
}

/** The model `spec` names; `flag` is the flag as the user typed it (for errors). */
export async function loadModel(spec: string, flag: string): Promise<ModelSource> {
  const preset = Object.hasOwn(MODEL_PRESETS, spec) ? MODEL_PRESETS[spec] : undefined;
  if (preset) return { model: preset, resolvedAs: `preset ${spec}` };
  const names = Object.keys(MODEL_PRESETS);
  const suggestion = closestMatch(spec, names);
  throw new UsageError(flag, spec, `unknown preset: use one of ${names.join(", ")} or --model-config FILE`, {
    presets: names,
    ...(suggestion === null ? {} : { suggestion }),
  });
}
