/**
 * A model as users name it: a preset name in any case (`deepseek-v4-flash`), a Hugging Face id
 * (`deepseek-ai/DeepSeek-V4-Flash-0731`), or either with quantisation / variant suffixes (`-FP8`, `-w4a8`,
 * `-NVFP4`, `-Base`) that keep the architecture, so the KV layout, of the preset they extend. Paths are the
 * caller's (this package reads no files); a name is resolved only when it names no file.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { ServerConfigError } from "./errors.js";
import { MODEL_PRESETS, type ModelPreset } from "./presets.js";

export interface ModelNameMatch {
  preset: ModelPreset;
  /** How the name was read, for the report (`"deepseek-ai/DeepSeek-V4-Flash-FP8" → preset DeepSeek-V4-Flash …`). */
  resolvedAs: string;
  /** The suffixes taken off, as typed (`["FP8"]`); empty for a preset name or id. */
  suffixes: string[];
  /** The Hugging Face owner of an id (`deepseek-ai`), null for a bare name. */
  owner: string | null;
}

/** Suffixes that change the weights' format or training stage, not the attention layout (lower case). */
export const QUANTISATION_SUFFIXES: readonly string[] = [
  "fp8",
  "fp4",
  "mxfp4",
  "nvfp4",
  "w4a8",
  "w4a16",
  "w8a8",
  "w8a16",
  "int4",
  "int8",
  "awq",
  "gptq",
  "bf16",
  "fp16",
];
export const VARIANT_SUFFIXES: readonly string[] = ["base"];
const OFFICIAL_OWNER = "deepseek-ai";
/** `owner/name`: Hugging Face's id form (owner and name of letters, digits, `-`, `_`, `.`). */
const HF_ID = /^([A-Za-z0-9][A-Za-z0-9._-]*)\/([A-Za-z0-9][A-Za-z0-9._-]*)$/;
const FAMILY_VERSION = /^deepseek-v(\d+(?:\.\d+)?)(?:-|$)/i;

/** The preset `spec` names; `field` is the input as the caller names it (`--model`). Throws UNKNOWN_MODEL. */
export function resolveModelName(spec: string, field: string): ModelNameMatch {
  const id = HF_ID.exec(spec);
  const owner = id ? id[1]! : null;
  const name = id ? id[2]! : spec;
  const byLowerName = new Map(Object.values(MODEL_PRESETS).map((p) => [p.name.toLowerCase(), p]));
  const suffixes: string[] = [];
  let base = name;
  let preset = byLowerName.get(base.toLowerCase());
  while (!preset) {
    const cut = base.lastIndexOf("-");
    const suffix = cut > 0 ? base.slice(cut + 1) : "";
    if (!isKnownSuffix(suffix)) break;
    suffixes.unshift(suffix);
    base = base.slice(0, cut);
    preset = byLowerName.get(base.toLowerCase());
  }
  if (!preset) throw unknownModel(spec, name, field);
  return { preset, resolvedAs: describe(spec, preset, owner, suffixes), suffixes, owner };
}

function isKnownSuffix(suffix: string): boolean {
  const lower = suffix.toLowerCase();
  return QUANTISATION_SUFFIXES.includes(lower) || VARIANT_SUFFIXES.includes(lower);
}

function describe(spec: string, preset: ModelPreset, owner: string | null, suffixes: readonly string[]): string {
  const parts: string[] = [];
  if (owner !== null && owner !== OFFICIAL_OWNER) parts.push(`by ${owner}, read as the same architecture`);
  const quantised = suffixes.filter((s) => QUANTISATION_SUFFIXES.includes(s.toLowerCase()));
  const variants = suffixes.filter((s) => VARIANT_SUFFIXES.includes(s.toLowerCase()));
  if (variants.length) parts.push(`variant ${variants.map((s) => `-${s}`).join("")}: same architecture`);
  if (quantised.length)
    parts.push(
      `quantisation ${quantised.map((s) => `-${s}`).join("")}: same KV layout; weights sized as the preset's ` +
        "checkpoint unless --weights-gib or --kv-budget-bytes is given",
    );
  const how = spec === preset.name ? `preset ${preset.name}` : `"${spec}" → preset ${preset.name}`;
  return parts.length ? `${how} (${parts.join("; ")})` : how;
}

/** An unknown name; no suggestion of a V4 preset for another DeepSeek version (V4.1 is not V4). */
function unknownModel(spec: string, name: string, field: string): ServerConfigError {
  const names = Object.keys(MODEL_PRESETS);
  const version = FAMILY_VERSION.exec(name)?.[1];
  const suggestion = version === undefined || version === "4" ? closestMatch(name, names) : null;
  const rule =
    `unknown preset: use one of ${names.join(", ")} (any case, with or without deepseek-ai/ and a quantisation ` +
    "suffix), a checkpoint folder, a config.json path, or --model-config FILE";
  return new ServerConfigError("UNKNOWN_MODEL", field, spec, rule, {
    presets: names,
    ...(version === undefined || version === "4" ? {} : { version }),
    ...(suggestion === null ? {} : { suggestion }),
  });
}
