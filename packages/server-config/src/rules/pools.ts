/**
 * Pool-shape rules: every compress-state ring keeps a verify's committed tail resident (V-S8), and the model's
 * pool and layer shape can be built (V-K1).
 */
import { type DraftExceedsRingParams, draftExceedsRingText, ringDraftViolations } from "@dsv4-kv/memory-pool";
import type { ResolveContext } from "./context.js";
import { type ConfigIssue, issuesOf, makeIssue } from "./issue.js";

/** What V-S8 is built from: the memory pool's DRAFT_EXCEEDS_RING params, and the advisor's words once known. */
export interface RingDraftParams {
  ratio?: unknown;
  ringSize?: unknown;
  writePad?: unknown;
  draftTokens?: unknown;
  adaptive: boolean;
  /** The advisor's ring and its cost (check.ts adds it after sizing): a param of its own, shown after the rule. */
  advice?: string;
}

/** The V-S8 issue, its text built once from its params (memory-pool's `draftExceedsRingText`, then these). */
export function ringDraftIssue(params: RingDraftParams): ConfigIssue {
  const { draftTokens } = params;
  const adaptive = params.adaptive ? ` (the largest adaptive draft count, ${draftTokens}, is checked)` : "";
  const advice = params.advice === undefined ? "" : `. Advisor: ${params.advice}`;
  return makeIssue({
    rule: "V-S8",
    severity: "error",
    code: "DRAFT_EXCEEDS_RING",
    field: "speculativeNumDraftTokens",
    value: draftTokens,
    text: `${draftExceedsRingText(params as DraftExceedsRingParams, "startup")}${adaptive}${advice}`,
    params: { ...params },
  });
}

/** A V-S8 issue with the advisor's words as its `advice` param (matched on `params.ratio` by the caller). */
export function withRingAdvice(issue: ConfigIssue, advice: string): ConfigIssue {
  return ringDraftIssue({ ...(issue.params as unknown as RingDraftParams), advice });
}

/** V-S8: the max draft tokens fit every ring's write pad, on every pipeline stage, each ratio reported once. */
export function ringDraftRule({ args, derived, facts }: ResolveContext): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  if (!derived.isSpeculative || derived.speculativeAlgorithm == null || facts.stages == null) return out;
  const seenRatios = new Set<unknown>();
  for (const stage of facts.stages) {
    for (const e of ringDraftViolations(stage, derived.maxDraftTokens, derived.onlineC128)) {
      if (seenRatios.has(e.params.ratio)) continue;
      seenRatios.add(e.params.ratio);
      out.push(ringDraftIssue({ ...e.params, adaptive: args.speculativeAdaptive }));
    }
  }
  return out;
}

/** V-K1: the FP4 indexer is HIP only (warning); the pool shape builds; the pipeline has a layer per stage. */
export function poolShapeRule({ args, model, facts }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-K1");
  if (args.enableDeepseekV4Fp4Indexer && args.platform !== "hip")
    add(
      "warning",
      "NOT_MODELLED",
      "enableDeepseekV4Fp4Indexer",
      true,
      "the FP4 indexer applies to ROCm/HIP only; the FP8 indexer (132 B/token) is sized",
      { platform: args.platform },
    );
  const pool = facts.poolError;
  if (pool != null) add("error", pool.code, pool.field, pool.value, pool.message, { ...pool.params });
  if (args.ppSize > model.numHiddenLayers)
    add(
      "error",
      "INVALID_ARGUMENT",
      "ppSize",
      args.ppSize,
      `--pp-size ${args.ppSize} exceeds the ${model.numHiddenLayers} layers of ${model.name}`,
      { ppSize: args.ppSize, layers: model.numHiddenLayers },
    );
  return out;
}
