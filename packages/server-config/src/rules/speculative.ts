/**
 * The speculative-decoding rules (docs/reference/startup-rules.md §3, §5): the algorithm (V-A1), arguments without
 * one (V-S0), EAGLE's top-k (V-A2), adaptive steps (V-S3), EAGLE's steps and draft tokens (V-S2), DSpark's width
 * (V-S1), the declared maximum (V-S5) and the checkpoint's draft weights (V-S10).
 */
import { SPECULATIVE_ALGORITHMS_ACCEPTED } from "../schema.js";
import { ARCH, type ResolveContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

/** V-A1: EAGLE or DSPARK, exactly as spelled (the DSV4 check runs before NEXTN aliasing and upper-casing). */
export function algorithmRule({ facts }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-A1");
  const raw = facts.rawAlgorithm;
  if (raw == null || (SPECULATIVE_ALGORITHMS_ACCEPTED as readonly string[]).includes(raw)) return out;
  const hint =
    raw.toUpperCase() === "NEXTN" || raw.toUpperCase() === "EAGLE"
      ? "use --speculative-algorithm EAGLE (the DSV4 check runs before NEXTN aliasing and upper-casing)"
      : "use --speculative-algorithm EAGLE or DSPARK, or drop speculative decoding";
  add(
    "error",
    "UNSUPPORTED_ARGUMENT",
    "speculativeAlgorithm",
    raw,
    `Only EAGLE (and DSPARK) speculative algorithms are supported for ${ARCH} (got --speculative-algorithm ${raw}); ${hint}`,
    { speculativeAlgorithm: raw, supported: [...SPECULATIVE_ALGORITHMS_ACCEPTED] },
  );
  return out;
}

const SPECULATIVE_FIELDS = [
  "speculativeNumSteps",
  "speculativeEagleTopk",
  "speculativeNumDraftTokens",
  "speculativeDsparkBlockSize",
] as const;

/** V-S0: speculative arguments without an algorithm are ignored (SGLang ignores them silently). */
export function ignoredSpeculativeRule({ args, facts }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S0");
  if (facts.rawAlgorithm != null) return out;
  for (const field of SPECULATIVE_FIELDS) {
    if (args[field] != null)
      add(
        "warning",
        "IGNORED_ARGUMENT",
        field,
        args[field],
        `${field} = ${args[field]} is ignored: no --speculative-algorithm is set`,
      );
  }
  return out;
}

/** V-A2: EAGLE runs with top-k 1 (unset fails too). */
export function eagleTopkRule({ derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-A2");
  const topk = derived.speculativeEagleTopk;
  if (derived.speculativeAlgorithm === "EAGLE" && topk !== 1)
    add(
      "error",
      "UNSUPPORTED_ARGUMENT",
      "speculativeEagleTopk",
      topk,
      `Only EAGLE with topk == 1 is supported for ${ARCH}; --speculative-eagle-topk is ${topk ?? "unset"}: set --speculative-eagle-topk 1`,
      { speculativeEagleTopk: topk, required: 1 },
    );
  return out;
}

/** V-S3: adaptive EAGLE's steps are one of its candidates. */
export function adaptiveStepsRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S3");
  const candidates = derived.adaptiveCandidates;
  const steps = derived.speculativeNumSteps;
  if (derived.speculativeAlgorithm !== "EAGLE" || !args.speculativeAdaptive || candidates == null) return out;
  if (steps != null && !candidates.includes(steps))
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeNumSteps",
      steps,
      `adaptive speculative decoding: --speculative-num-steps ${steps} is not one of the candidate steps [${candidates.join(", ")}]; pick one of them`,
      { speculativeNumSteps: steps, candidates },
    );
  return out;
}

/** V-S2: EAGLE has steps ≥ 1 (error) and verifies steps + 1 draft tokens (a corrected value is a warning). */
export function eagleStepsRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S2");
  if (derived.speculativeAlgorithm !== "EAGLE") return out;
  const steps = derived.speculativeNumSteps;
  if (!args.speculativeAdaptive && (steps == null || steps < 1)) {
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeNumSteps",
      steps,
      "EAGLE needs --speculative-num-steps (≥ 1); with topk 1 the verify window is steps + 1 draft tokens, e.g. --speculative-num-steps 3",
      { speculativeNumSteps: steps },
    );
    return out;
  }
  const given = args.speculativeNumDraftTokens;
  if (steps == null || given == null || derived.speculativeEagleTopk !== 1 || given === steps + 1) return out;
  const corrected = steps + 1;
  add(
    "warning",
    "CORRECTED_ARGUMENT",
    "speculativeNumDraftTokens",
    given,
    `--speculative-num-draft-tokens ${given} was corrected to ${corrected} = --speculative-num-steps ${steps} + 1 (EAGLE with topk 1); to verify ${given} tokens set --speculative-num-steps ${given - 1}`,
    { given, corrected, speculativeNumSteps: steps },
  );
  return out;
}

/** V-S1: DSpark's verify width is its block size γ + 1, γ from the flag or the draft checkpoint. */
export function dsparkWidthRule({ args, model, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S1");
  if (derived.speculativeAlgorithm !== "DSPARK") return out;
  const gamma = args.speculativeDsparkBlockSize ?? model.dsparkBlockSize;
  if (gamma == null) {
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeDsparkBlockSize",
      null,
      `DSpark cannot resolve its verify width: ${model.name} declares no dspark_block_size; pass --speculative-dspark-block-size (γ; the verify window is γ + 1)`,
      { model: model.name },
    );
  } else if (gamma <= 0) {
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "speculativeDsparkBlockSize",
      gamma,
      `--speculative-dspark-block-size ${gamma}: γ must be ≥ 1 (the verify window γ + 1 must be at least 2)`,
      { gamma },
    );
  } else {
    const required = gamma + 1;
    const given = args.speculativeNumDraftTokens;
    if (given != null && given !== required)
      add(
        "error",
        "SPECULATIVE_ARGUMENTS",
        "speculativeNumDraftTokens",
        given,
        `DSpark verify width --speculative-num-draft-tokens ${given} must equal gamma + 1 (= ${required} for gamma=${gamma}); drop the flag or set it to ${required}`,
        { given, required, gamma },
      );
  }
  return out;
}

/** V-S5: a declared max_speculative_num_draft_tokens covers the configured draft tokens. */
export function declaredMaximumRule({ args, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S5");
  const declared = args.maxSpeculativeNumDraftTokens;
  const draftTokens = derived.draftTokens;
  if (declared != null && derived.speculativeAlgorithm != null && declared < draftTokens)
    add(
      "error",
      "SPECULATIVE_ARGUMENTS",
      "maxSpeculativeNumDraftTokens",
      declared,
      `The speculative algorithm declared max_speculative_num_draft_tokens=${declared}, below the configured speculative_num_draft_tokens=${draftTokens}; raise the declared maximum to at least ${draftTokens}`,
      { declared, draftTokens },
    );
  return out;
}

/**
 * V-S10 (ours): the checkpoint carries the draft weights of its algorithm. EAGLE on DSV4 drafts with the
 * checkpoint's MTP (next-n) layers; DSpark with its DSpark stages, which a checkpoint declares by its
 * `dspark_block_size` (with no γ V-S1 already refuses). A separate --speculative-draft-model-path brings its own.
 */
export function draftWeightsRule({ args, model, derived }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-S10");
  const algorithm = derived.speculativeAlgorithm;
  if (algorithm == null || args.speculativeDraftModelPath != null) return out;
  if (algorithm === "EAGLE" && model.mtpLayers <= 0)
    add(
      "error",
      "NO_DRAFT_WEIGHTS",
      "speculativeAlgorithm",
      algorithm,
      `--speculative-algorithm EAGLE drafts with the checkpoint's MTP (next-n) layers, and ${model.name} has none (num_nextn_predict_layers = 0): use a checkpoint with MTP layers, pass --speculative-draft-model-path, or drop speculative decoding`,
      { algorithm, model: model.name, mtpLayers: model.mtpLayers },
    );
  else if (algorithm === "DSPARK" && model.dsparkBlockSize == null && args.speculativeDsparkBlockSize != null)
    add(
      "error",
      "NO_DRAFT_WEIGHTS",
      "speculativeAlgorithm",
      algorithm,
      `--speculative-algorithm DSPARK needs DSpark draft stages, and ${model.name} declares none (no dspark_block_size; --speculative-dspark-block-size ${args.speculativeDsparkBlockSize} does not add weights): use a DSpark checkpoint (DeepSeek-V4-Flash-0731), pass --speculative-draft-model-path, or use EAGLE`,
      { algorithm, model: model.name, speculativeDsparkBlockSize: args.speculativeDsparkBlockSize },
    );
  return out;
}
