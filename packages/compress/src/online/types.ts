/**
 * The online c128 driver's inputs and outputs (docs/reference/online-mtp.md §2, §9.6): one request's share of one
 * forward, and one compressed entry.
 */
import type { OnlineMtpBackend, StateDtype } from "@dsv4-kv/online-mtp-controller";

/** The kinds of forward the driver runs; one kind per step (a forward is one batch). */
export type OnlineStepKind = "extend" | "verify" | "decode";

export interface OnlineRequestStep {
  /** Request-pool index, >= 1 (slot 0 is the dummy / padding slot). */
  slot: number;
  /** Committed length of the request before this step. */
  prefix: number;
  kind: OnlineStepKind;
  /**
   * E rows × 1024 floats, row i = the token at position prefix + i: `[kv(512) | score(512)]`. extend: E >= 1 (all
   * committed); decode: E = 1; verify: E = D, the draft tokens, the same D for every request of the step.
   */
  tokens: Float32Array;
  /** verify only: a, the tokens kept, in [1, E]; the committed length becomes prefix + a. */
  accept?: number;
}

export interface OnlineEntry {
  slot: number;
  /** q, the position of the chunk's last token: (q + 1) % 128 == 0. */
  position: number;
  /** 512 floats: the compressed entry of positions q − 127 .. q. */
  values: Float32Array;
}

export interface OnlineC128DriverOptions {
  backend: OnlineMtpBackend;
  /** N, rows of the request table: slots 1 .. N − 1 serve requests. */
  numReqSlots: number;
  /** Dmax: draft banks allocated (verify widths up to min(8, Dmax)). */
  maxDraftTokens: number;
  stateDtype: StateDtype;
  /** 128 × 512 fp32 positional bias (row = in-chunk position). */
  ape: Float32Array;
}
