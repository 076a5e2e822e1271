/**
 * The check page's settings: the payload's inputs with overrides from the URL fragment and the controls, parsed
 * by the CLI's own flag table (so the page refuses what the CLI refuses), and the pipeline input they make.
 * DOM-free, so node tests cover it.
 */
import { Dsv4KvError } from "@dsv4-kv/errors";
import { closestMatch } from "@dsv4-kv/errors/internal";
import { resolveModelName } from "@dsv4-kv/server-config";
import { UsageError } from "../../commands/args.js";
import { ALL_FLAGS } from "../../check/flags.js";
import type { Value, Values } from "../../check/launch.js";
import { type CheckPipelineInput, checkValueFromText } from "../../check/pipeline.js";
import { type CheckPayload, modelFromPayload } from "../check-payload.js";

/** The flags the page has controls for, in the order the fragment lists them. */
export const CONTROL_FLAGS = [
  "model",
  "tp-size",
  "dp-size",
  "speculative-num-draft-tokens",
  "speculative-algorithm",
  "mem-fraction-static",
  "kv-budget-bytes",
  "online-compress",
  "compress-state-dtype",
  "context-length",
] as const;

/** Flags that name files or outputs: not settings of a view. */
const NOT_SETTINGS = new Set(["config", "against-log", "section", "model-config", "json", "html", "help"]);

/** Every flag a fragment may set: check's flag table less the file and output flags. */
export const FRAGMENT_FLAGS: readonly string[] = Object.keys(ALL_FLAGS).filter((name) => !NOT_SETTINGS.has(name));

export interface FragmentRead {
  overrides: Values;
  /** One typed error per refused entry (the others still apply). */
  errors: Dsv4KvError[];
}

/** Parses `a=1&b=x` (no leading `#`): each key a check flag, each value parsed as the CLI parses it. */
export function parseFragment(fragment: string): FragmentRead {
  const overrides: Values = {};
  const errors: Dsv4KvError[] = [];
  for (const entry of fragment.split("&")) {
    if (entry === "") continue;
    try {
      const [name, value] = fragmentEntry(entry);
      overrides[name] = value;
    } catch (error) {
      if (!Dsv4KvError.isInstance(error)) throw error;
      errors.push(error as Dsv4KvError);
    }
  }
  return { overrides, errors };
}

function fragmentEntry(entry: string): [string, Value] {
  const eq = entry.indexOf("=");
  const name = decode("#", eq < 0 ? entry : entry.slice(0, eq));
  const flag = `--${name}`;
  if (!FRAGMENT_FLAGS.includes(name)) {
    const suggestion = closestMatch(name, FRAGMENT_FLAGS);
    throw new UsageError(
      flag,
      undefined,
      "is not a setting of the check page (the URL fragment takes check's flags)",
      suggestion === null ? undefined : { suggestion: `--${suggestion}` },
    );
  }
  const spec = ALL_FLAGS[name]!;
  // A switch alone is on, as on the command line; with a value it takes a word (true/false, 1/0, …).
  if (eq < 0) {
    if (spec.type === "bool") return [name, true];
    throw new UsageError(flag, undefined, `needs a value${spec.arg ? ` (${spec.arg})` : ""}`);
  }
  return [name, checkValueFromText(flag, name, decode(flag, entry.slice(eq + 1)))];
}

function decode(field: string, text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new UsageError(field, text, "is not valid percent-encoding");
  }
}

/** The fragment for `overrides`: the controls' flags first, then any other, values as the CLI would take them. */
export function fragmentOf(overrides: Values): string {
  const names = [
    ...CONTROL_FLAGS.filter((name) => overrides[name] !== undefined),
    ...Object.keys(overrides).filter((name) => overrides[name] !== undefined && !isControl(name)),
  ];
  return names
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(valueText(overrides[name]!))}`)
    .join("&");
}

const isControl = (name: string): boolean => (CONTROL_FLAGS as readonly string[]).includes(name);

/** A value as text the flag parser reads back (lists comma-separated). */
export function valueText(value: Value): string {
  return Array.isArray(value) ? value.join(",") : String(value);
}

/** The pipeline's input: the payload's inputs with `overrides` over them; a `--model` override is a preset name. */
export function pipelineInput(payload: CheckPayload, overrides: Values): CheckPipelineInput {
  const values: Values = { ...payload.inputs.values, ...overrides };
  const { model, resolvedAs } =
    overrides.model !== undefined ? modelByName(String(overrides.model)) : modelFromPayload(payload.inputs.model);
  const { ignored, overridden } = payload.inputs;
  return { values, model, modelResolvedAs: resolvedAs, ignored, ...(overridden ? { overridden } : {}) };
}

function modelByName(name: string): ReturnType<typeof modelFromPayload> {
  const match = resolveModelName(name, "--model");
  return { model: match.preset, resolvedAs: match.resolvedAs };
}
