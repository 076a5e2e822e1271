/**
 * A `vllm serve` command's words as vLLM's dest keys (the keys `non-default args` prints), through vLLM's flag table
 * (vllm-flags.ts): each spelling, alias or unambiguous prefix names its dest and how its value is written (a `bool`
 * takes no value and `--no-NAME` is false; `--json-arg.key value` sets one key). The first bare word is the model.
 * A flag the table does not know is listed, with its value left alone when the next word is no flag.
 */
import { vllmFlagByPrefix } from "../vllm-flags.js";

function typedValue(text: string, form: string): unknown {
  if ((form === "int" || form === "humanInt") && /^\d+$/.test(text)) return Number(text);
  if (form === "float" && /^\d*\.?\d+$/.test(text)) return Number(text);
  if (form === "bool" && /^(?:true|false)$/i.test(text)) return /^true$/i.test(text);
  if (form === "json" && /^[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function scalar(text: string): unknown {
  if (/^-?\d+(?:\.\d+)?$/.test(text)) return Number(text);
  if (/^(?:true|false)$/i.test(text)) return /^true$/i.test(text);
  return text;
}

export interface LaunchArgs {
  args: Record<string, unknown>;
  /** Flags the table does not know, as typed. */
  unknown: string[];
}

export function launchArgs(words: readonly string[]): LaunchArgs {
  const args: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith("-")) {
      if (i === 0) args.model = word;
      continue;
    }
    const eq = word.indexOf("=");
    const name = eq < 0 ? word : word.slice(0, eq);
    const dot = name.indexOf(".");
    const spelled = dot < 0 ? name : name.slice(0, dot);
    const negated = spelled.startsWith("--no-") || spelled.startsWith("--no_");
    const found = vllmFlagByPrefix(negated ? `--${spelled.slice(5)}` : spelled).match;
    const takes = eq < 0 && words[i + 1] !== undefined && !/^--?[A-Za-z]/.test(words[i + 1]!);
    if (!found) {
      unknown.push(name);
      if (takes) i++;
      continue;
    }
    const { dest, form } = found.entry;
    if (form === "bool" && dot < 0) {
      const text = eq >= 0 ? word.slice(eq + 1) : null;
      args[dest] = negated ? false : text === null ? true : typedValue(text, "bool");
      continue;
    }
    const text = eq >= 0 ? word.slice(eq + 1) : takes ? words[++i]! : "";
    if (dot >= 0) {
      const group = (typeof args[dest] === "object" && args[dest] !== null ? args[dest] : {}) as Record<
        string,
        unknown
      >;
      group[name.slice(dot + 1).replaceAll("-", "_")] = scalar(text);
      args[dest] = group;
    } else args[dest] = typedValue(text, form);
  }
  return { args, unknown };
}
