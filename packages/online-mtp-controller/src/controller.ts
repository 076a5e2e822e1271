/**
 * `OnlineMtpController` (§7) with the hardened lifecycle of §10, and `UpstreamOnlineMtpController`, a faithful
 * model of upstream's lifecycle kept for comparison (it loses commits in the interleaving scenario; tests show it).
 *
 * Hardened lifecycle (what differs from upstream, §10):
 *   1. A pending marker lives per request until consumed: `markPending` sets only the batch's markers (no global
 *      reset), and the commit clears the marker of every request it read (clear-on-commit).
 *   2. A commit runs on every non-idle forward that contains the request, whether or not a verify context is
 *      active in this controller (upstream gates it on the context, which an unrelated batch clears).
 *   3. A finishing request is flushed (`flushFinishing`) before its slot is released.
 *   4. A newly assigned slot is reset (`onRequestSlotsAssigned`): all banks cleared and its marker dropped, so a
 *      stale marker is never consumed.
 *   5. Each marker records the width D of its verify, so adaptive D cannot change the accept clamp of a pending
 *      commit.
 * The controller never reads device memory: it passes handles and host-known sizes to the backend.
 */
import { HEAD_DIM, MAX_VERIFY_TOKENS, STATE_ROW_ELEMS, type StateDtype } from "./constants.js";
import { OnlineMtpError, check, checkInt } from "./errors.js";
import type { ForwardMode } from "./forward-mode.js";
import type { IndexVector, MatrixF32, OnlineMtpBackend, StateBuffer } from "./backend.js";
import { onlineC128BankStrideRows, onlineC128TotalRows } from "./layout.js";

export interface OnlineMtpFlags {
  /** SGLANG_OPT_USE_ONLINE_COMPRESS */
  onlineCompress: boolean;
  /** SGLANG_EXPERIMENTAL_ONLINE_C128_MTP */
  experimentalOnlineC128Mtp: boolean;
  /** backend.mtp_enabled (EAGLE, topk = 1) */
  mtpEnabled: boolean;
}

export interface OnlineMtpControllerOptions {
  backend: OnlineMtpBackend;
  /** N: request slots (index 0 is the dummy/padding slot). */
  numReqSlots: number;
  /** Dmax: draft banks allocated. */
  maxDraftTokens: number;
  /** D: current verify width, in [1, min(8, Dmax)]. */
  numDraftTokens: number;
  /** c128 layers (one state buffer each). */
  numLayers: number;
  stateDtype?: StateDtype;
  flags?: Partial<OnlineMtpFlags>;
}

export interface VerifyContext {
  reqPoolIndices: IndexVector;
  seqLens: IndexVector;
  batchSize: number;
  numVerifyTokens: number;
}

/** Launch counters (host-side; they count what the controller asked for, not what the device did). */
export interface ControllerCounters {
  verifies: number;
  commitLaunches: number;
  markLaunches: number;
  writePrefixLaunches: number;
  flushes: number;
  resets: number;
}

const I32_MAX = 0x7fffffff;

export class OnlineMtpController {
  readonly backend: OnlineMtpBackend;
  readonly numReqSlots: number;
  readonly maxDraftTokens: number;
  readonly numLayers: number;
  readonly stateDtype: StateDtype;
  readonly flags: OnlineMtpFlags;
  /** O = N + 2 (§3.3, from @dsv4-kv/memory-pool). */
  readonly bankStrideRows: number;
  /** Rows of each layer's state = O·(1 + Dmax). */
  readonly stateRows: number;
  readonly layers: readonly StateBuffer[];
  /** pending[r] = S ≥ 0 or −1 (§3.4); int32 (sequence lengths stay below 2^31). */
  readonly pendingSeqLens: IndexVector;
  /** Width D of the verify that set pending[r]. */
  readonly pendingWidths: IndexVector;
  readonly counters: ControllerCounters = {
    verifies: 0,
    commitLaunches: 0,
    markLaunches: 0,
    writePrefixLaunches: 0,
    flushes: 0,
    resets: 0,
  };
  protected numDraftTokens: number;
  protected ctx: VerifyContext | null = null;

  constructor(opts: OnlineMtpControllerOptions) {
    this.backend = opts.backend;
    checkInt(
      opts.numReqSlots,
      1,
      I32_MAX,
      "REQ_INDEX",
      "numReqSlots",
      "must be an integer >= 1 (slot 0 is the padding slot)",
    );
    checkInt(
      opts.maxDraftTokens,
      1,
      MAX_VERIFY_TOKENS,
      "DRAFT_TOKENS",
      "maxDraftTokens",
      `must be in [1, ${MAX_VERIFY_TOKENS}] (online c128 MTP needs Dmax > 0 banks; kernels handle at most ${MAX_VERIFY_TOKENS})`,
    );
    checkInt(opts.numLayers, 1, 1024, "INVALID_ARGUMENT", "numLayers", "must be an integer in [1, 1024]");
    this.numReqSlots = opts.numReqSlots;
    this.maxDraftTokens = opts.maxDraftTokens;
    this.numLayers = opts.numLayers;
    this.stateDtype = opts.stateDtype ?? "fp32";
    check(
      this.stateDtype === "fp32" || this.stateDtype === "bf16",
      "DTYPE",
      "stateDtype",
      this.stateDtype,
      "must be fp32 or bf16",
    );
    this.flags = { onlineCompress: true, experimentalOnlineC128Mtp: true, mtpEnabled: true, ...opts.flags };
    this.numDraftTokens = 0;
    this.setNumDraftTokens(opts.numDraftTokens);
    this.bankStrideRows = onlineC128BankStrideRows(this.numReqSlots);
    this.stateRows = onlineC128TotalRows(this.numReqSlots, this.maxDraftTokens);
    this.layers = Array.from({ length: this.numLayers }, () =>
      this.backend.allocState(this.stateRows, this.stateDtype),
    );
    this.pendingSeqLens = this.backend.allocIndex(this.numReqSlots, -1);
    this.pendingWidths = this.backend.allocIndex(this.numReqSlots, 0);
  }

  /** Bytes of all layers' state (§3.5 fixed budget): rows · 3H · dtype bytes · layers. */
  get stateBytes(): number {
    return this.stateRows * STATE_ROW_ELEMS * (this.stateDtype === "fp32" ? 4 : 2) * this.numLayers;
  }

  get headDim(): number {
    return HEAD_DIM;
  }

  enabled(): boolean {
    return this.flags.onlineCompress && this.flags.experimentalOnlineC128Mtp && this.flags.mtpEnabled;
  }

  stateSlotOffset(): number {
    return this.enabled() ? this.bankStrideRows : 0;
  }

  numVerifyTokens(): number {
    return this.numDraftTokens;
  }

  /** Adaptive D: takes effect at the next verify (an active verify context keeps the D it was marked with). */
  setNumDraftTokens(d: number): void {
    const hi = Math.min(MAX_VERIFY_TOKENS, this.maxDraftTokens);
    checkInt(
      d,
      1,
      hi,
      "DRAFT_TOKENS",
      "numDraftTokens",
      `must be in [1, min(${MAX_VERIFY_TOKENS}, maxDraftTokens = ${this.maxDraftTokens})] = [1, ${hi}]`,
    );
    this.numDraftTokens = d;
  }

  get verifyContext(): VerifyContext | null {
    return this.ctx;
  }

  clear(): void {
    this.ctx = null;
  }

  protected batchSizeOf(rpi: IndexVector, seqLens: IndexVector, verifyBs: number | undefined): number {
    const avail = Math.min(rpi.length, seqLens.length);
    if (verifyBs === undefined) return avail;
    checkInt(
      verifyBs,
      0,
      avail,
      "BATCH_SIZE",
      "verifyBs",
      `must be in [0, min(len(reqPoolIndices), len(seqLens)) = ${avail}]`,
    );
    return verifyBs;
  }

  /**
   * §7 prepare_forward: commits the previous verify for the batch's requests, then (target verify) marks this
   * verify. Returns the state slot offset for the verify's prefill plan (O for a verify, else 0).
   */
  prepareForward(mode: ForwardMode, reqPoolIndices: IndexVector, seqLens: IndexVector, verifyBs?: number): number {
    if (!this.enabled() || mode === "idle") {
      this.clear();
      return 0;
    }
    const bs = this.batchSizeOf(
      reqPoolIndices,
      seqLens,
      mode === "target_verify" ? (verifyBs ?? reqPoolIndices.length) : verifyBs,
    );
    if (bs === 0) {
      this.clear();
      return 0;
    }
    if (mode !== "target_verify") {
      this.commitPending(reqPoolIndices, seqLens, bs);
      this.clear();
      return 0;
    }
    // target verify: commit the previous verify, the last layer's commit kernel also marks this one (fused)
    this.commitPending(reqPoolIndices, seqLens, bs, { seqLens, width: this.numDraftTokens });
    this.ctx = { reqPoolIndices, seqLens, batchSize: bs, numVerifyTokens: this.numDraftTokens };
    this.counters.verifies++;
    this.counters.markLaunches++;
    return this.stateSlotOffset();
  }

  beginVerify(reqPoolIndices: IndexVector, seqLens: IndexVector, batchSize: number): void {
    if (!this.enabled()) {
      this.clear();
      return;
    }
    this.ctx = { reqPoolIndices, seqLens, batchSize, numVerifyTokens: this.numDraftTokens };
    this.counters.verifies++;
    this.markPending(seqLens, reqPoolIndices, batchSize);
  }

  markPending(seqLens: IndexVector, reqPoolIndices: IndexVector, batchSize: number): void {
    this.counters.markLaunches++;
    this.backend.markPending({
      seqLens,
      reqPoolIndices,
      pendingSeqLens: this.pendingSeqLens,
      pendingWidths: this.pendingWidths,
      batchSize,
      numVerifyTokens: this.numDraftTokens,
      numReqSlots: this.numReqSlots,
      clearAll: false,
    });
  }

  /**
   * §7 write_prefix_states for one c128 layer, after its verify-time compression. `kvScoreInput` rows are
   * request-major (b·D + i); padded rows beyond the verify batch are ignored.
   */
  writePrefixStates(layerId: number, kvScoreInput: MatrixF32, ape: MatrixF32, mode: ForwardMode): void {
    checkInt(
      layerId,
      0,
      this.numLayers - 1,
      "INVALID_ARGUMENT",
      "layerId",
      `must be a c128 layer index in [0, ${this.numLayers - 1}]`,
    );
    const ctx = this.ctx;
    if (!this.enabled() || mode !== "target_verify" || ctx === null || kvScoreInput.rows === 0) return;
    const D = ctx.numVerifyTokens;
    const layerBs = Math.min(ctx.batchSize, Math.floor(kvScoreInput.rows / D));
    if (layerBs <= 0) return;
    this.counters.writePrefixLaunches++;
    this.backend.writePrefix({
      kvScore: kvScoreInput,
      seqLens: ctx.seqLens,
      reqPoolIndices: ctx.reqPoolIndices,
      ape,
      state: this.layers[layerId]!,
      batchSize: layerBs,
      numVerifyTokens: D,
      bankStrideRows: this.bankStrideRows,
      numReqSlots: this.numReqSlots,
    });
  }

  /**
   * Commits every pending marker of the batch's requests (all layers), consuming the markers (hardened: runs on
   * every forward; no verify context needed).
   */
  commitPending(
    reqPoolIndices: IndexVector,
    seqLens: IndexVector,
    batchSize: number,
    mark: { seqLens: IndexVector; width: number } | null = null,
  ): void {
    if (!this.enabled() || batchSize <= 0) return;
    for (let l = 0; l < this.numLayers; l++) {
      this.counters.commitLaunches++;
      this.backend.commitPending({
        curSeqLens: seqLens,
        reqPoolIndices,
        pendingSeqLens: this.pendingSeqLens,
        pendingWidths: this.pendingWidths,
        state: this.layers[l]!,
        batchSize,
        maxDraftTokens: this.maxDraftTokens,
        clampWidth: null,
        bankStrideRows: this.bankStrideRows,
        numReqSlots: this.numReqSlots,
        consume: l === this.numLayers - 1,
        mark: l === this.numLayers - 1 ? mark : null,
      });
    }
  }

  /**
   * A request finishes: commit its pending verify (with its final committed length) before the slot is released,
   * so a snapshot of bank 0 (radix / HiCache) sees every accepted token. Host-known slots and lengths.
   */
  flushFinishing(reqSlots: readonly number[], finalSeqLens: readonly number[]): void {
    check(
      reqSlots.length === finalSeqLens.length,
      "SHAPE",
      "finalSeqLens.length",
      finalSeqLens.length,
      `must equal reqSlots.length = ${reqSlots.length}`,
    );
    if (reqSlots.length === 0 || !this.enabled()) return;
    reqSlots.forEach((r, i) =>
      checkInt(
        r,
        0,
        this.numReqSlots - 1,
        "REQ_INDEX",
        `reqSlots[${i}]`,
        `must be a request slot in [0, ${this.numReqSlots - 1}]`,
      ),
    );
    finalSeqLens.forEach((s, i) =>
      checkInt(s, 0, I32_MAX, "INVALID_ARGUMENT", `finalSeqLens[${i}]`, "must be a non-negative int32"),
    );
    this.counters.flushes++;
    const rpi = this.backend.uploadIndex(Int32Array.from(reqSlots));
    const seq = this.backend.uploadIndex(Int32Array.from(finalSeqLens));
    this.commitPending(rpi, seq, reqSlots.length);
  }

  /**
   * §3.6 slot-reset hook: fires for NEW assignments of slots to requests. Every bank row of the slot becomes the
   * cleared row (max −∞, sum 0, acc 0) in every layer and its pending marker is dropped.
   */
  onRequestSlotsAssigned(reqSlots: readonly number[]): void {
    if (reqSlots.length === 0) return;
    reqSlots.forEach((r, i) =>
      checkInt(
        r,
        0,
        this.numReqSlots - 1,
        "REQ_INDEX",
        `reqSlots[${i}]`,
        `must be a request slot in [0, ${this.numReqSlots - 1}]`,
      ),
    );
    this.counters.resets++;
    const slots = this.backend.uploadIndex(Int32Array.from(reqSlots));
    this.layers.forEach((state, l) =>
      this.backend.resetSlots({
        state,
        slots,
        count: reqSlots.length,
        bankStrideRows: this.bankStrideRows,
        maxDraftTokens: this.maxDraftTokens,
        numReqSlots: this.numReqSlots,
        pending: l === 0 ? { seqLens: this.pendingSeqLens, widths: this.pendingWidths } : null,
      }),
    );
  }
}

/**
 * Upstream's lifecycle (§7), kept as a model to show its lost-commit hazard (§10): the commit runs only while the
 * previous verify's context is alive, `clear()` drops it after any forward, and `markPending` resets every
 * request's marker. Finishing requests are not flushed. Do not use it in production.
 */
export class UpstreamOnlineMtpController extends OnlineMtpController {
  override prepareForward(
    mode: ForwardMode,
    reqPoolIndices: IndexVector,
    seqLens: IndexVector,
    verifyBs?: number,
  ): number {
    if (!this.enabled() || mode === "idle") {
      this.clear();
      return 0;
    }
    if (verifyBs === undefined && mode === "target_verify") verifyBs = reqPoolIndices.length;
    const bs = this.batchSizeOf(reqPoolIndices, seqLens, verifyBs);
    if (verifyBs !== undefined && bs === 0) {
      this.clear();
      return 0;
    }
    this.commitPending(reqPoolIndices, seqLens, bs);
    if (mode !== "target_verify") return 0;
    this.beginVerify(reqPoolIndices, seqLens, bs);
    return this.stateSlotOffset();
  }

  override markPending(seqLens: IndexVector, reqPoolIndices: IndexVector, batchSize: number): void {
    this.counters.markLaunches++;
    this.backend.markPending({
      seqLens,
      reqPoolIndices,
      pendingSeqLens: this.pendingSeqLens,
      pendingWidths: this.pendingWidths,
      batchSize,
      numVerifyTokens: this.numDraftTokens,
      numReqSlots: this.numReqSlots,
      clearAll: true,
    });
  }

  override commitPending(reqPoolIndices: IndexVector, seqLens: IndexVector, batchSize: number): void {
    if (this.ctx === null) return;
    if (batchSize <= 0) return; // ctx kept
    for (let l = 0; l < this.numLayers; l++) {
      this.counters.commitLaunches++;
      this.backend.commitPending({
        curSeqLens: seqLens,
        reqPoolIndices,
        pendingSeqLens: this.pendingSeqLens,
        pendingWidths: this.pendingWidths,
        state: this.layers[l]!,
        batchSize,
        maxDraftTokens: this.maxDraftTokens,
        clampWidth: this.numDraftTokens,
        bankStrideRows: this.bankStrideRows,
        numReqSlots: this.numReqSlots,
        consume: false,
      });
    }
    this.clear();
  }

  override flushFinishing(): void {
    // upstream releases a finishing request without committing its last verify
  }
}

export { OnlineMtpError };
