/**
 * The "model runner" of the simulated scenario (`runSimulation`): it picks each step (an EXTEND batch of new
 * requests or a verify of active ones), uploads its batches, runs the verify-time prefill compression
 * (docs/reference/online-mtp.md §5.2: reads bank 0, writes bank 1 scratch, emits closed chunks), draws the accept
 * lengths and calls the controller. Every random draw is made in a fixed order, so a seed names one scenario.
 */
import type { SeededRandom } from "@dsv4-kv/planner/internal";
import type { MatrixF32, OnlineMtpBackend } from "./backend.js";
import { SEGMENT_FIELDS } from "./backend.js";
import { ChunkReference } from "./bf16-reference.js";
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS } from "./constants.js";
import type { OnlineMtpController } from "./controller.js";
import { OnlineMtpError } from "./errors.js";
import type { TokenInput } from "./math.js";
import type { Closing, SimRequest, SimulationChecks } from "./simulate-checks.js";

const H = HEAD_DIM;

export function gaussian(rng: SeededRandom): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export interface RunnerSetup {
  rng: SeededRandom;
  backend: OnlineMtpBackend;
  controller: OnlineMtpController;
  checks: SimulationChecks;
  numLayers: number;
  requests: number;
  draftTokens: number;
  adaptive: boolean;
  bf16: boolean;
  extendProbability: number;
  finishProbability: number;
}

/** One scenario's requests, slots and random inputs, stepped by `step()`. */
export class ScenarioRunner {
  verifies = 0;
  extends = 0;
  finished = 0;
  private readonly freeSlots: number[];
  private readonly active: SimRequest[] = [];
  /** per layer: the APE table on the host (for the reference) and on the backend */
  private readonly apeHost: Float32Array[];
  private readonly ape: MatrixF32[];

  constructor(private readonly s: RunnerSetup) {
    this.freeSlots = Array.from({ length: s.requests }, (_, i) => i + 1); // slot 0 = dummy/padding slot
    this.apeHost = Array.from({ length: s.numLayers }, () =>
      Float32Array.from({ length: CHUNK_TOKENS * H }, () => gaussian(s.rng)),
    );
    this.ape = this.apeHost.map((a) => s.backend.uploadMatrix(a, CHUNK_TOKENS, H));
  }

  /** One step: an EXTEND batch when nothing is active or (a slot free) with its probability, else a verify. */
  step(): void {
    const { rng, extendProbability } = this.s;
    if (this.active.length === 0 || (this.freeSlots.length > 0 && rng.next() < extendProbability)) this.extend();
    else this.verify();
  }

  /** Every active request's next forward (a plain decode-style commit of its current length), checked. */
  finish(): void {
    if (this.active.length === 0) return;
    const { backend: be, controller: ctrl } = this.s;
    const rpi = be.uploadIndex(Int32Array.from(this.active.map((r) => r.slot)));
    const seq = be.uploadIndex(Int32Array.from(this.active.map((r) => r.len)));
    ctrl.prepareForward("decode", rpi, seq);
    be.synchronize();
    this.s.checks.afterCommit(this.active);
  }

  private token(layer: number, pos: number, kvScore: Float32Array, row: number): TokenInput {
    return {
      kvScore: kvScore.subarray(row * KV_SCORE_COLS, (row + 1) * KV_SCORE_COLS),
      ape: this.apeHost[layer]!.subarray((pos % CHUNK_TOKENS) * H, ((pos % CHUNK_TOKENS) + 1) * H),
    };
  }

  private randomRows(rows: number): Float32Array {
    const m = new Float32Array(rows * KV_SCORE_COLS);
    for (let i = 0; i < m.length; i++) m[i] = gaussian(this.s.rng);
    return m;
  }

  /** Appends a committed token to the reference of `req` (layer ℓ) at position req.len (before increment). */
  private appendRef(req: SimRequest, layer: number, t: TokenInput, pos: number): void {
    if (pos % CHUNK_TOKENS === 0) req.chunkTokens[layer] = [];
    req.chunkTokens[layer]!.push({ kvScore: Float32Array.from(t.kvScore), ape: t.ape });
    req.ref[layer]!.append(t);
  }

  /** One prefill compression launch on layer `l`; every chunk it closes is checked against offline pooling. */
  private prefillAndCheck(l: number, kvScore: MatrixF32, segs: number[], closing: [Closing, SimRequest][]): void {
    const { backend: be, controller: ctrl } = this.s;
    const out = be.allocMatrix(Math.max(1, segs.length / SEGMENT_FIELDS), H);
    be.onlinePrefill({
      state: ctrl.layers[l]!,
      kvScore,
      ape: this.ape[l]!,
      segments: be.uploadIndex(Int32Array.from(segs)),
      numSegments: segs.length / SEGMENT_FIELDS,
      out,
    });
    const outHost = be.readMatrix(out);
    for (const [c, req] of closing) this.s.checks.emitted(l, outHost, c, req);
  }

  /** 1–3 new requests in free slots, their prompts compressed by prefill (segments at 128-aligned cuts). */
  private extend(): void {
    const { rng, backend: be, controller: ctrl, numLayers: L } = this.s;
    const count = Math.min(this.freeSlots.length, 1 + rng.int(0, 2));
    const reqs: SimRequest[] = [];
    for (let i = 0; i < count; i++) {
      const slot = this.freeSlots.splice(rng.int(0, this.freeSlots.length - 1), 1)[0]!;
      const ref = Array.from({ length: L }, () => new ChunkReference(H, this.s.bf16));
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
    const total = reqs.reduce((sum, r) => sum + r.len, 0);
    for (let l = 0; l < L; l++) this.extendLayer(l, reqs, total);
    be.synchronize();
    this.active.push(...reqs);
    this.extends++;
    this.s.checks.afterCommit(reqs);
  }

  private extendLayer(l: number, reqs: SimRequest[], total: number): void {
    const host = this.randomRows(total);
    const segs: number[] = [];
    const closing: [Closing, SimRequest][] = [];
    let row0 = 0;
    for (const req of reqs) {
      for (let p = 0; p < req.len; p++) this.appendRef(req, l, this.token(l, p, host, row0 + p), p);
      if (req.len % CHUNK_TOKENS !== 0) req.ref[l]!.store(); // the trailing segment's store
      // segments cut at 128-aligned boundaries; c0 == 0 for every prompt segment, so no load
      for (let c = 0; c < req.len; c += CHUNK_TOKENS) {
        const end = Math.min(req.len, c + CHUNK_TOKENS);
        if (end - c === CHUNK_TOKENS) {
          const tokens = Array.from({ length: CHUNK_TOKENS }, (_, j) => this.token(l, c + j, host, row0 + c + j));
          closing.push([
            { outRow: segs.length / SEGMENT_FIELDS, tokens, bound: this.s.checks.freshBound(tokens) },
            req,
          ]);
        }
        segs.push(end, row0 + end - 1, end - c, -1, req.slot);
      }
      row0 += req.len;
    }
    this.prefillAndCheck(l, this.s.backend.uploadMatrix(host, total, KV_SCORE_COLS), segs, closing);
  }

  /** A verify of a random batch (plus CUDA-graph padding rows), its accepts drawn, then some requests finish. */
  private verify(): void {
    const { rng, backend: be, controller: ctrl, numLayers: L } = this.s;
    if (this.s.adaptive) ctrl.setNumDraftTokens(rng.int(1, this.s.draftTokens));
    const D = ctrl.numVerifyTokens();
    const pool = [...this.active];
    const bs = rng.int(1, pool.length);
    const batch: SimRequest[] = [];
    for (let i = 0; i < bs; i++) batch.push(pool.splice(rng.int(0, pool.length - 1), 1)[0]!);
    const pad = rng.int(0, 2); // CUDA-graph padding rows: slot 0, seq 0 (docs/reference/online-mtp.md §10)
    const rpi = be.uploadIndex(Int32Array.from([...batch.map((r) => r.slot), ...Array<number>(pad).fill(0)]));
    const seq = be.uploadIndex(Int32Array.from([...batch.map((r) => r.len), ...Array<number>(pad).fill(0)]));
    const off = ctrl.prepareForward("target_verify", rpi, seq, bs);
    be.synchronize();
    this.s.checks.afterCommit(batch);
    const inputs: Float32Array[] = [];
    for (let l = 0; l < L; l++) {
      const host = this.randomRows((bs + pad) * D);
      inputs.push(host);
      const kv = be.uploadMatrix(host, (bs + pad) * D, KV_SCORE_COLS);
      this.verifyPrefill(l, batch, host, kv, D, off);
      ctrl.writePrefixStates(l, kv, this.ape[l]!, "target_verify");
    }
    be.synchronize();
    this.verifies++;
    this.accept(batch, inputs, D);
    this.finishSome(batch);
  }

  /** Verify-time prefill compression: load bank 0 (row r), trailing partial → bank 1 scratch (row r + off). */
  private verifyPrefill(l: number, batch: SimRequest[], host: Float32Array, kv: MatrixF32, D: number, off: number) {
    const segs: number[] = [];
    const closing: [Closing, SimRequest][] = [];
    batch.forEach((req, b) => {
      const S = req.len;
      let p = S;
      while (p < S + D) {
        const chunkEnd = (Math.floor(p / CHUNK_TOKENS) + 1) * CHUNK_TOKENS;
        const end = Math.min(S + D, chunkEnd);
        if (end === chunkEnd) {
          const before = p % CHUNK_TOKENS === 0 ? [] : req.chunkTokens[l]!;
          const own = Array.from({ length: end - p }, (_, j) => this.token(l, p + j, host, b * D + (p - S) + j));
          // the first closing segment merges bank 0 (req.ref's stored row); a later one starts at offset 0
          const bound = this.s.bf16 ? (p === S ? req.ref[l]!.emittedBound(own) : this.s.checks.freshBound(own)) : null;
          closing.push([{ outRow: segs.length / SEGMENT_FIELDS, tokens: [...before, ...own], bound }, req]);
        }
        segs.push(end, b * D + (end - 1 - S), end - p, req.slot, req.slot + off);
        p = end;
      }
    });
    this.prefillAndCheck(l, kv, segs, closing);
  }

  /** Accept lengths (EAGLE keeps 1..D; 5% no progress, a rollback) folded into each request's reference. */
  private accept(batch: SimRequest[], inputs: Float32Array[], D: number): void {
    const { rng, backend: be, controller: ctrl, numLayers: L } = this.s;
    const O = ctrl.bankStrideRows;
    for (const [b, req] of batch.entries()) {
      const a = rng.next() < 0.05 ? 0 : rng.int(1, D);
      const S = req.len;
      if (a >= 1 && (S + a) % CHUNK_TOKENS !== 0) {
        req.expectCommit = ctrl.layers.map((st) => be.readStateBits(st, req.slot + a * O, 1));
      }
      for (let l = 0; l < L; l++) {
        for (let i = 0; i < a; i++) this.appendRef(req, l, this.token(l, S + i, inputs[l]!, b * D + i), S + i);
        // the commit copies bank a: bank 0 folded with the a tokens, stored once (docs/reference/online-mtp.md §8.1)
        if (a >= 1 && (S + a) % CHUNK_TOKENS !== 0) req.ref[l]!.store();
      }
      req.len = S + a;
    }
  }

  /** Some requests finish right after their verify: flush, check, release the slot. */
  private finishSome(batch: SimRequest[]): void {
    const { rng, backend: be, controller: ctrl } = this.s;
    for (const req of batch) {
      if (rng.next() >= this.s.finishProbability || this.active.length <= 1) continue;
      ctrl.flushFinishing([req.slot], [req.len]);
      be.synchronize();
      this.s.checks.afterCommit([req]);
      this.active.splice(this.active.indexOf(req), 1);
      this.freeSlots.push(req.slot);
      this.finished++;
    }
  }
}
