/**
 * A seeded end-to-end scenario: the controller (any backend, either lifecycle) against a float64 sequential
 * reference, with random accepts, chunk crossings, adaptive D, interleaved EXTEND batches of new requests,
 * CUDA-graph padding rows, requests finishing right after a verify, and slot reuse.
 *
 * The simulator is the "model runner": it uploads batches, runs the verify-time prefill compression
 * (docs/reference/online-mtp.md §5.2, reads bank 0, writes bank 1 scratch, emits closed chunks) and calls the
 * controller. It reads device memory only to check results (never inside the controller).
 *
 * Checks: (a) every commit is a bitwise copy of the bank its accept length selects, observed at the request's next
 * forward or at its flush; a mismatch is a LOST commit; (b) after each forward, bank 0 of every request in it
 * matches the float64 sequential fold of its open chunk (fp32: the stated tolerance; bf16: the bound derived from the
 * row's roundings, docs/reference/online-mtp.md §5.4, and the rounded reference that stores where the kernels store);
 * (c) every compressed entry emitted equals offline softmax pooling of its chunk (same bounds).
 */
import { SeededRandom } from "@dsv4-kv/planner/internal";
import type { OnlineMtpBackend } from "./backend.js";
import type { RowErrorStats, RowViolation } from "./bf16-reference.js";
import { check, checkBoolean, checkFinite, checkInt, checkKeys, checkObject, checkOneOf } from "./check.js";
import { MAX_VERIFY_TOKENS, type StateDtype } from "./constants.js";
import { OnlineMtpController, UpstreamOnlineMtpController } from "./controller.js";
import { STATE_TOLERANCE } from "./math.js";
import { SimulationChecks } from "./simulate-checks.js";
import { ScenarioRunner } from "./simulate-runner.js";

export interface SimulationOptions {
  backend: OnlineMtpBackend;
  requests: number;
  steps: number;
  draftTokens: number;
  adaptive?: boolean;
  seed?: number;
  stateDtype?: StateDtype;
  lifecycle?: "hardened" | "upstream";
  numLayers?: number;
  /** Probability that a step is an EXTEND batch of new requests (when a slot is free). */
  extendProbability?: number;
  /** Probability that a verified request finishes right after its verify. */
  finishProbability?: number;
  /** Called after every step with (steps done, steps): for a progress display. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Asked before every step: true ends the run there (a time limit). The final check of the active requests
   * still runs; the report's `steps` says how many ran.
   */
  stop?: () => boolean;
  /**
   * An allclose tolerance for every state element and emitted entry instead of the dtype's check (fp32: the stated
   * `STATE_TOLERANCE.fp32`; bf16: the bound derived from each row's roundings).
   */
  tolerance?: { atol: number; rtol: number };
  /** Violations listed in `violationDetails` (the count is always complete); default 20. */
  maxViolationsListed?: number;
}

/** One check the scenario failed (the run's exit reason). Errors are numbers; +∞ and NaN stay numbers here. */
export interface SimulationViolation {
  kind: RowViolation["kind"] | "allclose-vs-exact" | "emitted-vs-offline" | "lost-commit";
  layer: number;
  /** request slot */
  request: number;
  /** state row (bank 0: the slot) or, for an emitted entry, the prefill output row */
  row: number;
  /** committed length of the request when checked */
  length: number;
  /** in-chunk position of its last committed token (length − 1) % 128 */
  position: number;
  /** bf16 stores the row went through in its chunk */
  roundings: number;
  element: RowViolation["element"] | "row";
  channel: number;
  actual: number;
  expected: number;
  error: number;
  bound: number;
}

/** Row errors of bank 0 (bf16) against the exact reference, by in-chunk position of the last committed token. */
export interface PositionErrorStats extends RowErrorStats {
  firstPosition: number;
  lastPosition: number;
}

export interface Bf16Summary {
  /** max over every compared element of error / derived bound (<= 1: all inside) */
  maxRatio: number;
  /** max |bank 0 − rounded reference| in bf16 ulps of the reference */
  maxRoundedUlps: number;
  /** most stores one compared row went through in its chunk */
  maxRoundings: number;
  byPosition: PositionErrorStats[];
}

export interface SimulationReport {
  steps: number;
  verifies: number;
  extends: number;
  commits: number;
  lostCommits: number;
  finished: number;
  maxAbsError: number;
  maxRelError: number;
  violations: number;
  emittedEntries: number;
  maxEmittedAbsError: number;
  /** fp32: the stated allclose tolerance; bf16: "derived" (docs/reference/online-mtp.md §5.4) */
  tolerance: { atol: number; rtol: number } | "derived";
  /** no lost commit and no violation */
  ok: boolean;
  /** why the run failed (null when ok) */
  reason: string | null;
  /** the first `maxViolationsListed` violations (lost commits included) */
  violationDetails: SimulationViolation[];
  /** bf16 state checked against the derived bound (no `tolerance` option) only */
  bf16: Bf16Summary | null;
  backend: string;
  stateDtype: StateDtype;
  lifecycle: "hardened" | "upstream";
}

const OPTION_KEYS = [
  "backend",
  "requests",
  "steps",
  "draftTokens",
  "adaptive",
  "seed",
  "stateDtype",
  "lifecycle",
  "numLayers",
  "extendProbability",
  "finishProbability",
  "onProgress",
  "stop",
  "maxViolationsListed",
  "tolerance",
];

function checkProbability(p: number | undefined, field: string): void {
  if (p === undefined) return;
  checkFinite(p, field);
  check(p >= 0 && p <= 1, "INVALID_ARGUMENT", field, p, "must be a probability in [0, 1]");
}

/** Every option checked before the scenario starts (the backend's methods are checked by the controller). */
function checkSimulationOptions(opts: SimulationOptions): void {
  checkObject(opts, "options");
  checkKeys(opts, OPTION_KEYS, "options");
  checkObject(opts.backend, "backend");
  checkInt(opts.requests, 1, 4096, "INVALID_ARGUMENT", "requests", "must be an integer in [1, 4096]");
  checkInt(opts.steps, 0, 1_000_000, "INVALID_ARGUMENT", "steps", "must be an integer in [0, 1e6]");
  checkInt(
    opts.draftTokens,
    1,
    MAX_VERIFY_TOKENS,
    "DRAFT_TOKENS",
    "draftTokens",
    `must be in [1, ${MAX_VERIFY_TOKENS}]`,
  );
  if (opts.adaptive !== undefined) checkBoolean(opts.adaptive, "adaptive");
  if (opts.seed !== undefined) checkInt(opts.seed, 0, 0xffffffff, "INVALID_ARGUMENT", "seed");
  if (opts.stateDtype !== undefined) checkOneOf(opts.stateDtype, ["fp32", "bf16"], "DTYPE", "stateDtype");
  if (opts.lifecycle !== undefined)
    checkOneOf(opts.lifecycle, ["hardened", "upstream"], "INVALID_ARGUMENT", "lifecycle");
  if (opts.numLayers !== undefined) checkInt(opts.numLayers, 1, 1024, "INVALID_ARGUMENT", "numLayers");
  checkProbability(opts.extendProbability, "extendProbability");
  checkProbability(opts.finishProbability, "finishProbability");
  if (opts.onProgress !== undefined) {
    const ok = typeof opts.onProgress === "function";
    check(ok, "INVALID_TYPE", "onProgress", opts.onProgress, "must be a function (done, total) => void");
  }
  if (opts.stop !== undefined) {
    check(typeof opts.stop === "function", "INVALID_TYPE", "stop", opts.stop, "must be a function () => boolean");
  }
  if (opts.tolerance !== undefined) {
    checkObject(opts.tolerance, "tolerance");
    checkKeys(opts.tolerance, ["atol", "rtol"], "tolerance");
    for (const key of ["atol", "rtol"] as const) {
      checkFinite(opts.tolerance[key], `tolerance.${key}`);
      check(opts.tolerance[key] >= 0, "INVALID_ARGUMENT", `tolerance.${key}`, opts.tolerance[key], "must be >= 0");
    }
  }
  if (opts.maxViolationsListed !== undefined) {
    checkInt(opts.maxViolationsListed, 0, 1_000_000, "INVALID_ARGUMENT", "maxViolationsListed");
  }
}

export function runSimulation(opts: SimulationOptions): SimulationReport {
  checkSimulationOptions(opts);
  const rng = new SeededRandom(opts.seed ?? 1);
  const lifecycle = opts.lifecycle ?? "hardened";
  const stateDtype = opts.stateDtype ?? "fp32";
  // bf16: the derived bound unless a flat tolerance is asked for
  const bf16 = stateDtype === "bf16" && opts.tolerance === undefined;
  const tol = opts.tolerance ?? STATE_TOLERANCE.fp32;
  const numLayers = opts.numLayers ?? 2;
  const backend = opts.backend;
  const Ctor = lifecycle === "upstream" ? UpstreamOnlineMtpController : OnlineMtpController;
  const controller = new Ctor({
    backend,
    numReqSlots: opts.requests + 1, // slot 0 = dummy/padding slot
    maxDraftTokens: opts.draftTokens,
    numDraftTokens: opts.draftTokens,
    numLayers,
    stateDtype,
  });
  const maxListed = opts.maxViolationsListed ?? 20;
  const checks = new SimulationChecks({ backend, controller, numLayers, bf16, tol, maxListed });
  const runner = new ScenarioRunner({
    rng,
    backend,
    controller,
    checks,
    numLayers,
    requests: opts.requests,
    draftTokens: opts.draftTokens,
    adaptive: opts.adaptive === true,
    bf16,
    extendProbability: opts.extendProbability ?? 0.15,
    finishProbability: opts.finishProbability ?? 0.03,
  });
  let steps = 0;
  for (let step = 0; step < opts.steps; step++) {
    if (opts.stop?.() === true) break;
    runner.step();
    steps++;
    opts.onProgress?.(steps, opts.steps);
  }
  runner.finish();
  const { ok, reason, violationDetails, bf16: bf16Summary } = checks.verdict();
  return {
    steps,
    verifies: runner.verifies,
    extends: runner.extends,
    commits: checks.commits,
    lostCommits: checks.lostCommits,
    finished: runner.finished,
    emittedEntries: checks.emittedEntries,
    maxEmittedAbsError: checks.maxEmittedAbsError,
    maxAbsError: checks.err.maxAbsError,
    maxRelError: checks.err.maxRelError,
    violations: checks.err.violations,
    tolerance: bf16 ? "derived" : tol,
    ok,
    reason,
    violationDetails,
    bf16: bf16Summary,
    backend: backend.name,
    stateDtype,
    lifecycle,
  };
}
