/**
 * dsv4-kv entry: finds the command (longest matching word path), prints help and version, maps failures to
 * exit codes. Exit codes: 0 ok, 1 the check found a problem, 2 unusable input or usage error.
 */
import { Dsv4KvError, closestMatch } from "@dsv4-kv/errors";
import { UsageError } from "./commands/args.js";
import { COMMANDS, DEFAULT_COMMAND, type CommandIO } from "./commands/registry.js";
import { VERSION } from "./version.js";

export function topLevelHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(" ").length));
  const lines = COMMANDS.map((c) => `  ${c.path.join(" ").padEnd(width)}  ${c.summary}`);
  return [
    "dsv4-kv: KV-cache state of DeepSeek-V4 compressed attention under speculative decoding",
    "",
    "Usage: dsv4-kv <command> [options]",
    `       dsv4-kv            (no command: ${DEFAULT_COMMAND.describe})`,
    "",
    "Commands:",
    ...lines,
    "",
    "Options: --help (on every command), --version",
    "Exit codes: 0 ok, 1 the check found a problem, 2 unusable input",
    "",
  ].join("\n");
}

export async function main(argv: string[], io: CommandIO): Promise<number> {
  if (argv[0] === "--version" || argv[0] === "-v") {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.stdout.write(topLevelHelp());
    return 0;
  }
  let words = argv;
  if (argv.length === 0 || argv[0]!.startsWith("-")) words = [...DEFAULT_COMMAND.path, ...argv];
  const match = COMMANDS.filter((c) => c.path.every((w, i) => words[i] === w)).sort(
    (a, b) => b.path.length - a.path.length,
  )[0];
  if (!match) {
    io.stderr.write(`dsv4-kv: ${unknownCommand(words).message}\n\n${topLevelHelp()}`);
    return 2;
  }
  const rest = words.slice(match.path.length);
  const mod = await match.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout.write(mod.help.endsWith("\n") ? mod.help : `${mod.help}\n`);
    return 0;
  }
  try {
    return await mod.run(rest, io);
  } catch (err) {
    const hint =
      Dsv4KvError.isInstance(err) && err.code === "USAGE" ? ` (see dsv4-kv ${match.path.join(" ")} --help)` : "";
    io.stderr.write(`dsv4-kv ${match.path.join(" ")}: ${describeError(err, io.env)}${hint}\n`);
    return 2;
  }
}

function unknownCommand(words: readonly string[]): UsageError {
  const names = COMMANDS.map((c) => c.path.join(" "));
  const isGroup = COMMANDS.some((c) => c.path.length > 1 && c.path[0] === words[0]);
  const given = words.slice(0, isGroup ? 2 : 1).join(" ");
  const suggestion = closestMatch(given, names);
  return new UsageError("command", given, "is not a dsv4-kv command", suggestion === null ? undefined : { suggestion });
}

/**
 * A dsv4-kv error is shown by its message (field, value, rule). Anything else is a bug, not the user's input:
 * one line, no stack (set DSV4_KV_DEBUG=1 for the stack).
 */
export function describeError(err: unknown, env: NodeJS.ProcessEnv = {}): string {
  if (Dsv4KvError.isInstance(err)) return err.message;
  if (env.DSV4_KV_DEBUG && err instanceof Error && err.stack) return `internal error: ${err.stack}`;
  const name = err instanceof Error ? err.name : typeof err;
  return `internal error (${name}); please report it with the command line (DSV4_KV_DEBUG=1 shows the stack)`;
}
