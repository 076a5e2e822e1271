/**
 * The longest length vLLM derives from a DeepSeek-V4 checkpoint's config.json, the number `--max-model-len` is
 * compared with (VL-R5, VL-L1) and the default when it is unset. Read in vLLM's `_get_and_verify_max_len`
 * (`vllm/config/model.py` at `18ec6629`, D50): the smallest length key (for DeepSeek-V4: `max_position_embeddings`),
 * then, for a rope scaling of a type other than su / longrope / llama3, times its `factor`; a `yarn` rope takes
 * `original_max_position_embeddings` as the base instead.
 */
import type { ModelRopeScaling } from "../presets.js";

/** Rope types whose factor vLLM does not apply to the length (the model's length keys already count it). */
export const VLLM_UNSCALED_ROPE_TYPES: readonly string[] = ["su", "longrope", "llama3"];

export interface VllmDerivedMaxLenModel {
  maxPositionEmbeddings: number;
  /** config.json's `rope_scaling`; absent or null: none. */
  ropeScaling?: ModelRopeScaling | null;
}

export interface VllmDerivedMaxLen {
  /** Tokens. vLLM compares a given integer length with the (maybe fractional) product; flooring keeps `>` exact. */
  maxTokens: number;
  /** What decided it: `rope_scaling` only when the rope changed the number. */
  key: "max_position_embeddings" | "rope_scaling";
  /** The rope's arithmetic when it decided (`original_max_position_embeddings 65536 × factor 16`), else null. */
  ropeDetail: string | null;
}

export function vllmDerivedMaxModelLen(model: VllmDerivedMaxLenModel): VllmDerivedMaxLen {
  const positions = model.maxPositionEmbeddings;
  const rope = model.ropeScaling ?? null;
  const unchanged: VllmDerivedMaxLen = { maxTokens: positions, key: "max_position_embeddings", ropeDetail: null };
  if (rope === null || VLLM_UNSCALED_ROPE_TYPES.includes(rope.type)) return unchanged;
  // vLLM applies a missing factor as 1; a yarn rope's base is its original length (the config reader requires it).
  const factor = rope.factor ?? 1;
  const yarn = rope.type === "yarn" && rope.originalMaxPositionEmbeddings !== null;
  const base = yarn ? rope.originalMaxPositionEmbeddings! : positions;
  const maxTokens = Math.floor(base * factor);
  if (maxTokens === positions) return unchanged;
  const baseText = yarn ? `original_max_position_embeddings ${base}` : `max_position_embeddings ${base}`;
  return { maxTokens, key: "rope_scaling", ropeDetail: `${rope.type}: ${baseText} × factor ${factor}` };
}
