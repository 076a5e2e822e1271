/**
 * `OnlineMtpController` (docs/reference/online-mtp.md §9) with the hardened lifecycle of
 * docs/reference/online-mtp.md §10, and `UpstreamOnlineMtpController`, a faithful model of upstream's lifecycle kept
 * for comparison (it loses commits in the interleaving scenario; tests show it).
 *
 * Hardened lifecycle (what differs from upstream, docs/reference/online-mtp.md §10):
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
import { onlineC128BankStrideRows, onlineC128TotalRows } from "@dsv4-kv/memory-pool";
import type { IndexVector, MatrixF32, OnlineMtpBackend, StateBuffer } from "./backend.js";
import {
  I32_MAX,
  check,
  checkArray,
  checkBoolean,
  checkInt,
  checkKeys,
  checkMethods,
  checkObject,
  checkOneOf,
  checkSameLength,
  checkSlots,
} from "./check.js";
import { HEAD_DIM, MAX_REQ_SLOTS, MAX_VERIFY_TOKENS, STATE_ROW_ELEMS, type StateDtype } from "./constants.js";
import { OnlineMtpError } from "./errors.js";
import { type ForwardMode, checkForwardMode } from "./forward-mode.js";
import { checkHandle, validateMark } from "./validate.js";

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

const OPTION_KEYS = ["backend", "numReqSlots", "maxDraftTokens", "numDraftTokens", "numLayers", "stateDtype", "flags"];
const FLAG_KEYS = ["onlineCompress", "experimentalOnlineC128Mtp", "mtpEnabled"] as const;
const STATE_DTYPES: readonly StateDtype[] = ["fp32", "bf16"];
/** What the controller calls on its backend. */
const BACKEND_METHODS = [
  "uploadIndex",
  "allocState",
  "allocIndex",
  "writePrefix",
  "markPending",
  "commitPending",
  "resetSlots",
] as const;

/** One commit launch per layer; what differs between the hardened and the upstream lifecycle. */
interface CommitLaunch {
  /** null: clamp by each marker's own width (hardened); a number: by this width (upstream: the current D). */
  clampWidth: number | null;
  /** Clear the markers read, in the last layer's launch (hardened). */
  consume: boolean;
  /** Fused mark of this verify, in the last layer's launch (hardened target verify). */
  mark: { seqLens: IndexVector; width: number } | null;
}

function checkOptions(opts: OnlineMtpControllerOptions): void {
  checkObject(opts, "options");
  checkKeys(opts, OPTION_KEYS, "options");
  checkObject(opts.backend, "backend");
  checkMethods(opts.backend, BACKEND_METHODS, "backend", "must be a method (an OnlineMtpBackend)");
  if (opts.stateDtype !== undefined) checkOneOf(opts.stateDtype, STATE_DTYPES, "DTYPE", "stateDtype");
  if (opts.flags !== undefined) {
    checkObject(opts.flags, "flags");
    checkKeys(opts.flags, FLAG_KEYS, "flags");
    for (const [key, v] of Object.entries(opts.flags)) checkBoolean(v, `flags.${key}`);
  }
}

export class OnlineMtpController {
  readonly backend: OnlineMtpBackend;
  readonly numReqSlots: number;
  readonly maxDraftTokens: number;
  readonly numLayers: number;
  readonly stateDtype: StateDtype;
  readonly flags: OnlineMtpFlags;
  /** O = N + 2 (docs/reference/online-mtp.md §7.2, from @dsv4-kv/memory-pool). */
  readonly bankStrideRows: number;
  /** Rows of each layer's state = O·(1 + Dmax). */
  readonly stateRows: number;
  readonly layers: readonly StateBuffer[];
  /** pending[r] = S ≥ 0 or −1 (docs/reference/online-mtp.md §7.3); int32 (sequence lengths stay below 2^31). */
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
    checkOptions(opts);
    this.backend = opts.backend;
    checkInt(
      opts.numReqSlots,
      1,
      MAX_REQ_SLOTS,
      "REQ_INDEX",
      "numReqSlots",
      `must be an integer in [1, ${MAX_REQ_SLOTS}] (slot 0 is the padding slot; more slots than SGLang's request pool ` +
        "ever holds would need tens of GiB of state per layer)",
    );
    checkInt(
      opts.maxDraftTokens,
      1,
      MAX_VERIFY_TOKENS,
      "DRAFT_TOKENS",
      "maxDraftTokens",
      `must be in [1, ${MAX_VERIFY_TOKENS}] (online c128 MTP needs Dmax > 0 banks; the kernels serve at most 8)`,
    );
    checkInt(opts.numLayers, 1, 1024, "INVALID_ARGUMENT", "numLayers", "must be an integer in [1, 1024]");
    this.numReqSlots = opts.numReqSlots;
    this.maxDraftTokens = opts.maxDraftTokens;
    this.numLayers = opts.numLayers;
    this.stateDtype = opts.stateDtype ?? "fp32";
    this.flags = { onlineCompress: true, experimentalOnlineC128Mtp: true, mtpEnabled: true, ...opts.flags };
    this.numDraftTokens = 0;
    this.setNumDraftTokens(opts.numDraftTokens);
    this.bankStrideRows = onlineC128BankStrideRows(this.numReqSlots);
    this.stateRows = onlineC128TotalRows(this.numReqSlots, this.maxDraftTokens);
    this.layers = this.allocLayers();
    this.pendingSeqLens = this.backend.allocIndex(this.numReqSlots, -1);
    this.pendingWidths = this.backend.allocIndex(this.numReqSlots, 0);
  }

  /** Every layer's state buffer; an allocation the host or device cannot make is refused naming what sized it. */
  private allocLayers(): StateBuffer[] {
    try {
      return Array.from({ length: this.numLayers }, () => this.backend.allocState(this.stateRows, this.stateDtype));
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      const bytes = this.stateBytes;
      throw new OnlineMtpError(
        "STATE_ROWS",
        "numReqSlots",
        this.numReqSlots,
        `with maxDraftTokens ${this.maxDraftTokens} and ${this.numLayers} layers needs ${this.stateRows} state rows ` +
          `per layer, ${bytes} bytes in all, which the ${this.backend.name} backend could not allocate (${e.message})`,
        { stateRows: this.stateRows, stateBytes: bytes, numLayers: this.numLayers },
      );
    }
  }

  /** Bytes of all layers' state (docs/reference/online-mtp.md §14 fixed budget): rows · 3H · dtype bytes · layers. */
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

  /** The batch vectors are index handles of one length; `verifyBs` (when given) is within it. */
  protected batchSizeOf(rpi: IndexVector, seqLens: IndexVector, verifyBs: number | undefined): number {
    checkHandle(rpi, "index", "reqPoolIndices");
    checkHandle(seqLens, "index", "seqLens");
    checkSameLength(seqLens.length, rpi.length, "seqLens.length", "reqPoolIndices.length");
    if (verifyBs !== undefined)
      checkInt(
        verifyBs,
        0,
        rpi.length,
        "BATCH_SIZE",
        "verifyBs",
        `must be in [0, len(reqPoolIndices)] = [0, ${rpi.length}]`,
      );
    const bs = verifyBs ?? rpi.length;
    this.checkHostValues(rpi, seqLens, bs); // the rows the kernels will run
    return bs;
  }

  /**
   * The first `rows` slots and sequence lengths as the host gave them (when the backend keeps a host copy, as the
   * CPU and GPU backends do): a slot outside [0, numReqSlots) or a negative length is refused by name. The kernels
   * skip such a row, so without this a wrong slot was silently not committed.
   */
  protected checkHostValues(rpi: IndexVector, seqLens: IndexVector, rows: number, seqField = "seqLens"): void {
    const slots = this.backend.hostIndex?.(rpi);
    const lens = this.backend.hostIndex?.(seqLens);
    const n = this.numReqSlots;
    for (let b = 0; b < rows; b++) {
      if (slots !== undefined)
        checkInt(slots[b], 0, n - 1, "REQ_INDEX", `reqPoolIndices[${b}]`, `must be a request slot in [0, ${n - 1}]`);
      if (lens !== undefined)
        checkInt(lens[b], 0, I32_MAX, "INVALID_ARGUMENT", `${seqField}[${b}]`, "must be a sequence length >= 0");
    }
  }

  /** `batchSize` rows of two index vectors, each at least that long. */
  protected checkBatch(rpi: IndexVector, seqLens: IndexVector, batchSize: number, seqField = "seqLens"): void {
    checkHandle(rpi, "index", "reqPoolIndices");
    checkHandle(seqLens, "index", seqField);
    const avail = Math.min(rpi.length, seqLens.length);
    checkInt(
      batchSize,
      0,
      avail,
      "BATCH_SIZE",
      "batchSize",
      `must be in [0, min(len(reqPoolIndices), len(${seqField}))] = [0, ${avail}]`,
    );
    this.checkHostValues(rpi, seqLens, batchSize, seqField);
  }

  /**
   * docs/reference/online-mtp.md §9.1 prepare_forward: commits the previous verify for the batch's requests, then
   * (target verify) marks this verify. Returns the state slot offset for the verify's prefill plan (O for a verify,
   * else 0).
   */
  prepareForward(mode: ForwardMode, reqPoolIndices: IndexVector, seqLens: IndexVector, verifyBs?: number): number {
    checkForwardMode(mode, "mode");
    const bs = this.batchSizeOf(
      reqPoolIndices,
      seqLens,
      mode === "target_verify" ? (verifyBs ?? reqPoolIndices.length) : verifyBs,
    );
    if (!this.enabled() || mode === "idle" || bs === 0) {
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
    this.checkBatch(reqPoolIndices, seqLens, batchSize);
    if (!this.enabled()) {
      this.clear();
      return;
    }
    this.ctx = { reqPoolIndices, seqLens, batchSize, numVerifyTokens: this.numDraftTokens };
    this.counters.verifies++;
    this.markPending(seqLens, reqPoolIndices, batchSize);
  }

  /** Marks the batch's requests pending (hardened: the other requests' markers are kept). */
  markPending(seqLens: IndexVector, reqPoolIndices: IndexVector, batchSize: number): void {
    this.launchMark(seqLens, reqPoolIndices, batchSize, false);
  }

  protected launchMark(seqLens: IndexVector, reqPoolIndices: IndexVector, batchSize: number, clearAll: boolean) {
    this.checkBatch(reqPoolIndices, seqLens, batchSize);
    this.counters.markLaunches++;
    this.backend.markPending({
      seqLens,
      reqPoolIndices,
      pendingSeqLens: this.pendingSeqLens,
      pendingWidths: this.pendingWidths,
      batchSize,
      numVerifyTokens: this.numDraftTokens,
      numReqSlots: this.numReqSlots,
      clearAll,
    });
  }

  /**
   * docs/reference/online-mtp.md §9.3 write_prefix_states for one c128 layer, after its verify-time compression.
   * `kvScoreInput` rows are request-major (b·D + i); padded rows beyond the verify batch are ignored.
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
    checkHandle(kvScoreInput, "matrix", "kvScoreInput");
    checkHandle(ape, "matrix", "ape");
    checkForwardMode(mode, "mode");
    const ctx = this.ctx;
    if (!this.enabled() || mode !== "target_verify" || ctx === null || kvScoreInput.rows === 0) return;
    const D = ctx.numVerifyTokens;
    // Rows past batch × D are CUDA-graph padding; fewer rows would leave some requests without prefix states,
    // and their commit would then copy a stale bank (upstream clamps the batch silently; we refuse).
    check(
      kvScoreInput.rows >= ctx.batchSize * D,
      "SHAPE",
      "kvScoreInput.rows",
      kvScoreInput.rows,
      `must be at least batchSize × numVerifyTokens = ${ctx.batchSize} × ${D} (one row per draft token of each request)`,
    );
    const layerBs = ctx.batchSize;
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
    this.checkBatch(reqPoolIndices, seqLens, batchSize);
    if (mark !== null) validateMark(mark, batchSize, this.maxDraftTokens);
    if (!this.enabled() || batchSize === 0) return;
    this.launchCommits(reqPoolIndices, seqLens, batchSize, { clampWidth: null, consume: true, mark });
  }

  /** The commit kernel once per layer; `consume` and `mark` apply to the last layer's launch only. */
  protected launchCommits(rpi: IndexVector, seqLens: IndexVector, batchSize: number, how: CommitLaunch): void {
    for (let l = 0; l < this.numLayers; l++) {
      const last = l === this.numLayers - 1;
      this.counters.commitLaunches++;
      this.backend.commitPending({
        curSeqLens: seqLens,
        reqPoolIndices: rpi,
        pendingSeqLens: this.pendingSeqLens,
        pendingWidths: this.pendingWidths,
        state: this.layers[l]!,
        batchSize,
        maxDraftTokens: this.maxDraftTokens,
        clampWidth: how.clampWidth,
        bankStrideRows: this.bankStrideRows,
        numReqSlots: this.numReqSlots,
        consume: how.consume && last,
        mark: last ? how.mark : null,
      });
    }
  }

  /**
   * A request finishes: commit its pending verify (with its final committed length) before the slot is released,
   * so a snapshot of bank 0 (radix / HiCache) sees every accepted token. Host-known slots and lengths.
   */
  flushFinishing(reqSlots: readonly number[], finalSeqLens: readonly number[]): void {
    checkSlots(reqSlots, this.numReqSlots, "reqSlots");
    checkFinalSeqLens(finalSeqLens, reqSlots.length);
    if (reqSlots.length === 0 || !this.enabled()) return;
    this.counters.flushes++;
    const rpi = this.backend.uploadIndex(Int32Array.from(reqSlots));
    const seq = this.backend.uploadIndex(Int32Array.from(finalSeqLens));
    this.commitPending(rpi, seq, reqSlots.length);
  }

  /**
   * docs/reference/online-mtp.md §9.5 slot-reset hook: fires for NEW assignments of slots to requests. Every bank row
   * of the slot becomes the cleared row (max −∞, sum 0, acc 0) in every layer and its pending marker is dropped.
   */
  onRequestSlotsAssigned(reqSlots: readonly number[]): void {
    checkSlots(reqSlots, this.numReqSlots, "reqSlots");
    if (reqSlots.length === 0) return;
    this.counters.resets++;
    const slots = this.backend.uploadIndex(Int32Array.from(reqSlots));
    for (const [l, state] of this.layers.entries()) {
      this.backend.resetSlots({
        state,
        slots,
        count: reqSlots.length,
        bankStrideRows: this.bankStrideRows,
        maxDraftTokens: this.maxDraftTokens,
        numReqSlots: this.numReqSlots,
        pending: l === 0 ? { seqLens: this.pendingSeqLens, widths: this.pendingWidths } : null,
      });
    }
  }
}

function checkFinalSeqLens(finalSeqLens: readonly number[], n: number): void {
  checkArray(finalSeqLens, "finalSeqLens");
  checkSameLength(finalSeqLens.length, n, "finalSeqLens.length", "reqSlots.length");
  for (const [i, s] of finalSeqLens.entries()) {
    checkInt(s, 0, I32_MAX, "INVALID_ARGUMENT", `finalSeqLens[${i}]`, "must be a non-negative int32");
  }
}

/**
 * Upstream's lifecycle (docs/reference/online-mtp.md §9), kept as a model to show its lost-commit hazard
 * (docs/reference/online-mtp.md §10.1): the commit runs only while the previous verify's context is alive, `clear()`
 * drops it after any forward, and `markPending` resets every request's marker. Finishing requests are not flushed. Do
 * not use it in production.
 */
export class UpstreamOnlineMtpController extends OnlineMtpController {
  override prepareForward(
    mode: ForwardMode,
    reqPoolIndices: IndexVector,
    seqLens: IndexVector,
    verifyBs?: number,
  ): number {
    checkForwardMode(mode, "mode");
    if (verifyBs === undefined && mode === "target_verify") verifyBs = reqPoolIndices.length;
    const bs = this.batchSizeOf(reqPoolIndices, seqLens, verifyBs);
    if (!this.enabled() || mode === "idle" || (verifyBs !== undefined && bs === 0)) {
      this.clear();
      return 0;
    }
    this.commitPending(reqPoolIndices, seqLens, bs);
    if (mode !== "target_verify") return 0;
    this.beginVerify(reqPoolIndices, seqLens, bs);
    return this.stateSlotOffset();
  }

  /** Upstream marks with a global reset: every other request's marker is dropped. */
  override markPending(seqLens: IndexVector, reqPoolIndices: IndexVector, batchSize: number): void {
    this.launchMark(seqLens, reqPoolIndices, batchSize, true);
  }

  /** Upstream commits only with a live verify context, clamps by the current D, keeps the markers. */
  override commitPending(reqPoolIndices: IndexVector, seqLens: IndexVector, batchSize: number): void {
    this.checkBatch(reqPoolIndices, seqLens, batchSize);
    if (this.ctx === null) return;
    if (batchSize === 0) return; // ctx kept
    this.launchCommits(reqPoolIndices, seqLens, batchSize, {
      clampWidth: this.numDraftTokens,
      consume: false,
      mark: null,
    });
    this.clear();
  }

  override flushFinishing(): void {
    // upstream releases a finishing request without committing its last verify
  }
}

export { OnlineMtpError };
