/**
 * State-slot addressing (spec §4). A "slot" is a row of the compress-state pool; a "page" is `compressRatio`
 * consecutive slots, so `page = slot / compressRatio`. All arithmetic is int32 as upstream's, but every input
 * that would overflow or index out of range is refused instead of wrapped.
 */
import { PlannerError } from "./errors.js";
import { DEFAULT_IDENTITY_TOKENS_PER_REQ, INT32_MAX, toIntArray, type FullToState, type ReqToToken } from "./inputs.js";

export interface SlotMaps {
  reqToToken?: ReqToToken;
  fullToState?: FullToState;
}

/** Paged SWA ring: every SWA page owns `ringSize` slots at `[swaPage * ringSize, swaPage * ringSize + ringSize)`. */
export function pagedRingSlot(swaLoc: number, swaPageSize: number, ringSize: number): number {
  return (Math.imul(Math.trunc(swaLoc / swaPageSize), ringSize) + (swaLoc % ringSize)) | 0;
}

/** Request ring: `rid * ringSize + p % ringSize`. */
export function requestRingSlot(rid: number, position: number, ringSize: number): number {
  return (rid * ringSize + (position % ringSize)) | 0;
}

/** Legacy per-request layout: c4 `rid*8 + p%8` (two alternating pages), c128 `rid*128 + p%128`. */
export function legacySlot(compressRatio: number, rid: number, position: number): number {
  return compressRatio === 4 ? (rid * 8 + (position % 8)) | 0 : (rid * 128 + (position % 128)) | 0;
}
export function legacyPage(compressRatio: number, rid: number, position: number): number {
  return compressRatio === 4 ? (rid * 2 + (Math.trunc(position / 4) & 1)) | 0 : rid | 0;
}

/**
 * Resolves (request-pool index, position) to a state slot for one ring configuration. Built once per plan
 * call; `slot()` is the hot path.
 */
export class SlotResolver {
  readonly requestStyle: boolean;
  private readonly r2t: ArrayLike<number> | null;
  private readonly r2tStride: number;
  private readonly r2tRows: number;
  private readonly f2s: Int32Array | Float64Array | null;

  constructor(
    readonly compressRatio: number,
    readonly ringSize: number,
    readonly swaPageSize: number,
    useReqRing: boolean,
    maps: SlotMaps,
  ) {
    this.requestStyle = compressRatio === 128 || useReqRing;
    const r2t = maps.reqToToken ?? { identity: { tokensPerReq: DEFAULT_IDENTITY_TOKENS_PER_REQ } };
    if ("identity" in r2t) {
      const t = r2t.identity.tokensPerReq;
      if (!Number.isInteger(t) || t < 1)
        throw new PlannerError("INVALID_ARGUMENT", "reqToToken.identity.tokensPerReq", t, "must be a positive integer");
      this.r2t = null;
      this.r2tStride = t;
      this.r2tRows = Math.floor(INT32_MAX / t);
    } else {
      if (!Number.isInteger(r2t.stride) || r2t.stride < 1)
        throw new PlannerError("INVALID_ARGUMENT", "reqToToken.stride", r2t.stride, "must be a positive integer");
      if (r2t.data.length % r2t.stride !== 0) {
        throw new PlannerError(
          "INVALID_ARGUMENT",
          "reqToToken.data.length",
          r2t.data.length,
          `must be a multiple of reqToToken.stride ${r2t.stride}`,
        );
      }
      this.r2t = r2t.data;
      this.r2tStride = r2t.stride;
      this.r2tRows = r2t.data.length / r2t.stride;
    }
    const f2s = maps.fullToState ?? "identity";
    // Upstream narrows full_to_state to int32 inside loc(); values beyond int32 are refused here.
    this.f2s = this.requestStyle || f2s === "identity" ? null : toIntArray("fullToState", f2s, 0, INT32_MAX);
  }

  /** Slot of position `p` of the request at pool index `rid`. */
  slot(rid: number, p: number): number {
    if (this.requestStyle) {
      const s = rid * this.ringSize + (p % this.ringSize);
      if (s > INT32_MAX) {
        throw new PlannerError(
          "INT32_OVERFLOW",
          "reqPoolIndices",
          rid,
          `request ring slot rid*${this.ringSize}+p%${this.ringSize} = ${s} does not fit int32`,
        );
      }
      return s;
    }
    if (rid >= this.r2tRows) {
      throw new PlannerError(
        "INDEX_OUT_OF_RANGE",
        "reqPoolIndices",
        rid,
        `must be < ${this.r2tRows} (rows of reqToToken)`,
      );
    }
    if (p >= this.r2tStride) {
      throw new PlannerError(
        "INDEX_OUT_OF_RANGE",
        `reqToToken[${rid}]`,
        p,
        `position must be < ${this.r2tStride} (tokens per request row)`,
      );
    }
    const full = this.r2t === null ? rid * this.r2tStride + p : this.r2t[rid * this.r2tStride + p]!;
    let swa: number;
    if (this.f2s === null) {
      swa = full;
    } else {
      if (!(full >= 0 && full < this.f2s.length)) {
        throw new PlannerError(
          "INDEX_OUT_OF_RANGE",
          `fullToState[reqToToken[${rid}][${p}]]`,
          full,
          `full-pool location must be in [0, ${this.f2s.length})`,
        );
      }
      swa = this.f2s[full]!;
    }
    if (!(swa >= 0)) {
      throw new PlannerError("INDEX_OUT_OF_RANGE", `SWA location of request ${rid} position ${p}`, swa, "must be >= 0");
    }
    return pagedRingSlot(swa, this.swaPageSize, this.ringSize);
  }

  page(rid: number, p: number): number {
    return Math.trunc(this.slot(rid, p) / this.compressRatio);
  }
}
