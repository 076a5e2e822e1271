/**
 * dsv4-kv entry: finds the command (longest matching word path), prints help and version, maps failures to
 * exit codes. Exit codes: 0 ok, 1 the check found a problem, 2 unusable input or usage error.
 */
import { Dsv4KvError } from "@dsv4-kv/errors";
import { closestMatch } from "@dsv4-kv/errors/internal";
import { paintFor } from "./colour.js";
import { UsageError } from "./commands/args.js";
import { renderHelp } from "./commands/help.js";
import { COMMANDS, type CommandEntry, type CommandIO, DEFAULT_COMMAND, GROUPS } from "./commands/registry.js";
import { VERSION } from "./version.js";

const VERSION_FLAGS = new Set(["--version", "-V", "-v"]);
const HELP_FLAGS = new Set(["--help", "-h"]);

function commandList(entries: readonly CommandEntry[], drop: number): string[] {
  const names = entries.map((c) => c.path.slice(drop).join(" "));
  const width = Math.max(...names.map((n) => n.length));
  return entries.map((c, i) => `  ${names[i]!.padEnd(width)}  ${c.summary}`);
}

export function topLevelHelp(): string {
  return [
    "dsv4-kv: KV-cache state of DeepSeek-V4 compressed attention under speculative decoding",
    "",
    "Usage: dsv4-kv <command> [options]",
    `       dsv4-kv [options]     (no command: ${DEFAULT_COMMAND.describe})`,
    "       dsv4-kv help [<command>]",
    "",
    "Commands:",
    ...commandList(COMMANDS, 0),
    "",
    "Options: -h, --help (on every command and group: `dsv4-kv simulate --help`), -V, --version",
    "Colour: on a terminal only; NO_COLOR=1 turns it off, FORCE_COLOR=1 turns it on through a pipe; --json never",
    "Exit codes: 0 ok, 1 the check found a problem, 2 unusable input",
    "",
  ].join("\n");
}

/** The help of a command group (`dsv4-kv simulate --help`): its commands. */
export function groupHelp(group: string): string {
  return [
    `Usage: dsv4-kv ${group} <command> [options]`,
    "",
    `${group}: ${GROUPS[group] ?? ""}`,
    "",
    "Commands:",
    ...commandList(
      COMMANDS.filter((c) => c.path[0] === group),
      1,
    ),
    "",
    `\`dsv4-kv help ${group} <command>\` or \`dsv4-kv ${group} <command> --help\` shows a command's options.`,
    "",
  ].join("\n");
}

type Resolved =
  | { kind: "command"; entry: CommandEntry; rest: string[] }
  | { kind: "group"; group: string; rest: string[] }
  | { kind: "unknown"; error: UsageError };

const isGroup = (word: string | undefined): word is string => word !== undefined && Object.hasOwn(GROUPS, word);

function resolve(words: readonly string[]): Resolved {
  const entry = COMMANDS.filter((c) => c.path.every((w, i) => words[i] === w)).sort(
    (a, b) => b.path.length - a.path.length,
  )[0];
  if (entry) return { kind: "command", entry, rest: words.slice(entry.path.length) };
  if (isGroup(words[0]) && (words[1] === undefined || words[1].startsWith("-"))) {
    return { kind: "group", group: words[0], rest: words.slice(1) };
  }
  return { kind: "unknown", error: unknownCommand(words) };
}

/** npm and pnpm pass the `--` of `pnpm start -- --tp-size 4` on: before flags or a command it ends nothing. */
function dropScriptSeparator(argv: readonly string[]): readonly string[] {
  if (argv[0] !== "--" || argv[1] === undefined) return argv;
  const next = argv[1];
  const isCommandWord = next === "help" || COMMANDS.some((c) => c.path[0] === next);
  return next.startsWith("-") || isCommandWord ? argv.slice(1) : argv;
}

export async function main(argv: string[], io: CommandIO): Promise<number> {
  const args = dropScriptSeparator(argv);
  if (VERSION_FLAGS.has(args[0] ?? "")) {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (HELP_FLAGS.has(args[0] ?? "")) {
    io.stdout.write(topLevelHelp());
    return 0;
  }
  if (args[0] === "help") return help(args.slice(1), io);
  const words = args.length === 0 || args[0]!.startsWith("-") ? [...DEFAULT_COMMAND.path, ...args] : [...args];
  const found = resolve(words);
  if (found.kind === "unknown") return refuseCommand(found.error, io);
  if (found.kind === "group") {
    if (found.rest.length > 0 && HELP_FLAGS.has(found.rest[0]!)) {
      io.stdout.write(groupHelp(found.group));
      return 0;
    }
    const error = new UsageError(found.group, found.rest[0], "needs a command", {
      commands: COMMANDS.filter((c) => c.path[0] === found.group).map((c) => c.path.join(" ")),
    });
    return failUsage(`dsv4-kv: ${error.message}`, groupHelp(found.group), io);
  }
  const { entry, rest } = found;
  const mod = await entry.load();
  if (wantsHelp(rest)) {
    io.stdout.write(mod.helpFor ? mod.helpFor(rest).text : renderHelp(entry.path, mod.spec));
    return 0;
  }
  try {
    return await mod.run(rest, io);
  } catch (err) {
    const helpCommand = mod.helpFor?.(rest).command ?? `dsv4-kv ${entry.path.join(" ")} --help`;
    const hint = Dsv4KvError.isInstance(err) && err.code === "USAGE" ? ` (see ${helpCommand})` : "";
    const line = `dsv4-kv ${entry.path.join(" ")}: ${describeError(err, io.env)}${hint}`;
    io.stderr.write(`${paintFor(io.stderr, io.env).bad(line)}\n`);
    return 2;
  }
}

/** `--help` or `-h` among the command's own words (after `--` they belong to a launch command). */
function wantsHelp(rest: readonly string[]): boolean {
  const end = rest.indexOf("--");
  return (end < 0 ? rest : rest.slice(0, end)).some((w) => HELP_FLAGS.has(w));
}

/** `dsv4-kv help [<command>]`: the top-level help, a group's, or a command's. */
async function help(words: readonly string[], io: CommandIO): Promise<number> {
  if (words.length === 0) {
    io.stdout.write(topLevelHelp());
    return 0;
  }
  const found = resolve(words);
  if (found.kind === "group" && found.rest.length === 0) {
    io.stdout.write(groupHelp(found.group));
    return 0;
  }
  if (found.kind === "command" && found.rest.length === 0) {
    io.stdout.write(renderHelp(found.entry.path, (await found.entry.load()).spec));
    return 0;
  }
  return refuseCommand(found.kind === "unknown" ? found.error : unknownCommand(words), io);
}

function refuseCommand(error: UsageError, io: CommandIO): number {
  return failUsage(`dsv4-kv: ${error.message}`, topLevelHelp(), io);
}

function failUsage(line: string, helpText: string, io: CommandIO): number {
  io.stderr.write(`${paintFor(io.stderr, io.env).bad(line)}\n\n${helpText}`);
  return 2;
}

function unknownCommand(words: readonly string[]): UsageError {
  const names = COMMANDS.map((c) => c.path.join(" "));
  const given = words.slice(0, isGroup(words[0]) ? 2 : 1).join(" ");
  const suggestion = closestMatch(given, names);
  return new UsageError("command", given, "is not a dsv4-kv command", suggestion === null ? undefined : { suggestion });
}

/**
 * A dsv4-kv error is shown by its message (field, value, rule). Anything else is a bug, not the user's input:
 * one line, no stack (set DSV4_KV_DEBUG=1 for the stack).
 */
export function describeError(err: unknown, env: CommandIO["env"] = {}): string {
  if (Dsv4KvError.isInstance(err)) return err.message;
  if (env.DSV4_KV_DEBUG && err instanceof Error && err.stack) return `internal error: ${err.stack}`;
  const name = err instanceof Error ? err.name : typeof err;
  return `internal error (${name}); please report it with the command line (DSV4_KV_DEBUG=1 shows the stack)`;
}
