/**
 * The ring geometry the residency prover reduces states with: which prefixes are interchangeable (the period of
 * the addressing) and the window of committed positions a later batch can still read; a canonical state is planned
 * at the absolute prefix equal to its canonical index. docs/residency-proof.md argues why this reduction is exact.
 * The residency simulator addresses its ring through the same class.
 */
import { SlotResolver } from "../addressing.js";
import { validateRing } from "../inputs.js";
import { earliestFutureReadUnchecked, windowSize } from "../pad.js";

/** Slot a compression reads for window element `e` (docs/reference/planner.md#8-how-kernels-consume-plans). */
export function compressReadSlot(cr: number, e: number, readPage0: number, readPage1: number): number {
  if (cr === 4) return e < 4 ? readPage0 * 4 + e : readPage1 * 4 + (e - 4);
  return readPage1 * cr + e;
}

export interface ProofRing {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  /** c4 only: the request-scoped ring instead of the paged SWA ring. */
  useReqRing?: boolean;
}

/** Identity token maps with room for any position the prover plans at. */
const IDENTITY = { identity: { tokensPerReq: 0x7fffffff } } as const;

export class RingGeometry {
  readonly cr: number;
  readonly ringSize: number;
  readonly swaPageSize: number;
  readonly useReqRing: boolean;
  /** Paged c4 ring: one ring per SWA page, the tail clause, radix resumes. */
  readonly paged: boolean;
  readonly window: number;
  /** Shifting the prefix by this many positions maps slots one-to-one and leaves every plan's shape unchanged. */
  readonly period: number;
  /** Canonical prefixes: the first period as it is (its window reaches below 0), then one period. */
  readonly canonicalCount: number;
  private readonly resolver: SlotResolver;

  constructor(ring: ProofRing) {
    validateRing(ring);
    this.cr = ring.compressRatio;
    this.ringSize = ring.ringSize;
    this.swaPageSize = ring.swaPageSize;
    this.useReqRing = ring.useReqRing ?? false;
    this.paged = this.cr === 4 && !this.useReqRing;
    this.window = windowSize(this.cr);
    this.period = this.paged ? this.swaPageSize : this.ringSize;
    this.canonicalCount = 2 * this.period;
    this.resolver = new SlotResolver(this.cr, this.ringSize, this.swaPageSize, this.useReqRing, {
      reqToToken: IDENTITY,
    });
  }

  /** Options every plan call of the prover shares (one request at pool index 0). */
  planOptions() {
    return {
      compressRatio: this.cr,
      ringSize: this.ringSize,
      swaPageSize: this.swaPageSize,
      useReqRing: this.useReqRing,
      reqPoolIndices: [0],
      reqToToken: IDENTITY,
    };
  }

  /**
   * First committed position a batch starting at prefix `p` can read from the ring: its first compression is at
   * the first q >= p with (q + 1) % cr == 0 and reads from q - window + 1. Negative below the first chunk.
   */
  windowStart(p: number): number {
    return earliestFutureReadUnchecked(this.cr, p);
  }

  /**
   * Canonical index of an absolute prefix: prefixes below one period as they are (positions below 0 are never
   * read nor clobbered, and a paged ring has no page to resume to yet), later ones modulo the period, one period in.
   */
  canonical(p: number): number {
    return p < this.period ? p : this.period + (p % this.period);
  }

  /** Slot the addressing gives position `x` (-1 below position 0, which no batch reads or writes). */
  slotOf(x: number): number {
    return x < 0 ? -1 : this.resolver.slot(0, x);
  }

  /** Slot a compression row reads for window element `e` (the kernels' rule). */
  readSlot(e: number, readPage0: number, readPage1: number): number {
    return compressReadSlot(this.cr, e, readPage0, readPage1);
  }
}
