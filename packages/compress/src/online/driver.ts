/**
 * `OnlineC128Driver`: one c128 layer's online compression under MTP, driven the way SGLang drives it
 * (docs/reference/online-mtp.md §9.6) on any `OnlineMtpBackend`. The `OnlineMtpController` owns the banks, the
 * pending markers, the commit, the mark, the prefix states and the slot reset (docs/reference/online-mtp.md §9); the
 * driver builds the batches and runs the compression passes the controller does not own (`onlinePrefill`,
 * `onlineDecode`, docs/reference/online-mtp.md §8.5).
 *
 * The commit of a verify is the controller's: the next forward that contains the request commits bank a → bank 0
 * inside `prepareForward`, with the committed length `prefix = S + a` as its current length, so `a` is inferred on
 * the device (docs/reference/online-mtp.md §9.7). A request left out of a forward keeps its marker until a forward
 * contains it (hardened lifecycle, docs/reference/online-mtp.md §10.2).
 */
import {
  CHUNK_TOKENS,
  HEAD_DIM,
  KV_SCORE_COLS,
  type MatrixF32,
  OnlineMtpController,
  type OnlineMtpBackend,
} from "@dsv4-kv/online-mtp-controller";
import { SEGMENT_FIELDS } from "@dsv4-kv/online-mtp-controller/internal";
import { check, checkInt } from "../check.js";
import { type SegmentPlan, appendSegments } from "./segments.js";
import type { OnlineC128DriverOptions, OnlineEntry, OnlineRequestStep } from "./types.js";
import { type CheckedRequest, validateOptions, validateStep } from "./validate.js";

/** Input rows of a batch, request after request (ragged for extend; b·D + i for verify; row b for decode). */
function concatRows(batch: readonly CheckedRequest[]): Float32Array {
  const out = new Float32Array(batch.reduce((n, r) => n + r.tokens.length, 0));
  let at = 0;
  for (const r of batch) {
    out.set(r.tokens, at);
    at += r.tokens.length;
  }
  return out;
}

function bySlotThenPosition(a: OnlineEntry, b: OnlineEntry): number {
  return a.slot - b.slot || a.position - b.position;
}

export class OnlineC128Driver {
  /** The controller this driver runs (one c128 layer); exposed for inspection (counters, banks). */
  readonly controller: OnlineMtpController;
  private readonly backend: OnlineMtpBackend;
  private readonly ape: MatrixF32;
  /** Committed length per assigned slot; null: reset, nothing committed yet. */
  private readonly committed = new Map<number, number | null>();
  private disposed = false;

  constructor(opts: OnlineC128DriverOptions) {
    validateOptions(opts);
    this.backend = opts.backend;
    this.controller = new OnlineMtpController({
      backend: opts.backend,
      numReqSlots: opts.numReqSlots,
      maxDraftTokens: opts.maxDraftTokens,
      numDraftTokens: 1,
      numLayers: 1,
      stateDtype: opts.stateDtype,
    });
    this.ape = opts.backend.uploadMatrix(opts.ape, CHUNK_TOKENS, HEAD_DIM);
  }

  /** The committed length of `slot` (null: reset and nothing committed; undefined: no request assigned). */
  committedLength(slot: number): number | null | undefined {
    return this.committed.get(slot);
  }

  /**
   * One forward of a batch (every request the same kind). Returns the entries of the chunks closed at committed
   * positions (a verify: q < prefix + accept), ordered by slot, then position.
   */
  step(requests: readonly OnlineRequestStep[]): OnlineEntry[] {
    this.checkLive("step");
    const { numReqSlots, maxDraftTokens } = this.controller;
    const { kind, batch } = validateStep(requests, numReqSlots, maxDraftTokens, this.committed);
    if (batch.length === 0) return [];
    const entries =
      kind === "extend" ? this.extend(batch) : kind === "decode" ? this.decode(batch) : this.verify(batch);
    this.backend.synchronize();
    for (const r of batch) this.committed.set(r.slot, r.prefix + r.advance);
    return entries.sort(bySlotThenPosition);
  }

  /** A request is assigned to `slot`: every bank row cleared, its pending marker dropped (the controller's hook). */
  resetSlot(slot: number): void {
    this.checkLive("resetSlot");
    const n = this.controller.numReqSlots;
    checkInt(slot, 1, n - 1, "slot", `must be a request slot in [1, ${n - 1}] (0 is the padding slot)`, "REQ_INDEX");
    this.controller.onRequestSlotsAssigned([slot]);
    this.committed.set(slot, null);
  }

  /** Ends the driver: later calls are refused. The backend stays the caller's. */
  dispose(): void {
    this.disposed = true;
    this.committed.clear();
  }

  private checkLive(method: string): void {
    check(!this.disposed, "LIFECYCLE", method, "disposed", "must not be called after dispose()");
  }

  /** Slots and committed lengths of the batch; `prepareForward` commits pending verifies with them. */
  private batchVectors(batch: readonly CheckedRequest[]) {
    const be = this.backend;
    const rpi = be.uploadIndex(Int32Array.from(batch, (r) => r.slot));
    const seqLens = be.uploadIndex(Int32Array.from(batch, (r) => r.prefix));
    return { rpi, seqLens };
  }

  /** Prefill chunks, all committed: bank 0 loaded where a piece starts inside a chunk, the partial stored to bank 0. */
  private extend(batch: readonly CheckedRequest[]): OnlineEntry[] {
    const { rpi, seqLens } = this.batchVectors(batch);
    this.controller.prepareForward("extend", rpi, seqLens);
    const plan: SegmentPlan = { records: [], closes: [] };
    let firstRow = 0;
    for (const r of batch) {
      appendSegments(plan, { ...this.run(r, firstRow), loadRow: r.slot, storeRow: r.slot });
      firstRow += r.rows;
    }
    const kv = this.backend.uploadMatrix(concatRows(batch), firstRow, KV_SCORE_COLS);
    const out = this.prefill(kv, plan);
    return this.entriesOf(plan, this.backend.readMatrix(out), () => true);
  }

  /**
   * docs/reference/online-mtp.md §9.6: prepareForward commits the previous verify and marks this one (width D); the
   * prefill pass reads bank 0, emits the chunks closed inside the window and writes the trailing partial to bank 1
   * (state slot offset O); writePrefixStates stores banks 1 .. D. Only entries at q < prefix + accept are committed.
   */
  private verify(batch: readonly CheckedRequest[]): OnlineEntry[] {
    const D = batch[0]!.rows;
    const ctrl = this.controller;
    ctrl.setNumDraftTokens(D);
    const { rpi, seqLens } = this.batchVectors(batch);
    const offset = ctrl.prepareForward("target_verify", rpi, seqLens, batch.length);
    check(
      offset === ctrl.bankStrideRows,
      "INTERNAL",
      "prepareForward",
      offset,
      `must return O = ${ctrl.bankStrideRows}`,
    );
    const plan: SegmentPlan = { records: [], closes: [] };
    for (const [b, r] of batch.entries()) {
      appendSegments(plan, { ...this.run(r, b * D), loadRow: r.slot, storeRow: r.slot + offset });
    }
    const kv = this.backend.uploadMatrix(concatRows(batch), batch.length * D, KV_SCORE_COLS);
    const out = this.prefill(kv, plan);
    ctrl.writePrefixStates(0, kv, this.ape, "target_verify");
    const kept = new Map(batch.map((r) => [r.slot, r.prefix + r.accept]));
    return this.entriesOf(plan, this.backend.readMatrix(out), (slot, q) => q < kept.get(slot)!);
  }

  /** One committed token per request (docs/reference/online-mtp.md §5.1); an entry where (prefix + 1) % 128 == 0. */
  private decode(batch: readonly CheckedRequest[]): OnlineEntry[] {
    const be = this.backend;
    const { rpi, seqLens } = this.batchVectors(batch);
    this.controller.prepareForward("decode", rpi, seqLens);
    const out = be.allocMatrix(batch.length, HEAD_DIM);
    be.onlineDecode({
      state: this.controller.layers[0]!,
      kvScore: be.uploadMatrix(concatRows(batch), batch.length, KV_SCORE_COLS),
      ape: this.ape,
      seqLens: be.uploadIndex(Int32Array.from(batch, (r) => r.prefix + 1)),
      reqPoolIndices: rpi,
      batchSize: batch.length,
      slotOffsetRows: 0,
      numReqSlots: this.controller.numReqSlots,
      out,
    });
    const host = be.readMatrix(out);
    const entries: OnlineEntry[] = [];
    batch.forEach((r, b) => {
      if ((r.prefix + 1) % CHUNK_TOKENS !== 0) return;
      entries.push({ slot: r.slot, position: r.prefix, values: host.slice(b * HEAD_DIM, (b + 1) * HEAD_DIM) });
    });
    return entries;
  }

  private run(r: CheckedRequest, firstRow: number) {
    return { slot: r.slot, prefix: r.prefix, count: r.rows, firstRow };
  }

  private prefill(kv: MatrixF32, plan: SegmentPlan): MatrixF32 {
    const be = this.backend;
    const numSegments = plan.records.length / SEGMENT_FIELDS;
    const out = be.allocMatrix(Math.max(1, numSegments), HEAD_DIM);
    be.onlinePrefill({
      state: this.controller.layers[0]!,
      kvScore: kv,
      ape: this.ape,
      segments: be.uploadIndex(Int32Array.from(plan.records)),
      numSegments,
      out,
    });
    return out;
  }

  private entriesOf(plan: SegmentPlan, host: Float32Array, keep: (slot: number, q: number) => boolean) {
    return plan.closes
      .filter((c) => keep(c.slot, c.position))
      .map((c) => ({
        slot: c.slot,
        position: c.position,
        values: host.slice(c.outRow * HEAD_DIM, (c.outRow + 1) * HEAD_DIM),
      }));
  }
}
