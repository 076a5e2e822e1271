/**
 * Options of a data-level compress scenario, validated strictly: every key known (a typo gets a suggestion), every
 * value of its type and range, nothing coerced, keys that do not apply to the ring refused.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { type PadFormula, PlannerError, SPECULATIVE_RING_SIZE, padForFormula, validateRing } from "@dsv4-kv/planner";
import type { RingRatio, StateDtype } from "../backend.js";
import { CompressError, type CompressErrorCode } from "../errors.js";

export interface CompressScenarioOptions {
  compressRatio: RingRatio;
  /** Raw-token slots per ring; default the speculative ring (c4 16, c128 256). */
  ringSize?: number;
  /**
   * SWA page size (paged c4 addressing; also checked against the ring for c128, as the planner does); default 256,
   * and for a request ring the least multiple of ringSize >= 256 (its pages address nothing, so any ring size goes).
   */
  swaPageSize?: number;
  /** c4 only: the request ring instead of the paged SWA ring. */
  useReqRing?: boolean;
  /** Draft tokens per verify (the largest with `adaptive`). */
  draftTokens: number;
  /** Draw each verify batch's D uniformly from [1, draftTokens]. */
  adaptive?: boolean;
  /** The planner's pad formula (docs/reference/write-pad-and-residency.md §5); default `derived`. */
  padFormula?: PadFormula;
  /** An explicit write pad instead of a formula. */
  writePad?: number;
  /** Batches to run; default 40. */
  steps?: number;
  seed?: number;
  /** Most concurrent requests (request slots); default 4. */
  requests?: number;
  /** 128 or 512; default 512. */
  headDim?: number;
  /** Default fp32. */
  stateDtype?: StateDtype;
  /** c128 only: run the same batches through the online c128 driver and compare its entries with the ring's. */
  online?: boolean;
  /** Called after every batch (progress). */
  onStep?: (done: number, total: number) => void;
}

/** The options after defaults and checks. */
export interface ResolvedScenarioOptions {
  compressRatio: RingRatio;
  ringSize: number;
  swaPageSize: number;
  useReqRing: boolean;
  /** Paged c4 (the SWA-page ring shared through the radix cache). */
  paged: boolean;
  window: number;
  draftTokens: number;
  adaptive: boolean;
  padFormula: PadFormula | "explicit";
  writePad: number;
  steps: number;
  seed: number;
  requests: number;
  headDim: number;
  stateDtype: StateDtype;
  online: boolean;
  onStep: ((done: number, total: number) => void) | undefined;
}

const KEYS = [
  "compressRatio",
  "ringSize",
  "swaPageSize",
  "useReqRing",
  "draftTokens",
  "adaptive",
  "padFormula",
  "writePad",
  "steps",
  "seed",
  "requests",
  "headDim",
  "stateDtype",
  "online",
  "onStep",
] as const;

const PAD_FORMULAS: readonly PadFormula[] = ["derived", "pre-fix-device", "pre-fix-host"];

/** Most draft tokens a verify of the scenario may carry (a batch stays far below 65,535 ragged rows). */
export const MAX_SCENARIO_DRAFT_TOKENS = 1024;
/** The online driver's widest verify (kMaxVerifyTokens, docs/reference/online-mtp.md §3). */
export const MAX_ONLINE_DRAFT_TOKENS = 8;

function fail(field: string, value: unknown, rule: string, params?: Record<string, unknown>): never {
  throw new CompressError("INVALID_ARGUMENT", field, value, rule, params);
}

function int(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number") throw new CompressError("INVALID_TYPE", field, value, "must be an integer");
  if (!Number.isInteger(value)) fail(field, value, "must be an integer");
  if (value < min || value > max) fail(field, value, `must be in [${min}, ${max}]`, { min, max });
  return value;
}

function bool(field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw new CompressError("INVALID_TYPE", field, value, "must be true or false");
  return value;
}

function oneOf<T extends string>(field: string, value: unknown, choices: readonly T[]): T {
  if (typeof value !== "string") {
    throw new CompressError("INVALID_TYPE", field, value, `must be one of ${choices.join(", ")}`);
  }
  if (!(choices as readonly string[]).includes(value)) {
    const suggestion = closestMatch(value, choices);
    fail(field, value, `must be one of ${choices.join(", ")}`, suggestion === null ? {} : { suggestion });
  }
  return value as T;
}

function requireKeys(options: unknown): asserts options is Record<string, unknown> {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new CompressError("INVALID_TYPE", "options", options, "must be an options object");
  }
  for (const key of Object.keys(options)) {
    if ((KEYS as readonly string[]).includes(key)) continue;
    const suggestion = closestMatch(key, KEYS);
    throw new CompressError(
      "UNKNOWN_KEY",
      key,
      (options as Record<string, unknown>)[key],
      "is not an option of a compress scenario",
      suggestion === null ? {} : { suggestion },
    );
  }
}

function notApplicable(field: string, value: unknown, rule: string): never {
  throw new CompressError("NOT_APPLICABLE", field, value, rule);
}

/** Validates `options` and applies the defaults. */
export function resolveScenarioOptions(options: CompressScenarioOptions): ResolvedScenarioOptions {
  requireKeys(options);
  const o = options as unknown as Record<string, unknown>;
  if (o.compressRatio !== 4 && o.compressRatio !== 128) {
    throw new CompressError("INVALID_RATIO", "compressRatio", o.compressRatio, "must be 4 or 128");
  }
  const cr = o.compressRatio;
  const useReqRing = bool("useReqRing", o.useReqRing);
  if (useReqRing && cr === 128) notApplicable("useReqRing", true, "is a c4 option (c128 always uses a request ring)");
  const online = bool("online", o.online);
  if (online && cr !== 128) notApplicable("online", true, "online compression exists for c128 only");
  const ringSize = o.ringSize === undefined ? SPECULATIVE_RING_SIZE[cr] : int("ringSize", o.ringSize, 1, 1 << 16);
  const paged = cr === 4 && !useReqRing;
  const defaultPage = paged ? 256 : Math.ceil(256 / ringSize) * ringSize;
  const swaPageSize = o.swaPageSize === undefined ? defaultPage : int("swaPageSize", o.swaPageSize, 1, 1 << 16);
  try {
    validateRing({ compressRatio: cr, ringSize, swaPageSize, useReqRing });
  } catch (e) {
    // the planner's refusal (INVALID_RING, naming ringSize or swaPageSize), raised as this package's error
    if (!PlannerError.isInstance(e)) throw e;
    throw new CompressError(e.code as CompressErrorCode, e.field, e.value, e.rule, e.params);
  }
  const maxDraft = online ? MAX_ONLINE_DRAFT_TOKENS : MAX_SCENARIO_DRAFT_TOKENS;
  const draftTokens = int("draftTokens", o.draftTokens, 1, maxDraft);
  if (o.writePad !== undefined && o.padFormula !== undefined) {
    notApplicable("writePad", o.writePad, "cannot be combined with padFormula: give one");
  }
  const padFormula = o.padFormula === undefined ? "derived" : oneOf("padFormula", o.padFormula, PAD_FORMULAS);
  const writePad =
    o.writePad === undefined ? padForFormula(padFormula, cr, ringSize) : int("writePad", o.writePad, 0, 1 << 16);
  const headDim = o.headDim === undefined ? 512 : o.headDim;
  if (headDim !== 128 && headDim !== 512) fail("headDim", headDim, "must be 128 or 512");
  if (online && headDim !== 512) notApplicable("headDim", headDim, "the online c128 driver works at head dim 512");
  if (o.onStep !== undefined && typeof o.onStep !== "function") {
    throw new CompressError("INVALID_TYPE", "onStep", o.onStep, "must be a function");
  }
  return {
    compressRatio: cr,
    ringSize,
    swaPageSize,
    useReqRing,
    paged,
    window: cr === 4 ? 8 : 128,
    draftTokens,
    adaptive: bool("adaptive", o.adaptive),
    padFormula: o.writePad === undefined ? padFormula : "explicit",
    writePad,
    steps: o.steps === undefined ? 40 : int("steps", o.steps, 0, 1_000_000),
    seed: o.seed === undefined ? 1 : int("seed", o.seed, 0, 0xffffffff),
    requests: o.requests === undefined ? 4 : int("requests", o.requests, 1, 64),
    headDim,
    stateDtype: o.stateDtype === undefined ? "fp32" : oneOf("stateDtype", o.stateDtype, ["fp32", "bf16"] as const),
    online,
    onStep: o.onStep as ResolvedScenarioOptions["onStep"],
  };
}
