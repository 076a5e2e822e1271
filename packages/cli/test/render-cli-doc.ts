// Renders docs/cli.md from the command registry and each command's spec (the tables that parse and print help).
import { type CommandSpec, exitCodesText, usageLines } from "../src/commands/help.js";
import { type FlagSpec, defaultHint, flagSynopsis, rangeHint, typeText } from "../src/commands/flags.js";
import { COMMANDS, DEFAULT_COMMAND, GROUPS } from "../src/commands/registry.js";
import { vllmSpec } from "../src/check/vllm/help.js";

const cell = (text: string): string => text.replace(/\|/g, "\\|");
const code = (text: string): string => (text === "" ? "" : `\`${cell(text)}\``);

function flagRow(name: string, spec: FlagSpec): string {
  const defaultText = defaultHint(spec).replace(/^default /, "");
  const cells = [
    code(flagSynopsis(name, spec)),
    typeText(spec),
    code(rangeHint(spec)),
    spec.required ? "required" : code(defaultText),
    cell(spec.help),
  ];
  return `| ${cells.join(" | ")} |`;
}

function commandSection(path: readonly string[], spec: CommandSpec): string {
  const flags = Object.entries(spec.flags);
  return [
    `## \`dsv4-kv ${path.join(" ")}\``,
    "",
    "```text",
    ...usageLines(path, spec.usage),
    "",
    spec.description.trim(),
    "```",
    "",
    "| flag | type | range | default | what it does |",
    "|---|---|---|---|---|",
    ...flags.map(([name, flag]) => flagRow(name, flag)),
    "",
    exitCodesText(spec),
    ...(spec.more ? ["", "```text", spec.more.trim(), "```"] : []),
    "",
  ].join("\n");
}

export async function renderCliDoc(): Promise<string> {
  const specs = await Promise.all(COMMANDS.map(async (c) => ({ path: c.path, spec: (await c.load()).spec })));
  const head = [
    "# The dsv4-kv command line",
    "",
    "<!-- Generated from the command tables in packages/cli/src/commands (the ones that parse the flags and print",
    "     the help); edit them, then run `cd packages/cli && UPDATE_CLI_DOC=1 npx vitest run test/cli-doc.test.ts`. -->",
    "",
    "```text",
    "dsv4-kv <command> [options]",
    "dsv4-kv [options]            no command: the check command",
    "dsv4-kv help [<command>]     the help of a command or a group (also: dsv4-kv <command> --help)",
    "dsv4-kv -V | --version",
    "```",
    "",
    `With no command, \`dsv4-kv\` runs the ${DEFAULT_COMMAND.describe}.`,
    "",
    "| command | what it does |",
    "|---|---|",
    ...COMMANDS.map((c) => `| [\`dsv4-kv ${c.path.join(" ")}\`](#dsv4-kv-${c.path.join("-")}) | ${cell(c.summary)} |`),
    "",
    "Groups: " +
      Object.entries(GROUPS)
        .map(([g, what]) => `\`dsv4-kv ${g} --help\` (${what})`)
        .join("; ") +
      ".",
    "",
    "Every flag is `--name value` or `--name=value`; a switch is `--name` alone. A value may start with `-`: the",
    "flag's range, not the parser, decides whether a negative number is allowed. An unknown command or flag is",
    "refused with a suggestion; every refusal names the flag as typed, the value and the rule (exit 2).",
    "",
    "Colour: human output on a terminal colours verdicts and error lines. `NO_COLOR` (set, non-empty) turns it",
    "off; `FORCE_COLOR` (any value but `0` or `false`) turns it on even through a pipe and wins over `NO_COLOR`;",
    "`--json` output is never coloured.",
    "",
    "Exit codes of every command: 0 ok, 1 the command found a problem (an invalid configuration, a",
    "counterexample, a violation), 2 unusable input or a usage error.",
    "",
  ].join("\n");
  // `check --engine vllm` has its own flag table (vLLM's spellings): its section follows check's.
  const sections = specs.flatMap((s) =>
    s.path.join(" ") === "check"
      ? [
          commandSection(s.path, s.spec),
          commandSection(s.path, vllmSpec).replace("## `dsv4-kv check`", "## `dsv4-kv check --engine vllm`"),
        ]
      : [commandSection(s.path, s.spec)],
  );
  return [head, ...sections].join("\n");
}
