/**
 * What `dsv4-kv check --engine vllm --against-log FILE` reads out of a vLLM start-up log of DeepSeek-V4
 * (parse.ts), and what the reconciliation returns (reconcile.ts). Formats and their upstream sources:
 * docs/reference/vllm-kv-cache.md §15.
 */
import type { VllmVersionBehaviour } from "../vllm/versions.js";

/** A number as the log printed it: the text, its value and its decimals (a GiB figure is a range). */
export interface VllmLoggedNumber {
  readonly text: string;
  readonly value: number;
  readonly decimals: number;
}

/** Where a figure was read: a log line (a logging prefix or a bare vLLM message), or a quote in prose or a table. */
export type VllmLineSource = "log" | "quoted";

/** The kinds of line the reader recognises (each format is in docs/reference/vllm-kv-cache.md §15). */
export type VllmFigureKind =
  | "weights-gib"
  | "available-kv-gib"
  | "kv-cache-tokens"
  | "max-concurrency"
  | "num-gpu-blocks"
  | "num-gpu-blocks-override"
  | "refusal"
  | "block-size"
  | "kv-format"
  | "indexer-cache"
  | "async-scheduling"
  | "chunked-prefill"
  | "max-model-len"
  | "cuda-graph-estimate"
  | "independent-draft-groups";

/** One recognised line. `numbers` holds its figures by name; `text` the strings (a backend, a layout). */
export interface VllmLoggedLine {
  readonly kind: VllmFigureKind;
  /** 1-based line number (the first, for a message a person wrapped onto more lines). */
  readonly line: number;
  readonly source: VllmLineSource;
  /** The process prefix (`Worker_TP0`, `EngineCore_DP0`, `APIServer`), or null. */
  readonly processLabel: string | null;
  readonly numbers: Readonly<Record<string, VllmLoggedNumber>>;
  readonly text: Readonly<Record<string, string>>;
}

export interface VllmSkippedLine {
  readonly line: number;
  /** The line's first 80 characters. */
  readonly text: string;
  readonly reason: string;
}

/** A vLLM DeepSeek-V4 start-up log as read (`parseVllmLog(text)`). */
export interface ParsedVllmLog {
  readonly lines: number;
  /** The version the banner or the engine line printed (`0.25.0`, `0.31.1rc1.dev50+g554340f3d`), or null. */
  readonly version: { readonly text: string; readonly line: number } | null;
  /** `non-default args: {…}` with vLLM's dest keys; null when the log has none (then `launchWords` may give them). */
  readonly args: Readonly<Record<string, unknown>> | null;
  readonly argsSource: { readonly kind: "non-default-args"; readonly line: number } | null;
  /** The launch command's words (after `vllm serve`), or null. */
  readonly launchWords: readonly string[] | null;
  /** The model the log names (args, the banner, `Starting to load model …`), or null. */
  readonly modelName: { readonly text: string; readonly line: number } | null;
  readonly figures: readonly VllmLoggedLine[];
  /** Lines that name a 4-bit DeepSeek layout (`nvfp4_ds_mla`) in any form, prose included: evidence for a cause. */
  readonly layoutMentions: readonly { readonly layout: string; readonly line: number }[];
  readonly skipped: readonly VllmSkippedLine[];
  /** What made the file a vLLM DeepSeek-V4 log, in words. */
  readonly evidence: readonly string[];
}

/** How a figure compares: equal; inside the range the print's rounding allows; or different. */
export type VllmVerdict = "equal" | "within-rounding" | "different";

/** Why a figure differs: an alternative that reproduces it, or a named reason nothing here models it. */
export interface VllmFigureCause {
  /** A stable id: `unlogged-batched-tokens`, `async-scheduling`, `fp4-indexer`, `layer-tuple-stride`, … */
  readonly id: string;
  /** True when recomputing with the alternative gives the logged value. */
  readonly explained: boolean;
  readonly text: string;
}

/** One figure of the comparison. */
export interface VllmFigureComparison {
  readonly name: string;
  readonly line: number;
  readonly source: VllmLineSource;
  readonly logged: string;
  /** Ours at the log's precision (a range `a…b` when the anchor's rounding allows several values); null: input. */
  readonly computed: string | null;
  /** "input": taken from the log as an anchor; "compared"; "not-computed": nothing here computes it. */
  readonly role: "input" | "compared" | "not-computed";
  /** For a compared figure. */
  readonly verdict: VllmVerdict | null;
  readonly why: string;
  readonly cause?: VllmFigureCause;
}

/** One input of the recomputation and where it came from. */
export interface VllmInputSource {
  /** vLLM's dest key (`max_num_batched_tokens`). */
  readonly name: string;
  /** The model's input it sets (`maxNumBatchedTokens`). */
  readonly field: string;
  readonly value: string;
  readonly from: "log-args" | "log-line" | "flag" | "default" | "not-modelled";
  /** The log line, when read from the log. */
  readonly line: number | null;
}

/** Which vLLM's sizing reconciles the log: `--vllm-version`, else the version the log printed, else the default. */
export interface VllmVersionUsed {
  readonly version: string;
  readonly from: "flag" | "log" | "default";
  /** The version the log printed, or null. */
  readonly logVersion: string | null;
  readonly behaviour: VllmVersionBehaviour;
  /** The flag sizes otherwise than the log's version (the flag wins), or the log's version is not one modelled. */
  readonly warning?: { readonly id: "version-flag-differs" | "version-not-modelled"; readonly text: string };
}

/** `check --engine vllm --against-log FILE`: the log's figures against `planVllmKvCache`. */
export interface VllmLogComparison {
  readonly engine: "vllm";
  readonly version: string | null;
  readonly model: string;
  readonly evidence: readonly string[];
  readonly inputs: readonly VllmInputSource[];
  readonly figures: readonly VllmFigureComparison[];
  readonly skipped: readonly VllmSkippedLine[];
  readonly versionUsed: VllmVersionUsed;
  /** Set when no figure could be compared (only a launch, or a layout nothing here models). */
  readonly nothingCompared?: string;
}
