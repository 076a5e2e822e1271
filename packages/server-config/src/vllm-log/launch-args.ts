/**
 * A `vllm serve` command's words as vLLM's dest keys (the keys `non-default args` prints): the first bare word is
 * the model, `--flag value` / `--flag=value` take argparse's dest (dashes to underscores), `--no-flag` is false,
 * a flag without a value is true, `--group.key value` sets one key of a config group.
 */

function valueOf(text: string): unknown {
  if (/^-?\d+$/.test(text)) return Number(text);
  if (/^-?\d*\.\d+$/.test(text)) return Number(text);
  if (text === "True" || text === "true") return true;
  if (text === "False" || text === "false") return false;
  if (/^[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export function launchArgs(words: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith("-")) {
      if (out.model === undefined && i === 0) out.model = word;
      continue;
    }
    const eq = word.indexOf("=");
    const flag = (eq < 0 ? word : word.slice(0, eq)).replace(/^-+/, "");
    const next = words[i + 1];
    let value: unknown = true;
    if (eq >= 0) value = valueOf(word.slice(eq + 1));
    else if (next !== undefined && !/^--?[A-Za-z]/.test(next)) value = valueOf(words[++i]!);
    const dotted = flag.indexOf(".");
    const dest = (dotted < 0 ? flag : flag.slice(0, dotted)).replaceAll("-", "_");
    if (dotted >= 0) {
      const group = (out[dest] ?? {}) as Record<string, unknown>;
      group[flag.slice(dotted + 1).replaceAll("-", "_")] = value;
      out[dest] = group;
    } else if (dest.startsWith("no_") && value === true) out[dest.slice(3)] = false;
    else out[dest] = value;
  }
  return out;
}
