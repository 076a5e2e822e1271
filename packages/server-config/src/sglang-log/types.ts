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
  /**
   * The value may be cut: it ends the line where the format goes on (later keys missing, `…`/`...`, a partial
   * unit or a trailing point). Such a figure is listed as truncated, never compared.
   */
  readonly truncated?: boolean;
  /** Nothing follows it on its line: a cut there leaves no trace in the format (reconcile.ts tests the digits). */
  readonly atLineEnd?: boolean;
}

/** A line the parser could not use, with why (`--json`: `logComparison.skipped[]`). */
export interface SkippedLine {
  /** 1-based line number in the file. */
  readonly line: number;
  /** The line's first 80 characters. */
  readonly text: string;
  readonly reason: string;
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
  /** Keys SGLang prints on this line that it lacks (the line is cut); empty for a whole line. */
  readonly missing: readonly string[];
  /** Lines joined to it (a line wrapped by a human), 1-based; empty when none. */
  readonly joined: readonly number[];
}

/** What starts a section: the file's first line, a server_args line, a launch command, or a restart. */
export type SectionStart = "file-start" | "server_args" | "launch-command" | "restart";

/** One server's start-up in a file (`parseSglangLog(text).sections[]`). */
export interface ParsedSglangLog {
  /** 1-based section number (`--section N`). */
  readonly section: number;
  readonly firstLine: number;
  readonly lastLine: number;
  readonly startedBy: SectionStart;
  /** Lines of this section the parser could not use. */
  readonly skipped: readonly SkippedLine[];
  /** Lines naming the platform (a GPU or NPU name, ROCm, Ascend), for the platform's evidence. */
  readonly platformHints: readonly { line: number; text: string }[];
  /** `server_args=ServerArgs(...)` or the dict form, keys as SGLang spells them (snake_case); null if absent. */
  readonly serverArgs: Readonly<Record<string, unknown>> | null;
  /** Line number of the server_args line, or null. */
  readonly serverArgsLine: number | null;
  /**
   * How server_args was printed: `repr` (`ServerArgs(…)`), `dict` (`{…}`), or `fragment` (pieces of a repr whose
   * head was cut: only their readable pairs); null when absent.
   */
  readonly serverArgsForm?: "repr" | "dict" | "fragment" | null;
  /** SGLANG_* and other environment assignments the log shows (environment dump lines, launch command prefix). */
  readonly env: Readonly<Record<string, string>>;
  /** The launch command the log shows, tokenised, or null. */
  readonly launchCommand: readonly string[] | null;
  readonly sizingLines: readonly LoggedSizingLine[];
  /** SGLang start-up messages that are no sizing line (weights loaded, graphs captured, an error), the first 20. */
  readonly startupLines: readonly { line: number; text: string }[];
}

/** A whole log file: its sections (one per server start) and every line skipped. */
export interface ParsedSglangLogFile {
  readonly lines: number;
  readonly sections: readonly ParsedSglangLog[];
  readonly skipped: readonly SkippedLine[];
}

/** How a figure takes part: compared with ours, taken from the log as an input, cut in the log, or not computed. */
export type FigureRole = "compared" | "input" | "truncated" | "not-computed";

/** Why a figure differs: the alternative arithmetic that reproduces the logged value, or none. */
export interface FigureCause {
  /** True when an alternative reproduces the logged value; false: no alternative does (`residual` says by how much). */
  readonly explained: boolean;
  /** The alternatives' ids (alternatives.ts), one or two; empty when unexplained. */
  readonly alternatives: readonly string[];
  /** The term and its value, in words ("c4/c128 rings 8/128 (without MTP): bytes_per_full_token 9151.90 …"). */
  readonly text: string;
  /** What the alternative computes, at the log's precision; null when unexplained. */
  readonly value: string | null;
  /** Logged minus ours, at the log's precision (a number's text); null when not a number. */
  readonly residual: string | null;
}

/** One figure of the comparison (`--json`: `logComparison.figures[]`). */
export interface FigureComparison {
  readonly name: string;
  /** The rank label, or null for a figure logged once. */
  readonly rank: string | null;
  /** The 1-based log line the figure was read from. */
  readonly line?: number;
  readonly logged: string;
  /** What we compute, at the log's precision; null when not computed (an input, a cut value, an unknown line). */
  readonly computed: string | null;
  /** Compared: true when equal at the log's precision; null when not compared (see `role`). */
  readonly match: boolean | null;
  readonly role: FigureRole;
  /** The logged figures it was computed from (`full_token@12`: the figure and its line); empty: from arguments. */
  readonly derivedFrom: readonly string[];
  /** How it is computed, or why it is an input, cut or not computed. */
  readonly why?: string;
  /** For a figure that differs. */
  readonly cause?: FigureCause;
}

/** The configurator generations we can tell apart (docs/reference/configurator-generations.md). */
export type ConfiguratorGeneration = "gen-a" | "gen-a-pools" | "gen-b" | "gen-b-cap" | "npu" | "unknown";

/** A figure the log cut off: listed, never compared. */
export interface TruncatedFigure {
  readonly line: number;
  readonly name: string;
  readonly logged: string;
  readonly reason: string;
}

export interface LogComparison {
  /** The section of the file (1-based), its lines, and what started it. */
  readonly section: number;
  readonly firstLine: number;
  readonly lastLine: number;
  readonly startedBy: SectionStart;
  /** V4's configurator generation, or `dev-dsv41`: a DeepSeek-V4.1 server (v41/reconcile.ts). */
  readonly generation: ConfiguratorGeneration | "dev-dsv41";
  /** The evidence that decided the generation, in words (which lines exist, their fields, the server_args keys). */
  readonly evidence: readonly string[];
  /** The platform whose rules and pools apply, and why. */
  readonly platform: "cuda" | "hip" | "npu";
  readonly platformEvidence: readonly string[];
  readonly figures: readonly FigureComparison[];
  readonly skipped: readonly SkippedLine[];
  readonly truncated: readonly TruncatedFigure[];
  /** Set when the section has no sizing line: it was checked as a launch, nothing was reconciled. */
  readonly nothingToReconcile?: string;
  /** Start-up rules raised by Gen B's sizing that do not describe this log's earlier configurator. */
  readonly rulesNotApplied?: readonly { rule: string; reason: string }[];
}
