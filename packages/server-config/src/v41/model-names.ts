/**
 * DeepSeek-V4.1 model names: a preset name in any case, its Hugging Face id (any owner), with or without the
 * quantisation / variant suffixes the V4 names accept (they keep the KV layout). Returns null for anything else, so
 * a caller tries V4.1 before falling back to the V4 resolver and its messages.
 */
import { QUANTISATION_SUFFIXES, VARIANT_SUFFIXES } from "../model-names.js";
import { V41_MODEL_PRESETS, type V41ModelPreset } from "./presets.js";

export interface V41ModelNameMatch {
  preset: V41ModelPreset;
  /** The suffixes taken off, as typed. */
  suffixes: string[];
  owner: string | null;
}

const HF_ID = /^([A-Za-z0-9][A-Za-z0-9._-]*)\/([A-Za-z0-9][A-Za-z0-9._-]*)$/;

export function resolveV41ModelName(spec: string): V41ModelNameMatch | null {
  const id = HF_ID.exec(spec);
  const owner = id ? id[1]! : null;
  let base = id ? id[2]! : spec;
  const byLowerName = new Map(Object.values(V41_MODEL_PRESETS).map((p) => [p.name.toLowerCase(), p]));
  const suffixes: string[] = [];
  let preset = byLowerName.get(base.toLowerCase());
  while (!preset) {
    const cut = base.lastIndexOf("-");
    const suffix = cut > 0 ? base.slice(cut + 1).toLowerCase() : "";
    if (!QUANTISATION_SUFFIXES.includes(suffix) && !VARIANT_SUFFIXES.includes(suffix)) return null;
    suffixes.unshift(base.slice(cut + 1));
    base = base.slice(0, cut);
    preset = byLowerName.get(base.toLowerCase());
  }
  return { preset, suffixes, owner };
}
