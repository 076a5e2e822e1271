/**
 * Context-length rules: the model's positions (V-C1), and, once the pools are sized, whether a request of the full
 * context length can be admitted at all (V-C2, V-C3).
 */
import type { ResolveContext, SizedContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

const n = (v: number) => v.toLocaleString("en-US");

/**
 * V-C1 (ours): --context-length at most the model's max_position_embeddings. SGLang refuses a longer one unless
 * SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, and then serves positions the model was never trained on.
 */
export function contextPositionsRule({ args, model }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-C1");
  const contextLength = args.contextLength;
  const positions = model.maxPositionEmbeddings;
  if (contextLength != null && contextLength > positions)
    add(
      "error",
      "CONTEXT_LENGTH",
      "contextLength",
      contextLength,
      `--context-length ${contextLength} exceeds the ${n(positions)} positions of ${model.name} (max_position_embeddings): tokens past position ${positions} have no trained position; set --context-length ${positions} or less, or drop it (the model's length is the default)`,
      { contextLength, maxPositionEmbeddings: positions, model: model.name },
    );
  return out;
}

/**
 * V-C2 (ours): the full KV pool of a worker holds a request of the context length. SGLang caps a request's length at
 * the pool (max_total_num_tokens) and refuses longer prompts at run time, so the advertised context is never served.
 */
export function contextPoolRule({ derived, sizing }: SizedContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-C2");
  const pool = sizing.sizes.maxTotalNumTokens;
  const contextLen = derived.contextLen;
  if (pool > 0 && contextLen > pool)
    add(
      "warning",
      "CONTEXT_EXCEEDS_POOL",
      "contextLength",
      contextLen,
      `the context length ${n(contextLen)} does not fit the full KV pool of ${n(pool)} tokens per worker: a request longer than the pool is refused at run time; lower --context-length to ${pool} or raise the KV budget (--mem-fraction-static, fewer running requests, more ranks)`,
      { contextLen, poolTokens: pool },
    );
  return out;
}

/**
 * V-C3 (ours, from sglang#24523): a PD prefill node caps its token budget at the SWA pool, so prompts longer than
 * the SWA pool are refused there although the full pool holds them.
 */
export function prefillSwaCapRule({ args, derived, sizing }: SizedContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-C3");
  const swa = sizing.sizes.swaTokens;
  const full = sizing.sizes.maxTotalNumTokens;
  const contextLen = derived.contextLen;
  if (args.disaggregationMode === "prefill" && swa > 0 && swa < full && contextLen > swa)
    add(
      "warning",
      "CONTEXT_EXCEEDS_POOL",
      "swaFullTokensRatio",
      derived.swaRatio,
      `on a PD prefill node SGLang caps the token budget at the SWA pool (${n(swa)} tokens, --swa-full-tokens-ratio ${derived.swaRatio}), below the context length ${n(contextLen)}: longer prompts are refused; raise --swa-full-tokens-ratio to about ${Math.min(1, Math.ceil((contextLen / full) * 100) / 100)} or lower --context-length to ${swa}`,
      { swaTokens: swa, poolTokens: full, contextLen, swaFullTokensRatio: derived.swaRatio },
    );
  return out;
}
