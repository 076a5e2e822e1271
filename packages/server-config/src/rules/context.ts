/**
 * What a rule reads. Resolution (resolve.ts) derives every value first; the rules then only look: each is a function
 * from one of these contexts to the issues it raises, so a rule cannot change what another rule sees.
 */
import type { MemoryPoolError, SizingResult } from "@dsv4-kv/memory-pool";
import type { StageFacts } from "@dsv4-kv/memory-pool/internal";
import type { ModelPreset } from "../presets.js";
import type { DerivedValues } from "../resolve.js";
import type { ServerArgs } from "../schema.js";
import type { ConfigIssue } from "./issue.js";

/** The architecture the DSV4 rules name in their messages, as SGLang does. */
export const ARCH = "DeepseekV4ForCausalLM";

/** Facts of the resolution that DerivedValues does not publish. */
export interface ResolutionFacts {
  /** The speculative algorithm as given (V-A1 refuses it when it is not EAGLE or DSPARK). */
  rawAlgorithm: string | null;
  /** --max-running-requests after the DSV4 default (256). */
  maxRunningRequests: number;
  /** The layer stages of the pools; null when the pool shape could not be built (`poolError`). */
  stages: readonly StageFacts[] | null;
  /** The memory pool's refusal of the model's shape (V-K1), if any. */
  poolError: MemoryPoolError | null;
}

/** The resolution-stage context: arguments, model and every derived value. */
export interface ResolveContext {
  args: ServerArgs;
  model: ModelPreset;
  derived: DerivedValues;
  facts: ResolutionFacts;
}

/** The sizing-stage context: the resolved values plus the pools `checkServerConfig` sized for the budget. */
export interface SizedContext {
  args: ServerArgs;
  model: ModelPreset;
  derived: DerivedValues;
  sizing: SizingResult;
}

export type ResolveRule = (ctx: ResolveContext) => ConfigIssue[];
export type SizedRule = (ctx: SizedContext) => ConfigIssue[];
