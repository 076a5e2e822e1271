/**
 * State-slot addressing (docs/reference/planner.md §4). A "slot" is a row of the compress-state pool; a "page" is
 * `compressRatio` consecutive slots, so `page = slot / compressRatio`. All arithmetic is int32 as upstream's, but every
 * input that would overflow or index out of range is refused instead of wrapped.
 */
import { isRecord } from "@dsv4-kv/errors/internal";
import { PlannerError } from "./errors.js";
import {
  DEFAULT_IDENTITY_TOKENS_PER_REQ,
  type FullToState,
  INT32_MAX,
  type ReqToToken,
  requireIntegerArray,
  toIntArray,
} from "./inputs.js";

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
/**
 * Legacy slots are `rid*8 + p%8` (c4) or `rid*128 + p%128` (c128) in int32. One bound serves both ratios, the
 * c128 one (`rid*128 + 127 <= INT32_MAX`), as the GPU kernels check it: c4 indices above (2^31 - 128) / 128 would
 * still fit, but no pool has 16.7M request slots, and one bound keeps CPU and GPU refusing the same inputs.
 */
export function requireLegacyRid(field: string, rid: number): void {
  if (rid * 128 + 127 > INT32_MAX) {
    throw new PlannerError("INT32_OVERFLOW", field, rid, "legacy slot rid*ringSize + p%ringSize does not fit int32");
  }
}
export function legacyPage(compressRatio: number, rid: number, position: number): number {
  return compressRatio === 4 ? (rid * 2 + (Math.trunc(position / 4) & 1)) | 0 : rid | 0;
}

/**
 * The slot maps after validation: what `SlotResolver` and the GPU planner address with. Request-style addressing
 * (c128, or c4 with `useReqRing`) reads no table, so it carries none and describes the identity's rows.
 */
export interface SlotMapGeometry {
  /** `rid * ringSize + p % ringSize` (c128, or c4 with a request ring): no table is read. */
  readonly requestStyle: boolean;
  /** Tokens per `reqToToken` row. */
  readonly stride: number;
  /** Rows of `reqToToken` (for the identity, or request-style, the most that fit int32). */
  readonly rows: number;
  /**
   * Dense `reqToToken` data as given (null for the identity or request-style). Not validated here: the CPU
   * planner checks each element it reads, `reqToTokenInt32` checks a whole table for the device.
   */
  readonly reqToToken: ArrayLike<number> | null;
  /** `fullToState` as int32 (null for the identity or request-style). */
  readonly fullToState: Int32Array | null;
  /** Length of `fullToState` (0 when null). */
  readonly fullToStateLength: number;
}

/** Validates and normalises the slot maps of one ring configuration (the one copy of these checks). */
export function slotMapGeometry(compressRatio: number, useReqRing: boolean, maps: SlotMaps): SlotMapGeometry {
  const requestStyle = compressRatio === 128 || useReqRing;
  const r2t = reqToTokenMap(maps.reqToToken);
  let stride: number;
  let rows: number;
  let data: ArrayLike<number> | null = null;
  if ("identity" in r2t) {
    stride = requirePositive("reqToToken.identity.tokensPerReq", r2t.identity.tokensPerReq);
    rows = Math.floor(INT32_MAX / stride);
  } else {
    stride = requirePositive("reqToToken.stride", r2t.stride);
    if (r2t.data.length % stride !== 0) {
      throw new PlannerError(
        "INVALID_ARGUMENT",
        "reqToToken.data.length",
        r2t.data.length,
        `must be a multiple of reqToToken.stride ${stride}`,
      );
    }
    rows = requestStyle ? Math.floor(INT32_MAX / stride) : r2t.data.length / stride;
    if (!requestStyle) data = r2t.data;
  }
  const f2s = maps.fullToState === undefined ? "identity" : maps.fullToState;
  if (f2s !== "identity") requireIntegerArray("fullToState", f2s);
  // Upstream narrows full_to_state to int32 inside loc(); values beyond int32 are refused here.
  const fullToState =
    requestStyle || f2s === "identity" ? null : (toIntArray("fullToState", f2s, 0, INT32_MAX) as Int32Array);
  return { requestStyle, stride, rows, reqToToken: data, fullToState, fullToStateLength: fullToState?.length ?? 0 };
}

/**
 * `reqToToken` as given: absent means the identity map of DEFAULT_IDENTITY_TOKENS_PER_REQ; anything else must be
 * one of the two forms (null is not "absent": it used to fall back to the identity without a word).
 */
function reqToTokenMap(value: unknown): ReqToToken {
  if (value === undefined) return { identity: { tokensPerReq: DEFAULT_IDENTITY_TOKENS_PER_REQ } };
  const forms = "must be { identity: { tokensPerReq } } or { data, stride } (omit it for the identity map)";
  if (!isRecord(value)) throw new PlannerError("INVALID_TYPE", "reqToToken", value, forms);
  if ("identity" in value) {
    if (!isRecord(value.identity))
      throw new PlannerError("INVALID_TYPE", "reqToToken.identity", value.identity, "must be { tokensPerReq }");
    return value as ReqToToken;
  }
  if (!("data" in value)) throw new PlannerError("INVALID_TYPE", "reqToToken", value, forms);
  requireIntegerArray("reqToToken.data", value.data);
  return value as ReqToToken;
}

/** A row length of `reqToToken`: at least 1, and at most int32 (locations are int32, so a longer row has no room). */
function requirePositive(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new PlannerError("INVALID_ARGUMENT", field, value, "must be a positive integer");
  }
  if (value > INT32_MAX) {
    throw new PlannerError(
      "INT32_OVERFLOW",
      field,
      value,
      `must be at most ${INT32_MAX}: reqToToken holds int32 full-pool locations, so not one row of ${value} fits`,
      { max: INT32_MAX },
    );
  }
  return value;
}

/**
 * Refuses element `index` of `reqToToken.data` when it is not an int32 integer (NaN, Infinity, a fraction, or a
 * value that int32 narrowing would wrap). Negative integers are left to the slot math's range checks.
 */
export function reqToTokenElementError(index: number, value: unknown): PlannerError {
  const integer = typeof value === "number" && Number.isInteger(value);
  return new PlannerError(
    integer ? "INT32_OVERFLOW" : "INVALID_ARGUMENT",
    `reqToToken.data[${index}]`,
    value,
    `must be an integer in [0, ${INT32_MAX}] (a full-pool location, int32 upstream)`,
  );
}

/**
 * A dense `reqToToken` table as int32 for the device, every element checked (an Int32Array is used as it is:
 * it cannot hold anything else). The device reads elements the host does not see, so the whole table is checked.
 */
export function reqToTokenInt32(data: ArrayLike<number>): Int32Array {
  if (data instanceof Int32Array) return data;
  const out = new Int32Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if ((v | 0) !== v) throw reqToTokenElementError(i, v);
    out[i] = v;
  }
  return out;
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
  private readonly f2s: Int32Array | null;

  constructor(
    readonly compressRatio: number,
    readonly ringSize: number,
    readonly swaPageSize: number,
    useReqRing: boolean,
    maps: SlotMaps,
  ) {
    const g = slotMapGeometry(compressRatio, useReqRing, maps);
    this.requestStyle = g.requestStyle;
    this.r2t = g.reqToToken;
    this.r2tStride = g.stride;
    this.r2tRows = g.rows;
    this.f2s = g.fullToState;
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
    // reqToToken data is checked per element read, not up front: a plan reads O(rows) elements, so a large table
    // (1024 x 16384) costs nothing extra; `(v | 0) === v` is an integer inside int32 (no NaN, Infinity, wrap).
    let full: number;
    if (this.r2t === null) {
      full = rid * this.r2tStride + p;
    } else {
      const index = rid * this.r2tStride + p;
      full = this.r2t[index]!;
      if ((full | 0) !== full) throw reqToTokenElementError(index, full);
    }
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
