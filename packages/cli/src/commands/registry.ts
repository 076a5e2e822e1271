/**
 * The dsv4-kv subcommands. Each entry loads its module lazily so that `dsv4-kv --help` (and every command)
 * starts without loading the others (the CUDA addon in particular).
 *
 * A command module exports `run(argv: string[], io: CommandIO): Promise<number>` (the exit code) and `help`.
 */
export interface CommandIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export interface CommandModule {
  help: string;
  run(argv: string[], io: CommandIO): Promise<number>;
}

export interface CommandEntry {
  /** Words after `dsv4-kv`, e.g. ["simulate", "residency"]. */
  path: string[];
  summary: string;
  load(): Promise<CommandModule>;
}

export const COMMANDS: CommandEntry[] = [
  { path: ["plan"], summary: "plan prefill/decode batches and print the exact plan records as JSON", load: () => import("./plan.js") },
  { path: ["simulate", "residency"], summary: "drive a compress-state ring through speculative batches and check that no committed position is lost", load: () => import("./simulate-residency.js") },
];

/** What `dsv4-kv` with no command runs: the residency check of DeepSeek-V4's speculative rings. */
export const DEFAULT_COMMAND: { path: string[]; describe: string } = {
  path: ["simulate", "residency"],
  describe: "residency check of the speculative rings (c4 ring 16 at 10 draft tokens, c128 ring 256 at 130)",
};
