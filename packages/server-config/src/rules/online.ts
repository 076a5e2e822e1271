/**
 * Online c128 compress with speculation (docs/reference/startup-rules.md §6): only the experimental EAGLE path
 * (V-S6), which needs a draft count (V-S7) and serves at most the kernels' 8 verify tokens (V-S11).
 */
import type { ResolveContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

/**
 * The most verify tokens online c128 MTP serves: the online-MTP kernels and their controller keep at most 8 draft
 * banks (`MAX_VERIFY_TOKENS` of @dsv4-kv/online-mtp-controller, which this package does not depend on).
 */
export const ONLINE_C128_MAX_VERIFY_TOKENS = 8;

function onlineWithSpeculation({ derived }: ResolveContext): boolean {
  return derived.onlineC128 && derived.isSpeculative;
}

/** The experimental online-MTP path is allowed: EAGLE with SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1. */
function experimentalPath(ctx: ResolveContext): boolean {
  return ctx.args.onlineC128Mtp && ctx.derived.speculativeAlgorithm === "EAGLE";
}

/** V-S6: online compress runs with speculation only on the experimental EAGLE path. */
export function onlineSpeculationRule(ctx: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S6");
  if (!onlineWithSpeculation(ctx) || experimentalPath(ctx)) return out;
  const { args, facts, derived } = ctx;
  const eagle = derived.speculativeAlgorithm === "EAGLE";
  add(
    "error",
    "ONLINE_C128_MTP",
    "onlineCompress",
    true,
    `SGLANG_OPT_USE_ONLINE_COMPRESS does not support speculative decode (MTP) yet, except the experimental EAGLE topk=1 path gated by SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1 (algorithm ${facts.rawAlgorithm}${args.onlineC128Mtp ? "" : ", experimental switch off"}); turn --online-compress off${eagle ? " or add --online-c128-mtp" : ""}${args.onlineC128Mtp ? "" : " (V-S9: online c128 does not support MTP)"}`,
    { algorithm: facts.rawAlgorithm, onlineC128Mtp: args.onlineC128Mtp },
  );
  return out;
}

/** V-S7: experimental online c128 MTP needs a draft count (error); when it has one, a warning that it is on. */
export function onlineDraftCountRule(ctx: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S7");
  if (!onlineWithSpeculation(ctx) || !experimentalPath(ctx)) return out;
  const maxDraftTokens = ctx.derived.maxDraftTokens;
  if (!maxDraftTokens)
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "maxSpeculativeNumDraftTokens",
      maxDraftTokens,
      "SGLANG_EXPERIMENTAL_ONLINE_C128_MTP requires speculative_num_draft_tokens to be set (set --speculative-num-steps / --speculative-num-draft-tokens)",
      { maxDraftTokens },
    );
  else
    add(
      "warning",
      "EXPERIMENTAL",
      "onlineC128Mtp",
      true,
      `experimental online c128 MTP is on (${maxDraftTokens} draft banks): validate correctness carefully`,
      { draftBanks: maxDraftTokens },
    );
  return out;
}

/**
 * V-S11 (ours): experimental online c128 MTP verifies at most 8 tokens. SGLang's configurator sizes any number of
 * draft banks and starts; the online-MTP kernels and the controller refuse D > 8 at the first verify.
 */
export function onlineVerifyWidthRule(ctx: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S11");
  if (!onlineWithSpeculation(ctx) || !experimentalPath(ctx)) return out;
  const maxDraftTokens = ctx.derived.maxDraftTokens;
  const max = ONLINE_C128_MAX_VERIFY_TOKENS;
  if (maxDraftTokens > max) {
    const adaptive = ctx.derived.adaptiveCandidates != null;
    const fix = adaptive
      ? `keep every adaptive candidate at most ${max - 1} steps`
      : `lower --speculative-num-steps to at most ${max - 1}`;
    add(
      "error",
      "ONLINE_MTP_VERIFY_TOKENS",
      "speculativeNumDraftTokens",
      maxDraftTokens,
      `experimental online c128 MTP verifies at most ${max} draft tokens (its kernels keep ${max} draft banks), but this configuration verifies up to ${maxDraftTokens}: ${fix}, or turn --online-compress off`,
      { maxDraftTokens, max, adaptive },
    );
  }
  return out;
}
