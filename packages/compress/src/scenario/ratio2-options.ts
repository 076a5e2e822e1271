/**
 * Options of the DeepSeek-V4.1 ratio-2 scenario (`simulate compress --ratio 2`), validated strictly like the ring
 * scenarios' (options.ts): every key known, every value of its type and range, nothing coerced.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { v41PairRingSize } from "@dsv4-kv/memory-pool";
import { PAIR_STATE_WRITERS, type PairStateWriter } from "@dsv4-kv/planner";
import { CompressError } from "../errors.js";
import { V41_ENTRY_LAYOUTS, type V41EntryLayout } from "../v41/layouts.js";

/** Which writer serves verify batches: SGLang routes target-verify to the torch writer; c2.cuh has a verify grid. */
export type Ratio2VerifyWriter = Exclude<PairStateWriter, "decode">;

export interface Ratio2ScenarioOptions {
  /** Rows per verify (DSpark: block size + 1 = 6); the largest with `adaptive`. */
  draftTokens: number;
  /** Pair-state ring R₂ per request; default SGLang's speculative ring, the least power of two >= 2 + D. */
  ringSize?: number;
  /** Entry layout of the ratio-2 KV pool; default v4 (what H200 runs). */
  layout?: V41EntryLayout;
  /** Draw each verify batch's D uniformly from [1, draftTokens]. */
  adaptive?: boolean;
  /** Writer of verify batches; default torch (SGLang's routing). */
  verifyWriter?: Ratio2VerifyWriter;
  /** Batches to run; default 40. */
  steps?: number;
  seed?: number;
  /** Most concurrent requests (request slots); default 4. */
  requests?: number;
  /** Called after every batch (progress). */
  onStep?: (done: number, total: number) => void;
}

export interface ResolvedRatio2Options {
  draftTokens: number;
  ringSize: number;
  /** SGLang's ring for this D (what `ringSize` defaults to). */
  speculativeRingSize: number;
  layout: V41EntryLayout;
  adaptive: boolean;
  verifyWriter: Ratio2VerifyWriter;
  steps: number;
  seed: number;
  requests: number;
  onStep: ((done: number, total: number) => void) | undefined;
}

const KEYS = [
  "draftTokens",
  "ringSize",
  "layout",
  "adaptive",
  "verifyWriter",
  "steps",
  "seed",
  "requests",
  "onStep",
] as const;

/** Most rows a ratio-2 verify may carry, and the widest ring (both keep a scenario's state pool small). */
export const MAX_RATIO2_DRAFT_TOKENS = 64;
export const MAX_RATIO2_RING_SIZE = 1024;

function int(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number") throw new CompressError("INVALID_TYPE", field, value, "must be an integer");
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CompressError("INVALID_ARGUMENT", field, value, `must be an integer in [${min}, ${max}]`, { min, max });
  }
  return value;
}

function oneOf<T extends string>(field: string, value: unknown, choices: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
    const suggestion = typeof value === "string" ? closestMatch(value, choices) : null;
    const params = suggestion === null ? {} : { suggestion };
    throw new CompressError("INVALID_ARGUMENT", field, value, `must be one of ${choices.join(", ")}`, params);
  }
  return value as T;
}

function requireKnownKeys(options: unknown): asserts options is Record<string, unknown> {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new CompressError("INVALID_TYPE", "options", options, "must be an options object");
  }
  for (const key of Object.keys(options)) {
    if ((KEYS as readonly string[]).includes(key)) continue;
    const suggestion = closestMatch(key, KEYS);
    const value = (options as Record<string, unknown>)[key];
    const params = suggestion === null ? {} : { suggestion };
    throw new CompressError("UNKNOWN_KEY", key, value, "is not an option of a ratio-2 scenario", params);
  }
}

/** Validates `options` and applies the defaults. */
export function resolveRatio2Options(options: Ratio2ScenarioOptions): ResolvedRatio2Options {
  requireKnownKeys(options);
  const o = options as unknown as Record<string, unknown>;
  const draftTokens = int("draftTokens", o.draftTokens, 1, MAX_RATIO2_DRAFT_TOKENS);
  const speculativeRingSize = v41PairRingSize(true, draftTokens);
  const ringSize =
    o.ringSize === undefined ? speculativeRingSize : int("ringSize", o.ringSize, 1, MAX_RATIO2_RING_SIZE);
  if (o.adaptive !== undefined && typeof o.adaptive !== "boolean") {
    throw new CompressError("INVALID_TYPE", "adaptive", o.adaptive, "must be true or false");
  }
  if (o.onStep !== undefined && typeof o.onStep !== "function") {
    throw new CompressError("INVALID_TYPE", "onStep", o.onStep, "must be a function");
  }
  const writers = PAIR_STATE_WRITERS.filter((w): w is Ratio2VerifyWriter => w !== "decode");
  return {
    draftTokens,
    ringSize,
    speculativeRingSize,
    layout: oneOf("layout", o.layout, V41_ENTRY_LAYOUTS, "v4"),
    adaptive: o.adaptive === true,
    verifyWriter: oneOf("verifyWriter", o.verifyWriter, writers, "torch"),
    steps: o.steps === undefined ? 40 : int("steps", o.steps, 0, 1_000_000),
    seed: o.seed === undefined ? 1 : int("seed", o.seed, 0, 0xffffffff),
    requests: o.requests === undefined ? 4 : int("requests", o.requests, 1, 64),
    onStep: o.onStep as ResolvedRatio2Options["onStep"],
  };
}
