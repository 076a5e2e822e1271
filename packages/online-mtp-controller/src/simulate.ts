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
import type { MatrixF32, OnlineMtpBackend } from "./backend.js";
import { SEGMENT_FIELDS } from "./backend.js";
import { check, checkBoolean, checkFinite, checkInt, checkKeys, checkObject, checkOneOf } from "./check.js";
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS, MAX_VERIFY_TOKENS, type StateDtype } from "./constants.js";
import { OnlineMtpController, UpstreamOnlineMtpController } from "./controller.js";
import { OnlineMtpError } from "./errors.js";
import { ChunkReference, type RowErrorStats, type RowViolation, emptyRowErrorStats } from "./bf16-reference.js";
import {
  type ErrorStats,
  REL_FLOOR,
  STATE_TOLERANCE,
  type TokenInput,
  compareRowsOf,
  foldMaxError,
  offlinePool,
} from "./math.js";

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

interface Req {
  slot: number;
  len: number;
  /** per layer: the references of the open chunk, and its tokens (for offline pooling). */
  ref: ChunkReference[];
  chunkTokens: TokenInput[][];
  /** outstanding verify outcome awaiting its commit: snapshot of bank a (raw bits) per layer, or null. */
  expectCommit: (Uint32Array | Uint16Array)[] | null;
}

/** A chunk closed by a prefill launch: its output row, its 128 tokens and (bf16) the derived bound per channel. */
interface Closing {
  outRow: number;
  tokens: TokenInput[];
  bound: Float64Array | null;
}

function gaussian(rng: SeededRandom): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
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

const POSITION_BUCKETS: readonly [number, number][] = [
  [0, 0],
  [1, 7],
  [8, 31],
  [32, 63],
  [64, 95],
  [96, 126],
];

function reasonOf(lost: number, violations: number, byKind: Map<string, number>): string | null {
  const parts: string[] = [];
  if (lost > 0) parts.push(`${lost} lost commit${lost === 1 ? "" : "s"}`);
  if (violations > 0) {
    const kinds = [...byKind].map(([k, n]) => `${n} ${k}`).join(", ");
    parts.push(`${violations} element${violations === 1 ? "" : "s"} outside the bound (${kinds})`);
  }
  return parts.length === 0 ? null : parts.join("; ");
}

export function runSimulation(opts: SimulationOptions): SimulationReport {
  checkSimulationOptions(opts);
  const rng = new SeededRandom(opts.seed ?? 1);
  const lifecycle = opts.lifecycle ?? "hardened";
  const stateDtype = opts.stateDtype ?? "fp32";
  // bf16: the derived bound unless a flat tolerance is asked for
  const bf16 = stateDtype === "bf16" && opts.tolerance === undefined;
  const tol = opts.tolerance ?? STATE_TOLERANCE.fp32;
  const maxListed = opts.maxViolationsListed ?? 20;
  const details: SimulationViolation[] = [];
  const byKind = new Map<string, number>();
  const record = (v: SimulationViolation): void => {
    byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1);
    if (details.length < maxListed) details.push(v);
  };
  const byPosition: PositionErrorStats[] = POSITION_BUCKETS.map(([firstPosition, lastPosition]) => ({
    firstPosition,
    lastPosition,
    ...emptyRowErrorStats(),
  }));
  let maxRoundings = 0;
  const L = opts.numLayers ?? 2;
  const be = opts.backend;
  const Dmax = opts.draftTokens;
  const N = opts.requests + 1; // slot 0 = dummy/padding slot
  const Ctor = lifecycle === "upstream" ? UpstreamOnlineMtpController : OnlineMtpController;
  const ctrl = new Ctor({
    backend: be,
    numReqSlots: N,
    maxDraftTokens: Dmax,
    numDraftTokens: Dmax,
    numLayers: L,
    stateDtype,
  });
  const O = ctrl.bankStrideRows;
  const H = HEAD_DIM;
  const apeHost = Array.from({ length: L }, () => Float32Array.from({ length: CHUNK_TOKENS * H }, () => gaussian(rng)));
  const ape = apeHost.map((a) => be.uploadMatrix(a, CHUNK_TOKENS, H));
  const err: ErrorStats = { maxAbsError: 0, maxRelError: 0, violations: 0 };
  const report = {
    steps: 0,
    verifies: 0,
    extends: 0,
    commits: 0,
    lostCommits: 0,
    finished: 0,
    emittedEntries: 0,
    maxEmittedAbsError: 0,
  };
  const extendP = opts.extendProbability ?? 0.15;
  const finishP = opts.finishProbability ?? 0.03;

  const freeSlots: number[] = Array.from({ length: N - 1 }, (_, i) => i + 1);
  const active: Req[] = [];

  const token = (layer: number, pos: number, kvScore: Float32Array, row: number): TokenInput => ({
    kvScore: kvScore.subarray(row * KV_SCORE_COLS, (row + 1) * KV_SCORE_COLS),
    ape: apeHost[layer]!.subarray((pos % CHUNK_TOKENS) * H, ((pos % CHUNK_TOKENS) + 1) * H),
  });
  const randomRows = (rows: number): Float32Array => {
    const m = new Float32Array(rows * KV_SCORE_COLS);
    for (let i = 0; i < m.length; i++) m[i] = gaussian(rng);
    return m;
  };

  /** Appends a committed token to the reference of `req` (layer ℓ) at position req.len (before increment). */
  const appendRef = (req: Req, layer: number, t: TokenInput, pos: number): void => {
    const cp = pos % CHUNK_TOKENS;
    if (cp === 0) req.chunkTokens[layer] = [];
    req.chunkTokens[layer]!.push({ kvScore: Float32Array.from(t.kvScore), ape: t.ape });
    req.ref[layer]!.append(t);
  };
  /** The kernels' bound for a chunk closed without a stored partial (extend segments start at offset 0). */
  const freshBound = (tokens: TokenInput[]): Float64Array | null =>
    bf16 ? new ChunkReference(H, true).emittedBound(tokens) : null;

  /** Bank 0 of `req` in layer `l` against its references (bf16: derived bounds; fp32: the stated tolerance). */
  const checkBank0 = (req: Req, l: number, row: Float32Array): void => {
    const ref = req.ref[l]!;
    const at = { layer: l, request: req.slot, row: req.slot, length: req.len, position: (req.len - 1) % CHUNK_TOKENS };
    if (ref.roundings > maxRoundings) maxRoundings = ref.roundings;
    if (!bf16) {
      const want = ref.exactRow();
      compareRowsOf(row, want, tol, err, REL_FLOOR, (i, e, bound) => {
        const element = (["max", "sum", "acc"] as const)[Math.floor(i / H)]!;
        const v = {
          element,
          channel: i % H,
          actual: row[i]!,
          expected: want[i]!,
          error: Number.isNaN(e) ? Infinity : e,
        };
        record({ kind: "allclose-vs-exact", ...at, roundings: ref.roundings, ...v, bound });
      });
      return;
    }
    const bucket = byPosition.find((b) => at.position >= b.firstPosition && at.position <= b.lastPosition)!;
    // the max errors against the exact reference fold into `err` in the same pass
    err.violations += ref.checkRow(row, bucket, (v) => record({ ...v, ...at, roundings: ref.roundings }), err);
  };

  const checkEmitted = (l: number, outHost: Float32Array, c: Closing, req: Req): void => {
    const expect = offlinePool(c.tokens, H);
    const acc = expect.subarray(2 * H, 3 * H);
    const got = outHost.subarray(c.outRow * H, (c.outRow + 1) * H);
    const st: ErrorStats = { maxAbsError: 0, maxRelError: 0, violations: 0 };
    report.emittedEntries++;
    for (let d = 0; d < H; d++) {
      const e = Math.abs(got[d]! - acc[d]!);
      if (got[d] !== acc[d]) foldMaxError(st, e, acc[d]!, REL_FLOOR);
      const bound = c.bound ? c.bound[d]! : tol.atol + tol.rtol * Math.abs(acc[d]!);
      if (e <= bound) continue;
      err.violations++;
      const at = { layer: l, request: req.slot, row: c.outRow, length: req.len, position: CHUNK_TOKENS - 1 };
      const v = { channel: d, actual: got[d]!, expected: acc[d]!, error: Number.isNaN(e) ? Infinity : e, bound };
      record({ kind: "emitted-vs-offline", ...at, roundings: req.ref[l]!.roundings, element: "acc", ...v });
    }
    if (st.maxAbsError > report.maxEmittedAbsError) report.maxEmittedAbsError = st.maxAbsError;
  };

  /** One prefill compression launch on layer `l`; every chunk it closes is checked against offline pooling. */
  const prefillAndCheck = (l: number, kvScore: MatrixF32, segs: number[], closing: [Closing, Req][]): void => {
    const out = be.allocMatrix(Math.max(1, segs.length / SEGMENT_FIELDS), H);
    be.onlinePrefill({
      state: ctrl.layers[l]!,
      kvScore,
      ape: ape[l]!,
      segments: be.uploadIndex(Int32Array.from(segs)),
      numSegments: segs.length / SEGMENT_FIELDS,
      out,
    });
    const outHost = be.readMatrix(out);
    for (const [c, req] of closing) checkEmitted(l, outHost, c, req);
  };

  /** After a forward containing `reqs` (commit done): lost-commit check, then bank 0 vs reference. */
  const checkAfterCommit = (reqs: Req[]): void => {
    for (const req of reqs) {
      if (req.expectCommit) {
        report.commits++;
        for (let l = 0; l < L; l++) {
          const got = be.readStateBits(ctrl.layers[l]!, req.slot, 1);
          const want = req.expectCommit[l]!;
          let differing = 0;
          for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) differing++;
          if (differing > 0) {
            report.lostCommits++;
            const at = { layer: l, request: req.slot, row: req.slot, length: req.len };
            const pos = { position: (req.len - 1) % CHUNK_TOKENS, roundings: req.ref[l]!.roundings };
            const v = {
              element: "row",
              channel: -1,
              actual: differing,
              expected: 0,
              error: differing,
              bound: 0,
            } as const;
            record({ kind: "lost-commit", ...at, ...pos, ...v });
            break;
          }
        }
        req.expectCommit = null;
      }
      // Bank 0 is meaningless at an exact boundary (docs/reference/online-mtp.md §10).
      if (req.len % CHUNK_TOKENS === 0) continue;
      for (let l = 0; l < L; l++) checkBank0(req, l, be.readStateRows(ctrl.layers[l]!, req.slot, 1));
    }
  };

  const doExtend = (): void => {
    const count = Math.min(freeSlots.length, 1 + rng.int(0, 2));
    const reqs: Req[] = [];
    for (let i = 0; i < count; i++) {
      const slot = freeSlots.splice(rng.int(0, freeSlots.length - 1), 1)[0]!;
      const ref = Array.from({ length: L }, () => new ChunkReference(H, bf16));
      reqs.push({
        slot,
        len: rng.int(1, 300),
        ref,
        chunkTokens: Array.from({ length: L }, () => []),
        expectCommit: null,
      });
    }
    ctrl.onRequestSlotsAssigned(reqs.map((r) => r.slot));
    const rpi = be.uploadIndex(Int32Array.from(reqs.map((r) => r.slot)));
    const seq = be.uploadIndex(Int32Array.from(reqs.map((r) => r.len)));
    const off = ctrl.prepareForward("extend", rpi, seq);
    if (off !== 0) throw new OnlineMtpError("INTERNAL", "prepareForward(extend)", off, "must return 0 for an extend");
    const total = reqs.reduce((s, r) => s + r.len, 0);
    for (let l = 0; l < L; l++) {
      const host = randomRows(total);
      const segs: number[] = [];
      const closing: [Closing, Req][] = [];
      let row0 = 0;
      for (const req of reqs) {
        for (let p = 0; p < req.len; p++) appendRef(req, l, token(l, p, host, row0 + p), p);
        if (req.len % CHUNK_TOKENS !== 0) req.ref[l]!.store(); // the trailing segment's store
        // segments cut at 128-aligned boundaries; c0 == 0 for every prompt segment, so no load
        for (let c = 0; c < req.len; c += CHUNK_TOKENS) {
          const end = Math.min(req.len, c + CHUNK_TOKENS);
          if (end - c === CHUNK_TOKENS) {
            const tokens = Array.from({ length: CHUNK_TOKENS }, (_, j) => token(l, c + j, host, row0 + c + j));
            closing.push([{ outRow: segs.length / SEGMENT_FIELDS, tokens, bound: freshBound(tokens) }, req]);
          }
          segs.push(end, row0 + end - 1, end - c, -1, req.slot);
        }
        row0 += req.len;
      }
      prefillAndCheck(l, be.uploadMatrix(host, total, KV_SCORE_COLS), segs, closing);
    }
    be.synchronize();
    active.push(...reqs);
    report.extends++;
    checkAfterCommit(reqs);
  };

  const doVerify = (): void => {
    if (opts.adaptive) ctrl.setNumDraftTokens(rng.int(1, Dmax));
    const D = ctrl.numVerifyTokens();
    const pool = [...active];
    const bs = rng.int(1, pool.length);
    const batch: Req[] = [];
    for (let i = 0; i < bs; i++) batch.push(pool.splice(rng.int(0, pool.length - 1), 1)[0]!);
    const pad = rng.int(0, 2); // CUDA-graph padding rows: slot 0, seq 0 (docs/reference/online-mtp.md §10)
    const rpi = be.uploadIndex(Int32Array.from([...batch.map((r) => r.slot), ...Array<number>(pad).fill(0)]));
    const seq = be.uploadIndex(Int32Array.from([...batch.map((r) => r.len), ...Array<number>(pad).fill(0)]));
    const off = ctrl.prepareForward("target_verify", rpi, seq, bs);
    be.synchronize();
    checkAfterCommit(batch);
    const inputs: Float32Array[] = [];
    for (let l = 0; l < L; l++) {
      const host = randomRows((bs + pad) * D);
      inputs.push(host);
      const kv = be.uploadMatrix(host, (bs + pad) * D, KV_SCORE_COLS);
      // verify-time prefill compression: load bank 0 (row r), trailing partial → bank 1 scratch (row r + off)
      const segs: number[] = [];
      const closing: [Closing, Req][] = [];
      batch.forEach((req, b) => {
        const S = req.len;
        let p = S;
        while (p < S + D) {
          const chunkEnd = (Math.floor(p / CHUNK_TOKENS) + 1) * CHUNK_TOKENS;
          const end = Math.min(S + D, chunkEnd);
          if (end === chunkEnd) {
            const before = p % CHUNK_TOKENS === 0 ? [] : req.chunkTokens[l]!;
            const own = Array.from({ length: end - p }, (_, j) => token(l, p + j, host, b * D + (p - S) + j));
            // the first closing segment merges bank 0 (req.ref's stored row); a later one starts at offset 0
            const bound = bf16 ? (p === S ? req.ref[l]!.emittedBound(own) : freshBound(own)) : null;
            closing.push([{ outRow: segs.length / SEGMENT_FIELDS, tokens: [...before, ...own], bound }, req]);
          }
          segs.push(end, b * D + (end - 1 - S), end - p, req.slot, req.slot + off);
          p = end;
        }
      });
      prefillAndCheck(l, kv, segs, closing);
      ctrl.writePrefixStates(l, kv, ape[l]!, "target_verify");
    }
    be.synchronize();
    report.verifies++;
    // accept: EAGLE keeps 1..D; 5% no progress (rollback)
    for (const [b, req] of batch.entries()) {
      const a = rng.next() < 0.05 ? 0 : rng.int(1, D);
      const S = req.len;
      if (a >= 1 && (S + a) % CHUNK_TOKENS !== 0) {
        req.expectCommit = ctrl.layers.map((s) => be.readStateBits(s, req.slot + a * O, 1));
      }
      for (let l = 0; l < L; l++) {
        for (let i = 0; i < a; i++) appendRef(req, l, token(l, S + i, inputs[l]!, b * D + i), S + i);
        // the commit copies bank a: bank 0 folded with the a tokens, stored once (docs/reference/online-mtp.md §8.1)
        if (a >= 1 && (S + a) % CHUNK_TOKENS !== 0) req.ref[l]!.store();
      }
      req.len = S + a;
    }
    // some requests finish right after their verify: flush, check, release the slot
    for (const req of batch) {
      if (rng.next() >= finishP || active.length <= 1) continue;
      ctrl.flushFinishing([req.slot], [req.len]);
      be.synchronize();
      checkAfterCommit([req]);
      active.splice(active.indexOf(req), 1);
      freeSlots.push(req.slot);
      report.finished++;
    }
  };

  for (let step = 0; step < opts.steps; step++) {
    if (opts.stop?.() === true) break;
    if (active.length === 0 || (freeSlots.length > 0 && rng.next() < extendP)) doExtend();
    else doVerify();
    report.steps++;
    opts.onProgress?.(report.steps, opts.steps);
  }
  // final: every active request's next forward (a plain decode-style commit of its current length)
  if (active.length > 0) {
    const rpi = be.uploadIndex(Int32Array.from(active.map((r) => r.slot)));
    const seq = be.uploadIndex(Int32Array.from(active.map((r) => r.len)));
    ctrl.prepareForward("decode", rpi, seq);
    be.synchronize();
    checkAfterCommit(active);
  }
  const ok = report.lostCommits === 0 && err.violations === 0;
  const bf16Summary: Bf16Summary | null = bf16
    ? {
        maxRatio: Math.max(...byPosition.flatMap((b) => Object.values(b.maxRatio))),
        maxRoundedUlps: Math.max(...byPosition.map((b) => b.maxRoundedUlps)),
        maxRoundings,
        byPosition,
      }
    : null;
  return {
    ...report,
    maxAbsError: err.maxAbsError,
    maxRelError: err.maxRelError,
    violations: err.violations,
    tolerance: bf16 ? "derived" : tol,
    ok,
    reason: reasonOf(report.lostCommits, err.violations, byKind),
    violationDetails: details,
    bf16: bf16Summary,
    backend: be.name,
    stateDtype,
    lifecycle,
  };
}
