/**
 * Every command's help is rendered here from its spec: the synopsis and description as written, the options
 * from the same flag table that parses them (type, range, default), and the exit codes. docs/cli.md is rendered
 * from the same specs, so the help, the parser and the docs cannot disagree.
 */
import { type FlagTable, helpTable } from "./flags.js";

export interface CommandSpec {
  /** Synopsis forms, each the words after `dsv4-kv <command> `; a "\n" continues a form on the next line. */
  usage: readonly string[];
  /** What the command does, in paragraphs (wrapped at HELP_WIDTH columns). */
  description: string;
  flags: FlagTable;
  /** Each exit code with its meaning, in order. */
  exitCodes: ReadonlyArray<readonly [number, string]>;
  /** Sections after the exit codes (input formats, examples), as written. */
  more?: string;
}

/** The width the descriptions are wrapped at. */
export const HELP_WIDTH = 116;

/** One paragraph built from values (a default, a version list), wrapped at `width` on spaces. */
export function wrapParagraph(text: string, width = HELP_WIDTH): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines.join("\n");
}

/** The `Usage:` lines of a command: continuation lines are aligned under the first form's flags. */
export function usageLines(path: readonly string[], usage: readonly string[]): string[] {
  const head = `dsv4-kv ${path.join(" ")} `;
  const lines: string[] = [];
  for (const [i, form] of usage.entries()) {
    const [first, ...rest] = form.split("\n");
    lines.push(`${i === 0 ? "Usage: " : "       "}${head}${first}`);
    for (const line of rest) lines.push(`${" ".repeat(7 + head.length)}${line}`);
  }
  return lines;
}

export function exitCodesText(spec: CommandSpec): string {
  return `Exit codes: ${spec.exitCodes.map(([code, meaning]) => `${code} ${meaning}`).join(", ")}.`;
}

export function renderHelp(path: readonly string[], spec: CommandSpec): string {
  const parts = [
    usageLines(path, spec.usage).join("\n"),
    spec.description.trim(),
    `Options:\n${helpTable(spec.flags)}`,
    exitCodesText(spec),
  ];
  if (spec.more) parts.push(spec.more.trim());
  return `${parts.join("\n\n")}\n`;
}
