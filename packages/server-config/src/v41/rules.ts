/**
 * The start-up rules SGLang enforces for a DeepSeek-V4.1 server (docs/reference/deepseek-v4.1.md §6.1), each
 * evaluated on the arguments the V4.1 check read. SGLang's gate is `validate_deepseek_v41_features` in
 * `python/sglang/srt/arg_groups/deepseek_v4_hook.py` (the dsv4.1 branch; stored copies, index ids 68667069405 and
 * 68916615832), and DSpark's own argument handling (`_handle_dspark`, id 58531480726) for the verify width.
 */
import { type ConfigIssue, issuesOf } from "../rules/issue.js";

/** What the V4.1 rules read: the arguments as given (null: not given) and the checkpoint's DSpark block size. */
export interface V41RuleContext {
  /** `--speculative-algorithm` as given; null when none (or "none"). */
  speculativeAlgorithm: string | null;
  speculativeDsparkBlockSize: number | null;
  speculativeNumDraftTokens: number | null;
  /** The checkpoint's `dspark_block_size` (NaN or null when it has none). */
  checkpointBlockSize: number | null;
  model: string;
  enableHisparse: boolean;
  dsv4AttnBackend: string | null;
  ppSize: number;
  disaggregationMode: "null" | "prefill" | "decode";
  dpSize: number;
  enableDpAttention: boolean;
  prefillContextParallel: boolean;
}

/** A V4.1 rule: its issues for one deployment. */
export type V41Rule = (ctx: V41RuleContext) => ConfigIssue[];

/** V41-S1: speculation on V4.1 is DSpark (its bundled draft) or none; SGLang refuses any other algorithm. */
export function v41AlgorithmRule(ctx: V41RuleContext): ConfigIssue[] {
  const { out, add } = issuesOf("V41-S1");
  const algorithm = ctx.speculativeAlgorithm;
  if (algorithm !== null && algorithm.toUpperCase() !== "DSPARK")
    add(
      "error",
      "UNSUPPORTED_ARGUMENT",
      "speculativeAlgorithm",
      algorithm,
      `--speculative-algorithm ${algorithm}: DeepSeek-V4.1 serves speculative decoding only with DSpark, its bundled ` +
        "draft (it has no EAGLE or MTP weights); use --speculative-algorithm DSPARK or drop speculation",
      { speculativeAlgorithm: algorithm, supported: ["DSPARK"] },
    );
  return out;
}

/** V41-S2: DSpark's block size γ is at least 1 and its verify width is γ + 1 (SGLang raises on both). */
export function v41DsparkWidthRule(ctx: V41RuleContext): ConfigIssue[] {
  const { out, add } = issuesOf("V41-S2");
  if (ctx.speculativeAlgorithm?.toUpperCase() !== "DSPARK") return out;
  const checkpoint = Number.isFinite(ctx.checkpointBlockSize) ? ctx.checkpointBlockSize : null;
  const gamma = ctx.speculativeDsparkBlockSize ?? checkpoint;
  const given = ctx.speculativeNumDraftTokens;
  if (gamma === null && given === null)
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeDsparkBlockSize",
      null,
      `DSpark cannot resolve its verify width: ${ctx.model} declares no dspark_block_size; pass ` +
        "--speculative-dspark-block-size (γ; the verify window is γ + 1)",
      { model: ctx.model },
    );
  else if (gamma !== null && gamma <= 0)
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeDsparkBlockSize",
      gamma,
      `--speculative-dspark-block-size ${gamma}: γ must be at least 1 (the verify window γ + 1 is at least 2)`,
      { gamma },
    );
  else if (gamma !== null && given !== null && given !== gamma + 1)
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeNumDraftTokens",
      given,
      `DSpark verify width --speculative-num-draft-tokens ${given} must equal γ + 1 (= ${gamma + 1} for γ = ${gamma}); ` +
        `drop the flag or set it to ${gamma + 1}`,
      { given, required: gamma + 1, gamma },
    );
  else if (gamma === null && given !== null && given < 2)
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeNumDraftTokens",
      given,
      `DSpark verify width --speculative-num-draft-tokens ${given} must be at least 2 (γ + 1 with γ ≥ 1)`,
      { given },
    );
  return out;
}

/** The features `validate_deepseek_v41_features` refuses for V4.1, with the argument that turns each on. */
const UNSUPPORTED: readonly {
  feature: string;
  field: string;
  on: (ctx: V41RuleContext) => unknown;
  fix: string;
}[] = [
  { feature: "HiSparse", field: "enableHisparse", on: (c) => c.enableHisparse || null, fix: "drop --enable-hisparse" },
  {
    feature: "the trtllm DSv4 attention backend (no uniform-FP8 pool for its ratio-1/2 layers)",
    field: "dsv4AttnBackend",
    on: (c) => (c.dsv4AttnBackend === "trtllm" ? c.dsv4AttnBackend : null),
    fix: "drop --dsv4-attn-backend trtllm",
  },
  {
    feature: "pipeline parallelism",
    field: "ppSize",
    on: (c) => (c.ppSize > 1 ? c.ppSize : null),
    fix: "use --pp-size 1 (a later revision admits validated PP layouts with --language-model-only)",
  },
];

/** V41-F1: the server features DeepSeek-V4.1 cannot serve yet (HiSparse, the trtllm backend, PP). */
export function v41FeaturesRule(ctx: V41RuleContext): ConfigIssue[] {
  const { out, add } = issuesOf("V41-F1");
  for (const { feature, field, on, fix } of UNSUPPORTED) {
    const value = on(ctx);
    if (value !== null)
      add("error", "UNSUPPORTED_ARGUMENT", field, value, `DeepSeek-V4.1 does not support ${feature} yet: ${fix}`, {
        feature,
      });
  }
  return out;
}

/** V41-D1: PD disaggregation with DSpark needs DP 1 without attention DP and no context parallelism. */
export function v41PdSpeculationRule(ctx: V41RuleContext): ConfigIssue[] {
  const { out, add } = issuesOf("V41-D1");
  if (ctx.disaggregationMode === "null" || ctx.speculativeAlgorithm === null) return out;
  const conflicts: [string, unknown, boolean][] = [
    ["dpSize", ctx.dpSize, ctx.dpSize !== 1],
    ["enableDpAttention", ctx.enableDpAttention, ctx.enableDpAttention],
    ["prefillContextParallel", ctx.prefillContextParallel, ctx.prefillContextParallel],
  ];
  for (const [field, value, bad] of conflicts)
    if (bad)
      add(
        "error",
        "UNSUPPORTED_ARGUMENT",
        field,
        value,
        `DeepSeek-V4.1 DSpark with --disaggregation-mode ${ctx.disaggregationMode} needs DP 1, no attention DP and ` +
          "no context parallelism (also static verify and the Mooncake transfer, which this check does not read): " +
          "drop the parallel setting or speculation",
        { disaggregationMode: ctx.disaggregationMode },
      );
  return out;
}
