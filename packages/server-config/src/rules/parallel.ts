/**
 * Parallelism rules SGLang does not check at start-up: attention DP ranks without a request (V-DP1) and the DeepEP
 * low-latency dispatch bound (V-E1).
 */
import type { ResolveContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

/**
 * V-DP1 (ours): with attention DP every rank runs floor(max running requests / dp size) requests. Zero is an error
 * (the ranks start and never admit a request); a remainder is a warning (those slots are never used).
 */
export function dpAttentionRequestsRule({ args, derived, facts }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-DP1");
  if (!args.enableDpAttention) return out;
  const dpSize = derived.attnDpSize;
  const perRank = derived.mrrPerWorker;
  const mrr = facts.maxRunningRequests;
  const params = { maxRunningRequests: mrr, dpSize, perRank };
  if (perRank === 0)
    add(
      "error",
      "DP_ATTENTION_REQUESTS",
      "maxRunningRequests",
      mrr,
      `--max-running-requests ${mrr} over --dp-size ${dpSize} attention DP ranks leaves floor(${mrr} / ${dpSize}) = 0 requests per rank: no rank can run a request; set --max-running-requests to at least ${dpSize} (a multiple of ${dpSize})`,
      params,
    );
  else if (mrr % dpSize !== 0)
    add(
      "warning",
      "DP_ATTENTION_REQUESTS",
      "maxRunningRequests",
      mrr,
      `--max-running-requests ${mrr} is not a multiple of --dp-size ${dpSize}: each attention DP rank runs floor(${mrr} / ${dpSize}) = ${perRank}, so ${mrr - perRank * dpSize} of the requested slots are never used; use ${perRank * dpSize} or ${(perRank + 1) * dpSize}`,
      params,
    );
  return out;
}

/**
 * V-E1 (ours): DeepEP's low-latency dispatch (used for decode under `--deepep-mode auto` and `low_latency`) holds at
 * most SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK tokens per rank; a decode step dispatches every running request
 * of the rank times its verify tokens. Over the bound DeepEP asserts at CUDA-graph capture or at the first full batch.
 */
export function deepepDispatchRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-E1");
  if (args.moeA2aBackend !== "deepep" || args.deepepMode === "normal") return out;
  const cap = args.deepepNumMaxDispatchTokensPerRank;
  const requests = derived.mrrPerWorker;
  const tokensPerRequest = derived.isSpeculative ? Math.max(derived.maxDraftTokens, 1) : 1;
  const tokens = requests * tokensPerRequest;
  if (tokens <= cap) return out;
  const perRank = derived.attnDpSize > 1 ? " per attention DP rank" : "";
  const what =
    tokensPerRequest > 1
      ? `${requests} running requests${perRank} × ${tokensPerRequest} verify tokens`
      : `${requests} running requests${perRank}`;
  const fewer = Math.floor(cap / tokensPerRequest);
  add(
    "error",
    "DEEPEP_DISPATCH",
    "deepepNumMaxDispatchTokensPerRank",
    cap,
    `--moe-a2a-backend deepep (--deepep-mode ${args.deepepMode}) dispatches up to ${what} = ${tokens} tokens per rank in a decode step, above SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=${cap}: set SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=${tokens} or more, lower the running requests to ${fewer * derived.attnDpSize}${perRank ? ` (${fewer} per rank)` : ""}, or use --deepep-mode normal`,
    { tokens, cap, requestsPerRank: requests, tokensPerRequest, deepepMode: args.deepepMode },
  );
  return out;
}
