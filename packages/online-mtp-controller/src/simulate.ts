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
 * matches the float64 sequential fold of its open chunk (tolerance per dtype); (c) every compressed entry emitted
 * equals offline softmax pooling of its chunk.
 */
import { SeededRandom } from "@dsv4-kv/planner/internal";
import type { MatrixF32, OnlineMtpBackend } from "./backend.js";
import { SEGMENT_FIELDS } from "./backend.js";
import { check, checkBoolean, checkFinite, checkInt, checkKeys, checkObject, checkOneOf } from "./check.js";
import {
  CHUNK_TOKENS,
  HEAD_DIM,
  KV_SCORE_COLS,
  MAX_VERIFY_TOKENS,
  STATE_ROW_ELEMS,
  type StateDtype,
} from "./constants.js";
import { OnlineMtpController, UpstreamOnlineMtpController } from "./controller.js";
import { OnlineMtpError } from "./errors.js";
import { STATE_TOLERANCE, type ErrorStats, type TokenInput, compareRows, offlinePool, updateRow } from "./math.js";

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
  tolerance: { atol: number; rtol: number };
  backend: string;
  stateDtype: StateDtype;
  lifecycle: "hardened" | "upstream";
}

interface Req {
  slot: number;
  len: number;
  /** per layer: float64 sequential state row of the open chunk, and its tokens (for offline pooling). */
  ref: Float64Array[];
  chunkTokens: TokenInput[][];
  /** outstanding verify outcome awaiting its commit: snapshot of bank a (raw bits) per layer, or null. */
  expectCommit: (Uint32Array | Uint16Array)[] | null;
}

/** A chunk closed by a prefill launch: its output row and its 128 tokens. */
interface Closing {
  outRow: number;
  tokens: TokenInput[];
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
}

export function runSimulation(opts: SimulationOptions): SimulationReport {
  checkSimulationOptions(opts);
  const rng = new SeededRandom(opts.seed ?? 1);
  const lifecycle = opts.lifecycle ?? "hardened";
  const stateDtype = opts.stateDtype ?? "fp32";
  const tol = STATE_TOLERANCE[stateDtype];
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
    updateRow(req.ref[layer]!, t, cp, "f64");
  };

  const checkEmitted = (outHost: Float32Array, outRow: number, tokens: TokenInput[]): void => {
    const expect = offlinePool(tokens, H);
    const acc = expect.subarray(2 * H, 3 * H);
    const got = outHost.subarray(outRow * H, (outRow + 1) * H);
    const st = compareRows(got, acc, tol);
    report.emittedEntries++;
    if (st.maxAbsError > report.maxEmittedAbsError) report.maxEmittedAbsError = st.maxAbsError;
    err.violations += st.violations;
  };

  /** One prefill compression launch on layer `l`; every chunk it closes is checked against offline pooling. */
  const prefillAndCheck = (l: number, kvScore: MatrixF32, segs: number[], closing: Closing[]): void => {
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
    for (const c of closing) checkEmitted(outHost, c.outRow, c.tokens);
  };

  /** After a forward containing `reqs` (commit done): lost-commit check, then bank 0 vs reference. */
  const checkAfterCommit = (reqs: Req[]): void => {
    for (const req of reqs) {
      if (req.expectCommit) {
        report.commits++;
        for (let l = 0; l < L; l++) {
          const got = be.readStateBits(ctrl.layers[l]!, req.slot, 1);
          const want = req.expectCommit[l]!;
          if (!got.every((x, i) => x === want[i])) {
            report.lostCommits++;
            break;
          }
        }
        req.expectCommit = null;
      }
      // Bank 0 is meaningless at an exact boundary (docs/reference/online-mtp.md §10).
      if (req.len % CHUNK_TOKENS === 0) continue;
      for (let l = 0; l < L; l++) {
        const row = be.readStateRows(ctrl.layers[l]!, req.slot, 1);
        compareRows(row, req.ref[l]!, tol, err);
      }
    }
  };

  const doExtend = (): void => {
    const count = Math.min(freeSlots.length, 1 + rng.int(0, 2));
    const reqs: Req[] = [];
    for (let i = 0; i < count; i++) {
      const slot = freeSlots.splice(rng.int(0, freeSlots.length - 1), 1)[0]!;
      const ref = Array.from({ length: L }, () => new Float64Array(STATE_ROW_ELEMS));
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
    for (let l = 0; l < L; l++) {
      const total = reqs.reduce((s, r) => s + r.len, 0);
      const host = randomRows(total);
      const segs: number[] = [];
      const closing: Closing[] = [];
      let row0 = 0;
      for (const req of reqs) {
        for (let p = 0; p < req.len; p++) appendRef(req, l, token(l, p, host, row0 + p), p);
        // segments cut at 128-aligned boundaries; c0 == 0 for every prompt segment, so no load
        for (let c = 0; c < req.len; c += CHUNK_TOKENS) {
          const end = Math.min(req.len, c + CHUNK_TOKENS);
          if (end - c === CHUNK_TOKENS) {
            const tokens = Array.from({ length: CHUNK_TOKENS }, (_, j) => token(l, c + j, host, row0 + c + j));
            closing.push({ outRow: segs.length / SEGMENT_FIELDS, tokens });
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
      const closing: Closing[] = [];
      batch.forEach((req, b) => {
        const S = req.len;
        let p = S;
        while (p < S + D) {
          const chunkEnd = (Math.floor(p / CHUNK_TOKENS) + 1) * CHUNK_TOKENS;
          const end = Math.min(S + D, chunkEnd);
          if (end === chunkEnd) {
            const before = p % CHUNK_TOKENS === 0 ? [] : req.chunkTokens[l]!;
            const own = Array.from({ length: end - p }, (_, j) => token(l, p + j, host, b * D + (p - S) + j));
            closing.push({ outRow: segs.length / SEGMENT_FIELDS, tokens: [...before, ...own] });
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
    if (active.length === 0 || (freeSlots.length > 0 && rng.next() < extendP)) doExtend();
    else doVerify();
    report.steps++;
  }
  // final: every active request's next forward (a plain decode-style commit of its current length)
  if (active.length > 0) {
    const rpi = be.uploadIndex(Int32Array.from(active.map((r) => r.slot)));
    const seq = be.uploadIndex(Int32Array.from(active.map((r) => r.len)));
    ctrl.prepareForward("decode", rpi, seq);
    be.synchronize();
    checkAfterCommit(active);
  }
  return {
    ...report,
    maxAbsError: err.maxAbsError,
    maxRelError: err.maxRelError,
    violations: err.violations,
    tolerance: tol,
    backend: be.name,
    stateDtype,
    lifecycle,
  };
}
