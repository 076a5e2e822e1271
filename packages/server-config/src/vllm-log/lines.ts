/**
 * The vLLM start-up messages the log reader recognises, one pattern each, and what a line is: a log line (vLLM's
 * `(Worker_TP0 pid=514) INFO 07-12 02:34:00 [file.py:620] ` prefix, a journald or docker prefix) or a quote in
 * prose, a table or a bench note. The formats were checked against vLLM's source per version
 * (docs/reference/vllm-kv-cache.md §15); a pattern matches anywhere in a line, since people quote them inline.
 */
import type { VllmFigureKind } from "./types.js";

export interface MessagePattern {
  kind: VllmFigureKind;
  pattern: RegExp;
  /** Names of the numeric groups, in order (null: a group that is text, named in `texts`). */
  numbers: readonly (string | null)[];
  texts?: readonly (string | null)[];
}

const NUM = String.raw`(-?\d[\d,]*(?:\.\d+)?)`;

export const MESSAGES: readonly MessagePattern[] = [
  { kind: "weights-gib", pattern: new RegExp(`Model loading took ${NUM} GiB`), numbers: ["weightsGiB"] },
  {
    kind: "available-kv-gib",
    pattern: new RegExp(`Available KV cache memory: ${NUM} GiB(?: \\(([^)]*)\\))?`),
    numbers: ["availableKvGiB", null],
    texts: [null, "suffix"],
  },
  { kind: "kv-cache-tokens", pattern: new RegExp(`GPU KV cache size: ${NUM} tokens`), numbers: ["kvCacheTokens"] },
  {
    kind: "max-concurrency",
    pattern: new RegExp(`Maximum concurrency for ${NUM} tokens per request: ${NUM}x`),
    numbers: ["maxModelLen", "maxConcurrency"],
  },
  { kind: "num-gpu-blocks", pattern: new RegExp(`# (?:GPU|cuda|CUDA) blocks: ${NUM}`), numbers: ["numGpuBlocks"] },
  {
    kind: "num-gpu-blocks-override",
    pattern: new RegExp(`Overriding num_gpu_blocks=${NUM} with num_gpu_blocks_override=${NUM}`),
    numbers: ["computedBlocks", "numGpuBlocks"],
  },
  {
    kind: "refusal",
    pattern: new RegExp(
      String.raw`To serve at least one request with the models?'s max seq len \(${NUM}\),?\s*\(?${NUM} GiB KV cache ` +
        String.raw`is needed, which is larger than the available KV cache memory \(${NUM} GiB\)\.` +
        String.raw`(?:\s*Based on the available memory,\s*the estimated maximum model length is ${NUM}\.)?`,
    ),
    numbers: ["maxModelLen", "neededGiB", "availableKvGiB", "estimatedMaxModelLen"],
  },
  {
    kind: "block-size",
    pattern: new RegExp(`Setting kv cache block size to ${NUM} for (\\w+) backend`),
    numbers: ["blockSize", null],
    texts: [null, "backend"],
  },
  {
    kind: "kv-format",
    pattern: /Using (?:DeepSeek's|DeepSeek V4(?: padded)?) (\w+) KV cache format/,
    numbers: [null],
    texts: ["layout"],
  },
  {
    kind: "indexer-cache",
    pattern: /Using (\w+) indexer cache for Lightning Indexer/,
    numbers: [null],
    texts: ["indexer"],
  },
  {
    kind: "async-scheduling",
    pattern: /Asynchronous scheduling is (enabled|disabled)/,
    numbers: [null],
    texts: ["state"],
  },
  {
    kind: "chunked-prefill",
    pattern: new RegExp(`Chunked prefill is enabled with max_num_batched_tokens=${NUM}`),
    numbers: ["maxNumBatchedTokens"],
  },
  { kind: "max-model-len", pattern: new RegExp(`Using max model len ${NUM}`), numbers: ["maxModelLen"] },
  {
    kind: "cuda-graph-estimate",
    pattern: new RegExp(`Estimated (?:MRV2 )?CUDA graph memory: ${NUM} GiB`),
    numbers: ["cudaGraphGiB"],
  },
  {
    kind: "independent-draft-groups",
    pattern: new RegExp(`Keeping ${NUM} (\\w+) draft KV layers in ${NUM} independent cache groups`),
    numbers: ["draftLayers", null, "groups"],
    texts: [null, "method", null],
  },
];

/** The start of a refusal whose rest a person wrapped onto the next lines. */
export const REFUSAL_START = /To serve at least one request with the models?'s max seq len/;

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are control characters.
export const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** vLLM's logging prefix: `(Process pid=N) ` then `LEVEL MM-DD HH:MM:SS [file.py:N] `, either part alone. */
const PROCESS = /\(([A-Za-z][\w-]*)(?: pid=\d+)(?:, ip=[\d.]+)?\)\s*/;
const LEVEL = /\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\s+\d{2}-\d{2}\s+[\d:.]+\s+\[[\w./-]+\.py:\d+\]\s*/;
/** Before vLLM's own prefix: journald (`Aug 18 22:22:20 host vllm[123]: `), docker compose, kubectl timestamps. */
const OUTER = [/^[A-Z][a-z]{2} +\d+ [\d:]+ \S+ [\w.-]+\[\d+\]: /, /^[\w.-]+\s+\|\s/, /^\d{4}-\d{2}-\d{2}T[\d:.]+Z?\s/];

export interface ClassifiedVllmLine {
  /** "log": vLLM wrote the line (a prefix, or the message starts it); "quoted": prose, a table, a note. */
  source: "log" | "quoted";
  processLabel: string | null;
  /** The text after the prefixes (the whole line for a quote). */
  message: string;
}

export function classifyVllmLine(raw: string): ClassifiedVllmLine {
  let rest = raw.replace(ANSI, "");
  for (const outer of OUTER) rest = rest.replace(outer, "");
  const proc = PROCESS.exec(rest);
  const level = LEVEL.exec(rest);
  if (proc?.index === 0 || level?.index === 0 || (proc && level && level.index === proc.index + proc[0].length)) {
    const after = level ? rest.slice(level.index + level[0].length) : rest.slice((proc as RegExpExecArray)[0].length);
    return { source: "log", processLabel: proc ? proc[1]! : null, message: after };
  }
  const trimmed = rest.trim();
  // A bare message (a log pasted without its prefix, in a code block): it starts with one of vLLM's messages.
  const bare = MESSAGES.some((m) => m.pattern.exec(trimmed)?.index === 0) || REFUSAL_START.exec(trimmed)?.index === 0;
  return { source: bare ? "log" : "quoted", processLabel: null, message: trimmed };
}

export const excerpt = (raw: string): string => raw.replace(ANSI, "").trim().slice(0, 80);
