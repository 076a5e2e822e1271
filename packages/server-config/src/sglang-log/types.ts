/**
 * What `dsv4-kv check --against-log FILE` reads out of an SGLang server log, and what the reconciliation returns.
 * parse.ts turns log text into a ParsedSglangLog (no Node built-ins: the text is given, not read); reconcile.ts
 * detects the configurator generation from the log's evidence and compares every logged figure with ours.
 */

/** A number as the log printed it: `value` parsed, `decimals` after the point (a GB figure to 2 decimals is a range). */
export interface LoggedNumber {
  readonly text: string;
  readonly value: number;
  readonly decimals: number;
  /** Unit the log printed after it ("GB" for `available_bytes=… GB`), or "" when none. */
  readonly unit: string;
}

/** The rank a line belongs to, from its prefix (`TP0`, `DP1 TP1 EP1`, …); null when the line has none. */
export interface LogRank {
  readonly tp: number | null;
  readonly dp: number | null;
  readonly ep: number | null;
  readonly pp: number | null;
  /** The prefix as written, e.g. "DP1 TP1 EP1". */
  readonly label: string;
}

/** One recognised DSV4 sizing line: its kind, where it stands, the rank, and every key=value it holds. */
export interface LoggedSizingLine {
  /**
   * `memory-calculation`: `DSV4 memory calculation: …` (or the older `DSv4 memory calculation: …`);
   * `pool-sizes`: `DSV4 pool sizes: …`; `pool-init`: `Initialize DeepSeekV4TokenToKVPool with …`;
   * `swa-sizing`: `DSV4 SWA sizing: mode=…`; `max-total-tokens`: the scheduler's max_total_num_tokens line;
   * other kinds may be added by the parser with the same shape.
   */
  readonly kind: string;
  /** 1-based line number in the file. */
  readonly line: number;
  readonly rank: LogRank | null;
  /** The line's own spelling of its label (e.g. "DSv4 memory calculation"), part of the generation evidence. */
  readonly label: string;
  readonly fields: Readonly<Record<string, LoggedNumber | string>>;
}

export interface ParsedSglangLog {
  /** `server_args=ServerArgs(...)` or the dict form, keys as SGLang spells them (snake_case); null if absent. */
  readonly serverArgs: Readonly<Record<string, unknown>> | null;
  /** Line number of the server_args line, or null. */
  readonly serverArgsLine: number | null;
  /** How server_args was printed: `repr` (`ServerArgs(…)`) or `dict` (`{…}`); null when absent. */
  readonly serverArgsForm?: "repr" | "dict" | null;
  /** SGLANG_* and other environment assignments the log shows (environment dump lines, launch command prefix). */
  readonly env: Readonly<Record<string, string>>;
  /** The launch command the log shows, tokenised, or null. */
  readonly launchCommand: readonly string[] | null;
  readonly sizingLines: readonly LoggedSizingLine[];
}

/** One figure of the comparison (`--json`: `logComparison.figures[]`). */
export interface FigureComparison {
  readonly name: string;
  /** The rank label, or null for a figure logged once. */
  readonly rank: string | null;
  /** The 1-based log line the figure was read from. */
  readonly line?: number;
  readonly logged: string;
  /** What we compute, at the log's precision; null when the generation is not modelled. */
  readonly computed: string | null;
  /** True only when equal at the log's precision. */
  readonly match: boolean;
  /** Why it differs (or why it is not computed). */
  readonly why?: string;
}

/** The configurator generations we can tell apart (docs/reference/configurator-generations.md). */
export type ConfiguratorGeneration = "gen-a" | "gen-b" | "gen-b-cap" | "npu" | "unknown";

export interface LogComparison {
  readonly generation: ConfiguratorGeneration;
  /** The evidence that decided the generation, in words (which lines exist, their fields, the server_args keys). */
  readonly evidence: readonly string[];
  readonly figures: readonly FigureComparison[];
}
