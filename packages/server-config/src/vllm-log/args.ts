/**
 * The inputs of `planVllmKvCache` a vLLM log states: its `non-default args` (vLLM's dest keys) or its launch command's
 * flags, then the log's own lines (the block size it set, the indexer cache, async scheduling, the chunked-prefill
 * budget, the max model len), then the caller's overrides (the CLI's flags), then vLLM's defaults. Each input says
 * where it came from, so a reconciliation can tell a stated input from a default it may try otherwise.
 */
import type { VllmKvInput, VllmSpeculativeMethod } from "../vllm/inputs.js";
import { VLLM_DEFAULTS } from "../vllm/inputs.js";
import { type VllmArgField, VLLM_SERVER_ARGS } from "../vllm-flags.js";
import { launchArgs } from "./launch-args.js";
import type { ParsedVllmLog, VllmInputSource, VllmLoggedLine } from "./types.js";

/** The inputs the log can state, as the model names them. */
export type VllmLogInputs = Pick<
  VllmKvInput,
  | "maxModelLen"
  | "blockSize"
  | "kvCacheDtype"
  | "fp4IndexerCache"
  | "maxNumBatchedTokens"
  | "asyncScheduling"
  | "pipelineParallelSize"
  | "speculative"
  | "numGpuBlocksOverride"
>;

export interface ReadInputs {
  values: Partial<VllmLogInputs> & { kvCacheMemoryBytes?: number };
  sources: VllmInputSource[];
  /** A speculative method or layout the model does not size (DFlash, EAGLE, nvfp4_ds_mla), for the causes. */
  notModelled: { name: string; value: string; line: number | null }[];
}

type Key = keyof ReadInputs["values"];

/** The table's fields the model takes, and how each value is read (null: a value the model does not take). */
const READERS: Readonly<Partial<Record<VllmArgField, { key: Key; read: (v: unknown) => unknown }>>> = {
  maxModelLen: { key: "maxModelLen", read: (v) => posInt(v) },
  blockSize: { key: "blockSize", read: (v) => posInt(v) },
  kvCacheDtype: { key: "kvCacheDtype", read: (v) => (typeof v === "string" ? v : null) },
  maxNumBatchedTokens: { key: "maxNumBatchedTokens", read: (v) => posInt(v) },
  asyncScheduling: { key: "asyncScheduling", read: (v) => (typeof v === "boolean" ? v : null) },
  pipelineParallelSize: { key: "pipelineParallelSize", read: (v) => posInt(v) },
  numGpuBlocksOverride: { key: "numGpuBlocksOverride", read: (v) => posInt(v) },
  kvCacheMemoryBytes: { key: "kvCacheMemoryBytes", read: (v) => posInt(v) },
  speculativeConfig: { key: "speculative", read: speculativeOf },
  attentionConfig: { key: "fp4IndexerCache", read: (v) => fp4Of(v) },
};

/** vLLM's dest key → the table's field, for the fields read here. */
const FIELD_OF_DEST: ReadonlyMap<string, VllmArgField> = new Map(
  (Object.keys(READERS) as VllmArgField[]).map((field) => [VLLM_SERVER_ARGS[field].dest, field]),
);

/** vLLM's dest key of an input, for the report (`maxNumBatchedTokens` → `max_num_batched_tokens`). */
export const destOf = (key: Key): string => {
  const field = (Object.keys(READERS) as VllmArgField[]).find((f) => READERS[f]!.key === key);
  return field ? VLLM_SERVER_ARGS[field].dest : key;
};

function posInt(v: unknown): number | null {
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : null;
}

function fp4Of(v: unknown): boolean | null {
  if (v === null || typeof v !== "object") return null;
  const flag = (v as Record<string, unknown>).use_fp4_indexer_cache;
  return typeof flag === "boolean" ? flag : null;
}

function speculativeOf(v: unknown): VllmKvInput["speculative"] | null {
  const spec = typeof v === "string" ? safeJson(v) : v;
  if (spec === null || typeof spec !== "object") return null;
  const { method, num_speculative_tokens: k } = spec as Record<string, unknown>;
  if ((method !== "mtp" && method !== "dspark") || posInt(k) === null) return null;
  return { method: method as VllmSpeculativeMethod, numSpeculativeTokens: k as number };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** What the log's arguments (non-default args, else the launch command) state. */
function fromArgs(parsed: ParsedVllmLog, out: ReadInputs): void {
  const launch = parsed.args === null && parsed.launchWords ? launchArgs(parsed.launchWords) : null;
  const args = parsed.args ?? launch?.args ?? null;
  if (args !== null) readArgs(args, parsed.argsSource?.line ?? null, "log-args", out);
}

function readArgs(
  args: Readonly<Record<string, unknown>>,
  line: number | null,
  from: "log-args" | "flag",
  out: ReadInputs,
) {
  for (const [dest, raw] of Object.entries(args)) {
    const field = FIELD_OF_DEST.get(dest);
    if (!field || raw === null || raw === undefined) continue;
    const reader = READERS[field]!;
    const value = reader.read(raw);
    if (value === null) {
      if (field !== "attentionConfig") out.notModelled.push({ name: dest, value: show(raw), line });
      continue;
    }
    if (field === "kvCacheDtype" && !/^fp8/.test(value as string)) {
      out.notModelled.push({ name: dest, value: value as string, line });
      continue;
    }
    (out.values as Record<string, unknown>)[reader.key] = value;
    out.sources.push({ name: dest, field: reader.key, value: show(raw), from, line });
  }
}

/**
 * The inputs a dict of vLLM dest keys states (a command line's flags through `launchArgs`): the overrides a caller
 * passes to `readLogInputs`, and the values it leaves out because the model does not take them.
 */
export function inputsFromArgs(args: Readonly<Record<string, unknown>>): {
  overrides: VllmLogOverrides;
  notModelled: ReadInputs["notModelled"];
} {
  const out: ReadInputs = { values: {}, sources: [], notModelled: [] };
  readArgs(args, null, "flag", out);
  return { overrides: out.values, notModelled: out.notModelled };
}

const firstOf = (parsed: ParsedVllmLog, kind: VllmLoggedLine["kind"]) => parsed.figures.find((f) => f.kind === kind);

/** What the log's lines state about inputs its arguments left out. */
function fromLines(parsed: ParsedVllmLog, out: ReadInputs): void {
  const set = (key: Key, value: unknown, line: VllmLoggedLine) => {
    if (out.values[key] !== undefined) return;
    (out.values as Record<string, unknown>)[key] = value;
    out.sources.push({ name: destOf(key), field: key, value: show(value), from: "log-line", line: line.line });
  };
  const len = firstOf(parsed, "max-model-len") ?? firstOf(parsed, "max-concurrency") ?? firstOf(parsed, "refusal");
  if (len) set("maxModelLen", len.numbers.maxModelLen!.value, len);
  const block = firstOf(parsed, "block-size");
  if (block) set("blockSize", block.numbers.blockSize!.value, block);
  const indexer = firstOf(parsed, "indexer-cache");
  if (indexer) set("fp4IndexerCache", /FP4/i.test(indexer.text.indexer!), indexer);
  const async = firstOf(parsed, "async-scheduling");
  if (async) set("asyncScheduling", async.text.state === "enabled", async);
  const chunk = firstOf(parsed, "chunked-prefill");
  if (chunk) set("maxNumBatchedTokens", chunk.numbers.maxNumBatchedTokens!.value, chunk);
  const layout = firstOf(parsed, "kv-format");
  if (layout && layout.text.layout !== "fp8_ds_mla")
    out.notModelled.push({ name: "kv cache format", value: layout.text.layout!, line: layout.line });
  const draft = firstOf(parsed, "independent-draft-groups");
  if (draft)
    out.notModelled.push({
      name: "draft KV groups",
      value: `${draft.numbers.draftLayers!.text} ${draft.text.method} layers in ${draft.numbers.groups!.text} groups`,
      line: draft.line,
    });
}

/** The log's inputs, then `overrides` (the caller's, which win), then the defaults the model would take. */
export type VllmLogOverrides = Partial<VllmLogInputs> & { kvCacheMemoryBytes?: number };

export function readLogInputs(parsed: ParsedVllmLog, overrides: VllmLogOverrides = {}): ReadInputs {
  const out: ReadInputs = { values: {}, sources: [], notModelled: [] };
  fromArgs(parsed, out);
  fromLines(parsed, out);
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (key === "kvCacheDtype" && !/^fp8/.test(String(value))) {
      out.notModelled.push({ name: "kv_cache_dtype", value: String(value), line: null });
      continue;
    }
    out.sources = out.sources.filter((s) => s.field !== key);
    (out.values as Record<string, unknown>)[key] = value;
    out.sources.push({ name: destOf(key as Key), field: key, value: show(value), from: "flag", line: null });
  }
  for (const [key, value] of Object.entries(VLLM_DEFAULTS)) {
    if ((out.values as Record<string, unknown>)[key] !== undefined) continue;
    out.sources.push({ name: destOf(key as Key), field: key, value: show(value), from: "default", line: null });
  }
  return out;
}
