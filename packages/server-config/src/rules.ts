/**
 * Every start-up rule id server-config reports, in one table: the severities it raises, what it checks, and where it
 * is evaluated (docs/reference/startup-rules.md explains each). The table's order is the evaluation order: the
 * resolution runs its `resolve` rules top to bottom, `checkServerConfig` its `sized` rules once the pools are sized;
 * the `check` rules are raised by `checkServerConfig` from the memory pool's and the planner's refusals.
 */
import { adaptiveStepsRule, algorithmRule, declaredMaximumRule, draftWeightsRule } from "./rules/speculative.js";
import { dsparkWidthRule, eagleStepsRule, eagleTopkRule, ignoredSpeculativeRule } from "./rules/speculative.js";
import { hisparseRatioRule, trtllmBackendRule } from "./rules/attention.js";
import { contextPoolRule, contextPositionsRule, prefillSwaCapRule } from "./rules/context-length.js";
import type { ResolveContext, ResolveRule, SizedContext, SizedRule } from "./rules/context.js";
import { kvCacheDtypeRule, stateDtypeRule } from "./rules/dtype.js";
import type { ConfigIssue } from "./rules/issue.js";
import { onlineDraftCountRule, onlineSpeculationRule, onlineVerifyWidthRule } from "./rules/online.js";
import { deepepDispatchRule, dpAttentionRequestsRule } from "./rules/parallel.js";
import { poolShapeRule, ringDraftRule } from "./rules/pools.js";
import { attentionHeadsRule, dpDividesTpRule, moeSplitRule, tokenIndexRangeRule } from "./rules/tensor-parallel.js";
import {
  type V41Rule,
  type V41RuleContext,
  v41AlgorithmRule,
  v41DsparkWidthRule,
  v41FeaturesRule,
} from "./v41/rules.js";
import { v41PdSpeculationRule } from "./v41/rules.js";

export { type ConfigIssue, type IssueData, makeIssue } from "./rules/issue.js";
export type { ResolveContext, ResolutionFacts, SizedContext } from "./rules/context.js";

export type Severity = "error" | "warning";

/** Where a rule is evaluated: by the resolution, after sizing, or inside `checkServerConfig` itself. */
export type RuleStage =
  | { readonly stage: "resolve"; readonly check: ResolveRule }
  | { readonly stage: "sized"; readonly check: SizedRule }
  | { readonly stage: "check" }
  /** A DeepSeek-V4.1 rule, run by `checkV41Deployment` (V4's resolution never runs it). */
  | { readonly stage: "v41"; readonly check: V41Rule };

export type RuleInfo = RuleStage & {
  /** The severities the rule raises (V-S2 corrects with a warning and refuses with an error, …). */
  readonly severities: readonly Severity[];
  readonly summary: string;
};

function rule<const S extends readonly Severity[]>(severities: S, summary: string, where: RuleStage) {
  return { ...where, severities, summary };
}

const resolve = (check: ResolveRule) => ({ stage: "resolve", check }) as const;
const sized = (check: SizedRule) => ({ stage: "sized", check }) as const;
const check = { stage: "check" } as const;
const v41 = (check: V41Rule) => ({ stage: "v41", check }) as const;

export const RULES = {
  "V-A3": rule(
    ["error"],
    "the KV cache dtype is one the platform's pool stores: fp8_e4m3 on CUDA and ROCm, bf16 on the NPU (or auto)",
    resolve(kvCacheDtypeRule),
  ),
  "V-D1": rule(
    ["error"],
    "the compress-state dtype is float32 or bfloat16, and float32 with online compress",
    resolve(stateDtypeRule),
  ),
  "V-C1": rule(["error"], "the context length is at most the model's max positions", resolve(contextPositionsRule)),
  "V-A1": rule(["error"], "the speculative algorithm is EAGLE or DSPARK", resolve(algorithmRule)),
  "V-S0": rule(["warning"], "speculative arguments without an algorithm are ignored", resolve(ignoredSpeculativeRule)),
  "V-A2": rule(["error"], "EAGLE runs with top-k 1", resolve(eagleTopkRule)),
  "V-S3": rule(["error"], "adaptive steps are one of the candidates", resolve(adaptiveStepsRule)),
  "V-S2": rule(
    ["error", "warning"],
    "EAGLE has steps >= 1 and verifies steps + 1 draft tokens",
    resolve(eagleStepsRule),
  ),
  "V-S1": rule(["error"], "DSpark's verify width is its block size + 1", resolve(dsparkWidthRule)),
  "V-S5": rule(
    ["error"],
    "the declared maximum draft tokens covers the configured draft tokens",
    resolve(declaredMaximumRule),
  ),
  "V-S10": rule(
    ["error"],
    "the checkpoint has the draft weights its speculative algorithm needs",
    resolve(draftWeightsRule),
  ),
  "V-S6": rule(
    ["error"],
    "online compress runs with speculation only on the experimental EAGLE path",
    resolve(onlineSpeculationRule),
  ),
  "V-S7": rule(["error", "warning"], "experimental online c128 MTP has a draft count", resolve(onlineDraftCountRule)),
  "V-S11": rule(["error"], "experimental online c128 MTP verifies at most 8 tokens", resolve(onlineVerifyWidthRule)),
  "V-H1": rule(["error"], "the HiSparse host-to-device ratio is at least 1", resolve(hisparseRatioRule)),
  "V-A4": rule(
    ["error", "warning"],
    "the trtllm attention backend's requirements; other backends are not modelled",
    resolve(trtllmBackendRule),
  ),
  "V-TP2": rule(["error"], "with attention DP, --dp-size divides --tp-size", resolve(dpDividesTpRule)),
  "V-TP1": rule(
    ["error"],
    "the attention TP size divides the model's attention heads and output groups",
    resolve(attentionHeadsRule),
  ),
  "V-TP3": rule(
    ["error"],
    "the expert-parallel size divides TP and the routed experts; the MoE TP size divides the expert width",
    resolve(moeSplitRule),
  ),
  "V-DP1": rule(
    ["error", "warning"],
    "attention DP gives every rank at least one running request (and no unused remainder)",
    resolve(dpAttentionRequestsRule),
  ),
  "V-E1": rule(
    ["error"],
    "DeepEP's low-latency dispatch holds a decode step's tokens per rank",
    resolve(deepepDispatchRule),
  ),
  "V-S8": rule(["error"], "the draft tokens fit every compress-state ring's write pad", resolve(ringDraftRule)),
  "V-K1": rule(
    ["error", "warning"],
    "the model's pool and layer shape can be built (and the FP4 indexer is HIP only)",
    resolve(poolShapeRule),
  ),
  "V-M1": rule(["error"], "the weights leave GPU memory for the KV cache under --mem-fraction-static", check),
  "V-P2": rule(["error"], "the page size is a multiple of 128", check),
  "V-P3": rule(["error"], "the page size is 256 in paged SWA mode", check),
  "V-P4": rule(["error"], "the SWA pool holds one request's sliding window plus a page", check),
  "V-M2": rule(["error"], "the KV budget holds at least one page of every pool", check),
  "V-W1": rule(["warning"], "the sizing matches what was asked (token cap, running requests, allocation)", check),
  "V-C2": rule(["warning"], "the full KV pool holds a request of the context length", sized(contextPoolRule)),
  "V-C3": rule(
    ["warning"],
    "a PD prefill node's SWA cap holds a request of the context length",
    sized(prefillSwaCapRule),
  ),
  "V-I1": rule(["error"], "the full pool's token indices fit SGLang's int32", sized(tokenIndexRangeRule)),
  R1: rule(["error"], "the ring simulator keeps every committed compress-state position resident", check),
  "V41-S1": rule(["error"], "DeepSeek-V4.1 speculates only with DSpark (its bundled draft)", v41(v41AlgorithmRule)),
  "V41-S2": rule(
    ["error"],
    "V4.1 DSpark's block size is at least 1 and verifies block size + 1",
    v41(v41DsparkWidthRule),
  ),
  "V41-F1": rule(
    ["error"],
    "DeepSeek-V4.1 runs without HiSparse, the trtllm DSv4 backend and pipeline parallelism",
    v41(v41FeaturesRule),
  ),
  "V41-D1": rule(
    ["error"],
    "V4.1 DSpark under PD disaggregation runs with DP 1, no attention DP and no context parallelism",
    v41(v41PdSpeculationRule),
  ),
  "V41-R1": rule(
    ["error"],
    "DeepSeek-V4.1: the ratio-2 pair-state ring serves the verify width (R₂ ≥ D; raised by checkV41Deployment)",
    check,
  ),
} as const satisfies Record<string, RuleInfo>;

export type RuleId = keyof typeof RULES;

/** A severity the rule raises. */
export type SeverityOf<R extends RuleId> = (typeof RULES)[R]["severities"][number];

/** The rules that raise issues of severity `S`. */
export type RuleRaising<S extends Severity> = { [R in RuleId]: S extends SeverityOf<R> ? R : never }[RuleId];

const TABLE: readonly RuleInfo[] = Object.values(RULES);

/** Runs the resolution's rules in table order and collects their issues. */
export function evaluateResolveRules(ctx: ResolveContext): ConfigIssue[] {
  return TABLE.flatMap((info) => (info.stage === "resolve" ? info.check(ctx) : []));
}

/** Runs the DeepSeek-V4.1 rules in table order. */
export function evaluateV41Rules(ctx: V41RuleContext): ConfigIssue[] {
  return TABLE.flatMap((info) => (info.stage === "v41" ? info.check(ctx) : []));
}

/** Runs the rules that need the sized pools, in table order. */
export function evaluateSizedRules(ctx: SizedContext): ConfigIssue[] {
  return TABLE.flatMap((info) => (info.stage === "sized" ? info.check(ctx) : []));
}
