/**
 * `--model` / `--model-path` as users name a model: a checkpoint folder (its config.json), a config.json path, or
 * a name (a preset in any case, a Hugging Face id, either with a quantisation or variant suffix). The one place
 * the CLI turns that value into a ModelPreset. A path that exists wins over a name, as SGLang loads a local
 * folder before it asks the Hub; the file reading is here, the parsing in server-config.
 */
import { lstat, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import {
  type ModelPreset,
  type V41ModelPreset,
  isV41Config,
  modelFromConfigJson,
  modelV41FromConfigJson,
  parseCustomModel,
  resolveModelName,
  resolveV41ModelName,
} from "@dsv4-kv/server-config";
import { InputError } from "../commands/args.js";
import { readTextInput } from "../commands/input.js";
import { parseJsonFile } from "../commands/json-keys.js";
import type { CommandIO } from "../commands/registry.js";
import { STDIN_PATH, readInputBytes } from "../commands/read-input.js";

export interface ModelSource {
  model: ModelPreset;
  /** How the value was resolved, for the report (e.g. "preset DeepSeek-V4-Flash"). */
  resolvedAs: string;
}

/** Largest config.json read (a real one is a few kB). */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** The model `spec` names; `flag` is the flag as the user typed it (for errors). */
export async function loadModel(spec: string, flag: string): Promise<ModelSource> {
  const kind = await pathKind(spec);
  if (kind === "dir") return fromConfigFile(join(spec, "config.json"), flag, basename(spec) || spec);
  // anything else that exists (a device, a FIFO, a socket) is refused by the reader, by what it is
  if (kind === "other") return fromConfigFile(spec, flag, basename(dirname(spec)) || spec);
  if (looksLikePath(spec))
    throw new InputError(flag, spec, "names no folder or file: give a checkpoint folder, a config.json path or a name");
  const match = resolveModelName(spec, flag);
  return { model: match.preset, resolvedAs: match.resolvedAs };
}

export interface V41ModelSource {
  model: V41ModelPreset;
  resolvedAs: string;
}

/**
 * The DeepSeek-V4.1 model `spec` names (a V4.1 name or id, a folder or config.json of a V4.1 checkpoint), or null
 * when it names something else (which `loadModel` then reads, or refuses, as before).
 */
export async function loadV41Model(spec: string, flag: string): Promise<V41ModelSource | null> {
  const kind = await pathKind(spec);
  if (kind === null) {
    if (looksLikePath(spec)) return null;
    const match = resolveV41ModelName(spec);
    if (!match) return null;
    const how = spec === match.preset.name ? "" : `"${spec}" → `;
    return { model: match.preset, resolvedAs: `${how}preset ${match.preset.name} (DeepSeek-V4.1)` };
  }
  const path = kind === "dir" ? join(spec, "config.json") : spec;
  const raw = parseJson(await readConfigText(path, flag), path, flag);
  if (!isV41Config(raw)) return null;
  const name = kind === "dir" ? basename(spec) || spec : basename(dirname(spec)) || spec;
  const read = modelV41FromConfigJson(raw, { name, file: path });
  const resolvedAs =
    read.preset === null
      ? `${path} (DeepSeek-V4.1, ${read.layout} layout): a custom model, no preset matches its facts`
      : `${path} (DeepSeek-V4.1, ${read.layout} layout) → preset ${read.preset} (every KV fact matches)`;
  return { model: read.model, resolvedAs };
}

/** stat only: it never opens the path, so a FIFO cannot block it. A link that leads nowhere (a loop) exists too. */
async function pathKind(path: string): Promise<"dir" | "other" | null> {
  const s = await stat(path).catch(() => lstat(path).catch(() => null));
  if (s === null) return null;
  return s.isDirectory() ? "dir" : "other";
}

/** A Hugging Face id has exactly one `/` and no leading `.`, `/` or `~`; anything else is meant as a path. */
function looksLikePath(spec: string): boolean {
  return /^[./~]/.test(spec) || spec.split("/").length > 2 || spec.includes("\\") || /\.json$/i.test(spec);
}

async function fromConfigFile(path: string, flag: string, name: string): Promise<ModelSource> {
  const raw = parseJson(await readConfigText(path, flag), path, flag);
  const read = modelFromConfigJson(raw, { name, file: path });
  const layout = read.layout === "deepseek" ? "DeepSeek layout" : "transformers layout";
  const resolvedAs =
    read.preset === null
      ? `${path} (${layout}): a custom model, no preset matches its facts`
      : `${path} (${layout}) → preset ${read.preset} (every KV fact matches)`;
  return { model: read.model, resolvedAs };
}

async function readConfigText(path: string, flag: string): Promise<string> {
  const at = path === STDIN_PATH ? `./${path}` : path; // a model path is a file, never standard input
  try {
    return (await readInputBytes({ field: flag, path: at, maxBytes: MAX_CONFIG_BYTES })).toString("utf8");
  } catch (error) {
    if (!InputError.isInstance(error)) throw error;
    if (error.params?.errno === "ENOENT")
      throw new InputError(flag, path, "has no config.json: a checkpoint folder holds one", { errno: "ENOENT" });
    if (error.params?.maxBytes !== undefined)
      throw new InputError(flag, path, `is larger than ${MAX_CONFIG_BYTES} bytes: not a config.json`, {
        ...error.params,
      });
    throw error;
  }
}

function parseJson(text: string, path: string, flag: string): unknown {
  return parseJsonFile(flag, path, text);
}

/** `--model-config FILE`: a custom model JSON (preset fields, or HF config.json keys), `-` for standard input. */
export async function readModelFile(path: string, stdin: CommandIO["stdin"]): Promise<ModelPreset> {
  const text = await readTextInput("--model-config", path, stdin);
  const result = parseCustomModel(parseJsonFile("--model-config", path, text));
  if (!result.ok) {
    throw new InputError("--model-config", path, `is not a model config: ${result.issues.join("; ").slice(0, 500)}`, {
      issues: [...result.issues],
    });
  }
  return result.model;
}
