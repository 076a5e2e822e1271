/**
 * The inputs of `planVllmKvCache` a vLLM log states: its `non-default args` (vLLM's dest keys) or its launch command's
 * flags, then the log's own lines (the block size it set, the indexer cache, async scheduling, the chunked-prefill
 * budget, the max model len), then the caller's overrides (the CLI's flags), then vLLM's defaults. Each input says
 * where it came from, so a reconciliation can tell a stated input from a default it may try otherwise.
 */
import type { VllmKvInput, VllmSpeculativeMethod } from "../vllm/inputs.js";
import { VLLM_DEFAULTS } from "../vllm/inputs.js";
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

/** Reads one dest key's value; null when the value is not one the model takes (listed as not modelled). */
const READERS: Readonly<Record<string, { key: Key; read: (v: unknown) => unknown }>> = {
  max_model_len: { key: "maxModelLen", read: (v) => posInt(v) },
  block_size: { key: "blockSize", read: (v) => posInt(v) },
  kv_cache_dtype: { key: "kvCacheDtype", read: (v) => (typeof v === "string" ? v : null) },
  max_num_batched_tokens: { key: "maxNumBatchedTokens", read: (v) => posInt(v) },
  async_scheduling: { key: "asyncScheduling", read: (v) => (typeof v === "boolean" ? v : null) },
  pipeline_parallel_size: { key: "pipelineParallelSize", read: (v) => posInt(v) },
  num_gpu_blocks_override: { key: "numGpuBlocksOverride", read: (v) => posInt(v) },
  kv_cache_memory_bytes: { key: "kvCacheMemoryBytes", read: (v) => posInt(v) },
  speculative_config: { key: "speculative", read: speculativeOf },
  attention_config: { key: "fp4IndexerCache", read: (v) => fp4Of(v) },
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
  const args = parsed.args ?? (parsed.launchWords ? launchArgs(parsed.launchWords) : null);
  if (args === null) return;
  const line = parsed.argsSource?.line ?? null;
  for (const [dest, raw] of Object.entries(args)) {
    const reader = READERS[dest];
    if (!reader || raw === null || raw === undefined) continue;
    const value = reader.read(raw);
    if (value === null) {
      if (dest !== "attention_config") out.notModelled.push({ name: dest, value: show(raw), line });
      continue;
    }
    if (dest === "kv_cache_dtype" && !/^fp8/.test(value as string)) {
      out.notModelled.push({ name: dest, value: value as string, line });
      continue;
    }
    (out.values as Record<string, unknown>)[reader.key] = value;
    out.sources.push({ name: dest, value: show(raw), from: "log-args", line });
  }
}

const firstOf = (parsed: ParsedVllmLog, kind: VllmLoggedLine["kind"]) => parsed.figures.find((f) => f.kind === kind);

/** What the log's lines state about inputs its arguments left out. */
function fromLines(parsed: ParsedVllmLog, out: ReadInputs): void {
  const set = (key: Key, name: string, value: unknown, line: VllmLoggedLine) => {
    if (out.values[key] !== undefined) return;
    (out.values as Record<string, unknown>)[key] = value;
    out.sources.push({ name, value: show(value), from: "log-line", line: line.line });
  };
  const len = firstOf(parsed, "max-model-len") ?? firstOf(parsed, "max-concurrency") ?? firstOf(parsed, "refusal");
  if (len) set("maxModelLen", "max_model_len", len.numbers.maxModelLen!.value, len);
  const block = firstOf(parsed, "block-size");
  if (block) set("blockSize", "block_size", block.numbers.blockSize!.value, block);
  const indexer = firstOf(parsed, "indexer-cache");
  if (indexer) set("fp4IndexerCache", "use_fp4_indexer_cache", /FP4/i.test(indexer.text.indexer!), indexer);
  const async = firstOf(parsed, "async-scheduling");
  if (async) set("asyncScheduling", "async_scheduling", async.text.state === "enabled", async);
  const chunk = firstOf(parsed, "chunked-prefill");
  if (chunk) set("maxNumBatchedTokens", "max_num_batched_tokens", chunk.numbers.maxNumBatchedTokens!.value, chunk);
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
    out.sources = out.sources.filter((s) => keyOfSource(s.name) !== key);
    (out.values as Record<string, unknown>)[key] = value;
    out.sources.push({ name: key, value: show(value), from: "flag", line: null });
  }
  for (const [key, value] of Object.entries(VLLM_DEFAULTS)) {
    if ((out.values as Record<string, unknown>)[key] !== undefined) continue;
    out.sources.push({ name: key, value: show(value), from: "default", line: null });
  }
  return out;
}

function keyOfSource(name: string): string {
  if (name === "use_fp4_indexer_cache" || name === "attention_config") return "fp4IndexerCache";
  return READERS[name]?.key ?? name;
}
