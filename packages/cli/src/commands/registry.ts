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
  {
    path: ["plan"],
    summary: "plan prefill/decode batches and print the exact plan records as JSON",
    load: () => import("./plan.js"),
  },
  {
    path: ["check"],
    summary:
      "check a DeepSeek-V4 server configuration: rings, residency, every pool's bytes, capacity, and every start-up error at once",
    load: () => import("./check.js"),
  },
  {
    path: ["simulate", "residency"],
    summary: "drive a compress-state ring through speculative batches and check that no committed position is lost",
    load: () => import("./simulate-residency.js"),
  },
  {
    path: ["prove", "residency"],
    summary: "prove for every batch sequence that a ring and draft count never lose a committed position",
    load: () => import("./prove-residency.js"),
  },
  {
    path: ["simulate", "online-mtp"],
    summary: "run the online c128 MTP controller against a sequential reference (lost commits, max errors)",
    load: () => import("./simulate-online-mtp.js"),
  },
];

/** What `dsv4-kv` with no command runs: the pre-start check of the embedded default (DeepSeek-V4-Flash, EAGLE 3/1/4, one rank of 8×H200 TP). */
export const DEFAULT_COMMAND: { path: string[]; describe: string } = {
  path: ["check"],
  describe:
    "check of the default DeepSeek-V4-Flash server (EAGLE 3 steps, top-k 1, 4 draft tokens, one rank of 8×H200 TP): rings, residency, pools, capacity",
};
