/**
 * vLLM's arguments for one DeepSeek-V4 deployment, resolved: the values given (already typed by the flag table's
 * ranges), the defaults vLLM fills in, and why each value is what it is. The speculative and attention configs are
 * read from their JSON here; a key or method the model does not know is a ServerConfigError naming it.
 */
import { ServerConfigError } from "../errors.js";
import { VLLM_ARG_ENTRIES, type VllmArgField } from "../vllm-flags.js";
import { type VllmDerivedMaxLenModel, vllmDerivedMaxModelLen } from "./derived-max-len.js";
import { VLLM_DEFAULTS, type VllmSpeculativeMethod } from "./inputs.js";

export type VllmArgValues = Partial<Record<VllmArgField, string | number | boolean | null>>;

/** Where a resolved value came from. */
export type VllmArgSource = "given" | "default" | "model" | "engine";

export interface VllmResolvedArg {
  field: VllmArgField;
  /** vLLM's key (`max_model_len`). */
  dest: string;
  value: string | number | boolean | null;
  source: VllmArgSource;
  /** Why, when vLLM (not the user) picked the value. */
  note: string | null;
}

export interface VllmSpeculative {
  method: VllmSpeculativeMethod;
  numSpeculativeTokens: number;
}

export interface VllmResolvedArgs {
  args: VllmResolvedArg[];
  maxModelLen: number;
  /** `--max-model-len -1`: vLLM fits the longest length the memory allows (resolved after sizing). */
  autoFitMaxModelLen: boolean;
  blockSize: number;
  kvCacheDtype: string;
  maxNumBatchedTokens: number;
  asyncScheduling: boolean;
  speculative: VllmSpeculative | null;
  fp4IndexerCache: boolean;
}

/** The model facts the resolution needs: its length and rope scaling (vLLM's derived max length). */
export type VllmArgsModel = VllmDerivedMaxLenModel;

const METHODS: Readonly<Record<string, VllmSpeculativeMethod>> = { mtp: "mtp", deepseek_mtp: "mtp", dspark: "dspark" };

function parseJsonArg(field: string, raw: unknown): Record<string, unknown> | null {
  if (raw === null || raw === undefined) return null;
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ServerConfigError("INVALID_TYPE", field, raw, "must be a JSON object");
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ServerConfigError("INVALID_TYPE", field, raw, "must be a JSON object");
  return value as Record<string, unknown>;
}

/** `--speculative-config`: the method and `num_speculative_tokens` (other keys do not size the cache). */
export function readSpeculativeConfig(raw: unknown, field = "speculativeConfig"): VllmSpeculative | null {
  const spec = parseJsonArg(field, raw);
  if (spec === null) return null;
  const method = spec.method;
  if (typeof method !== "string" || !Object.hasOwn(METHODS, method))
    throw new ServerConfigError("INVALID_ARGUMENT", `${field}.method`, method, "must be mtp, deepseek_mtp or dspark", {
      choices: Object.keys(METHODS),
    });
  const k = spec.num_speculative_tokens;
  if (typeof k !== "number" || !Number.isInteger(k) || k < 1 || k > 64)
    throw new ServerConfigError(
      k === undefined || typeof k === "number" ? "INVALID_ARGUMENT" : "INVALID_TYPE",
      `${field}.num_speculative_tokens`,
      k,
      "must be an integer in [1, 64] (the draft tokens per step)",
      { min: 1, max: 64 },
    );
  return { method: METHODS[method]!, numSpeculativeTokens: k };
}

/** `--attention-config`: `use_fp4_indexer_cache` (a boolean), the one key that sizes the cache. */
export function readFp4IndexerCache(raw: unknown, field = "attentionConfig"): boolean {
  const config = parseJsonArg(field, raw);
  const v = config?.use_fp4_indexer_cache;
  if (v === undefined) return false;
  // vLLM validates the config with pydantic, whose booleans also take these words (`=True` from a dotted flag).
  if (typeof v === "string" && /^(true|1|yes|on)$/i.test(v)) return true;
  if (typeof v === "string" && /^(false|0|no|off)$/i.test(v)) return false;
  if (typeof v !== "boolean")
    throw new ServerConfigError("INVALID_TYPE", `${field}.use_fp4_indexer_cache`, v, "must be true or false");
  return v;
}

/** vLLM's pick for each field left unset, with why. */
function engineDefault(field: VllmArgField, model: VllmArgsModel): { value: VllmResolvedArg["value"]; note: string } {
  switch (field) {
    case "maxModelLen": {
      const derived = vllmDerivedMaxModelLen(model);
      const note =
        derived.ropeDetail === null
          ? "the model's max_position_embeddings"
          : `the model's rope_scaling ${derived.ropeDetail}`;
      return { value: derived.maxTokens, note };
    }
    case "blockSize":
      return { value: VLLM_DEFAULTS.blockSize, note: "DeepSeek-V4's attention backend prefers 256" };
    case "maxNumBatchedTokens":
      return { value: VLLM_DEFAULTS.maxNumBatchedTokens, note: "vLLM's API-server default on a large GPU" };
    case "asyncScheduling":
      return { value: VLLM_DEFAULTS.asyncScheduling, note: "on by default" };
    case "enablePrefixCaching":
      return { value: true, note: "on by default" };
    default:
      return { value: null, note: "unset" };
  }
}

export function resolveVllmArgs(given: VllmArgValues, model: VllmArgsModel): VllmResolvedArgs {
  const args = VLLM_ARG_ENTRIES.map(([field, entry]): VllmResolvedArg => {
    const value = given[field];
    if (value !== undefined && value !== null) return { field, dest: entry.dest, value, source: "given", note: null };
    if (entry.default !== null) return { field, dest: entry.dest, value: entry.default, source: "default", note: null };
    const picked = engineDefault(field, model);
    const source = field === "maxModelLen" ? "model" : "engine";
    return { field, dest: entry.dest, value: picked.value, source, note: picked.note };
  });
  const get = (field: VllmArgField) => args.find((a) => a.field === field)!.value;
  const maxModelLen = get("maxModelLen") as number;
  if (maxModelLen === 0)
    throw new ServerConfigError("INVALID_ARGUMENT", "maxModelLen", 0, "must be a length >= 1, or -1 (fit to memory)");
  return {
    args,
    maxModelLen: maxModelLen === -1 ? vllmDerivedMaxModelLen(model).maxTokens : maxModelLen,
    autoFitMaxModelLen: maxModelLen === -1,
    blockSize: get("blockSize") as number,
    kvCacheDtype: get("kvCacheDtype") as string,
    maxNumBatchedTokens: get("maxNumBatchedTokens") as number,
    asyncScheduling: get("asyncScheduling") as boolean,
    speculative: readSpeculativeConfig(get("speculativeConfig")),
    fp4IndexerCache: readFp4IndexerCache(get("attentionConfig")),
  };
}
