/**
 * The dsv4-kv subcommands. Each entry loads its module lazily so that `dsv4-kv --help` (and every command)
 * starts without loading the others (the CUDA addon in particular).
 *
 * A command module exports `run(argv: string[], io: CommandIO): Promise<number>` (the exit code) and `spec`,
 * from which its help and docs/cli.md are rendered.
 */
import type { CommandSpec } from "./help.js";

/**
 * Where a command writes. Structural, so that the published types need no `@types/node`: `process.stdout` and
 * any Node writable fit.
 */
export interface OutputStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

/** Where a command reads stdin from: `process.stdin`, or any async iterable of strings or bytes. */
export interface InputStream extends AsyncIterable<unknown> {
  readonly isTTY?: boolean;
}

export interface CommandIO {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: InputStream;
  /** The environment (`process.env`): switches, NO_COLOR / FORCE_COLOR, DSV4_KV_DEBUG. */
  env: Readonly<Record<string, string | undefined>>;
}

export interface CommandModule {
  spec: CommandSpec;
  run(argv: string[], io: CommandIO): Promise<number>;
  /**
   * The help for these words, and the command that prints it (for a usage error's hint), when some of them pick
   * another form (`check --engine vllm`); default: the spec's, `dsv4-kv <command> --help`.
   */
  helpFor?(words: readonly string[]): { text: string; command: string };
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
  {
    path: ["simulate", "compress"],
    summary:
      "run the compress backends through speculative multi-request scenarios and check every entry against offline compression",
    load: () => import("./simulate-compress.js"),
  },
];

/** What `dsv4-kv` with no command runs: the pre-start check of the embedded default (DeepSeek-V4-Flash, EAGLE 3/1/4, one rank of 8×H200 TP). */
export const DEFAULT_COMMAND: { path: string[]; describe: string } = {
  path: ["check"],
  describe:
    "check of the default DeepSeek-V4-Flash server (EAGLE 3 steps, top-k 1, 4 draft tokens, one rank of 8×H200 TP): rings, residency, pools, capacity",
};

/** Commands of two words share their first (`simulate residency`): the group's help lists them. */
export const GROUPS: Readonly<Record<string, string>> = {
  simulate: "run a ring, the online MTP controller or the compress path through seeded scenarios against a reference",
  prove: "prove a property for every batch sequence, not a sampled one",
};
