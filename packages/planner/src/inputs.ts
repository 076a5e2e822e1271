/**
 * Input normalisation and validation shared by every planner entry point. Upstream narrows int64 inputs to
 * int32 and trusts them; we refuse anything that would not survive that narrowing or would index out of range.
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { PlannerError } from "./errors.js";

/** Integer arrays as users hold them: plain arrays, typed arrays, or int64 tensors as BigInt64Array. */
export type IntegerArray = ArrayLike<number> | ArrayLike<bigint> | BigInt64Array;

/** `req_to_token`: a dense row-major int32 matrix, or the identity map `r * tokensPerReq + p`. */
export type ReqToToken = { data: ArrayLike<number>; stride: number } | { identity: { tokensPerReq: number } };

/** `full_to_state`: full-pool location to SWA location, or the identity. */
export type FullToState = IntegerArray | "identity";

export const DEFAULT_IDENTITY_TOKENS_PER_REQ = 2048;
export const MAX_NUM_Q_TOKENS = 65535; // ragged ids are uint16 in CompressPlan and in packed WritePlan ids
export const UPSTREAM_DEVICE_BATCH_LIMIT = 1024; // one block of 1024 threads, one thread per request
export const INT32_MAX = 0x7fffffff;

/**
 * The most elements one array input may hold (2^27: 512 MiB as int32). Why a bound: a length is read before any
 * element, so an array-like `{ length: 1e9 }` or a sparse `new Array(1e9)` would allocate gigabytes first.
 */
export const MAX_ARRAY_LENGTH = 2 ** 27;

/** Refuses anything but an array or a typed array of at most MAX_ARRAY_LENGTH elements, before its length is used. */
export function requireIntegerArray(field: string, values: unknown): void {
  const isArray = Array.isArray(values) || (ArrayBuffer.isView(values) && !(values instanceof DataView));
  if (!isArray) {
    throw new PlannerError("INVALID_TYPE", field, values, "must be an array or a typed array of integers");
  }
  const n = (values as ArrayLike<unknown>).length;
  if (n > MAX_ARRAY_LENGTH) {
    throw new PlannerError("INVALID_ARGUMENT", `${field}.length`, n, `must be at most ${MAX_ARRAY_LENGTH}`, {
      max: MAX_ARRAY_LENGTH,
    });
  }
}

/** Reads element i of an IntegerArray as a JS number, refusing non-integers and values outside int64-safe range. */
export function toIntArray(field: string, values: IntegerArray, min: number, max: number): Int32Array | Float64Array {
  requireIntegerArray(field, values);
  const n = values.length;
  const out = max <= INT32_MAX && min >= -INT32_MAX - 1 ? new Int32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const raw = values[i] as number | bigint | undefined;
    const v = typeof raw === "bigint" ? Number(raw) : raw;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      throw new PlannerError("INVALID_ARGUMENT", `${field}[${i}]`, raw, "must be an integer");
    }
    if (v < min || v > max) {
      throw new PlannerError(
        v > INT32_MAX ? "INT32_OVERFLOW" : "INVALID_ARGUMENT",
        `${field}[${i}]`,
        raw,
        `must be in [${min}, ${max}]`,
      );
    }
    out[i] = v;
  }
  return out;
}

export function requireInteger(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new PlannerError("INVALID_ARGUMENT", field, value, "must be an integer");
  }
  if (value < min || value > max) {
    throw new PlannerError("INVALID_ARGUMENT", field, value, `must be in [${min}, ${max}]`);
  }
  return value;
}

/** Refuses a per-request array whose length differs from the batch (`seqLens.length`). */
export function requireBatchLength(field: string, length: number, batch: number): void {
  if (length !== batch) {
    throw new PlannerError("INVALID_ARGUMENT", `${field}.length`, length, `must equal seqLens.length ${batch}`);
  }
}

/** Refuses options that are not a plain object (an array, null, a string) before any field is read. */
export function requireOptionsObject(options: unknown): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new PlannerError("INVALID_TYPE", "options", options, "must be an options object");
  }
}

const RING_KEYS = ["compressRatio", "ringSize", "swaPageSize", "useReqRing"] as const;
const MAP_KEYS = ["reqToToken", "fullToState"] as const;
/** The keys of a random residency run, whichever ring it runs on. */
const SCENARIO_KEYS = ["draftTokens", "adaptive", "steps", "seed", "initialPrefill", "mixBatches"] as const;

/** The option keys each public planning function reads; anything else is a typo or a key of another function. */
export const PLAN_OPTION_KEYS = {
  prefill: [
    ...RING_KEYS,
    ...MAP_KEYS,
    "seqLens",
    "extendLens",
    "reqPoolIndices",
    "numQTokens",
    "useCudaGraph",
    "path",
    "writePadOverride",
    "deviceBatchLimit",
  ],
  decode: [...RING_KEYS, ...MAP_KEYS, "seqLens", "reqPoolIndices"],
  "prefill-legacy": ["compressRatio", "seqLens", "extendLens", "reqPoolIndices", "numQTokens", "useCudaGraph"],
  "decode-legacy": ["compressRatio", "seqLens", "reqPoolIndices"],
  "residency-scenario": [...RING_KEYS, "writePad", "padFormula", ...SCENARIO_KEYS, "onStep", "onBatch", "stop"],
  "pair-ring-scenario": ["compressRatio", "ringSize", "verifyWriter", ...SCENARIO_KEYS],
} as const satisfies Record<string, readonly string[]>;

/** Refuses a non-object and any key `kind`'s options do not have (UNKNOWN_KEY, with the closest known key). */
export function requireOptionKeys(options: unknown, kind: keyof typeof PLAN_OPTION_KEYS): void {
  requireOptionsObject(options);
  const known: readonly string[] = PLAN_OPTION_KEYS[kind];
  for (const key of Object.keys(options as object)) {
    if (known.includes(key)) continue;
    const suggestion = closestMatch(key, known);
    const params = suggestion === null ? { kind } : { kind, suggestion };
    throw new PlannerError(
      "UNKNOWN_KEY",
      key,
      (options as Record<string, unknown>)[key],
      `is not an option of ${kind} planning`,
      params,
    );
  }
}

/** An optional boolean flag: absent, true or false; never a string or number read for its truthiness. */
export function optionalBoolean(field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw new PlannerError("INVALID_TYPE", field, value, "must be true or false");
  return value;
}

export interface RingOptions {
  /** 4 or 128. */
  compressRatio: number;
  /** Raw-token slots per ring (per SWA page for paged c4, per request otherwise). */
  ringSize: number;
  /** Tokens per SWA page. */
  swaPageSize: number;
  /** c4 only: address a request-scoped ring `rid * ringSize + p % ringSize` instead of the paged SWA ring. */
  useReqRing?: boolean;
}

/**
 * docs/reference/planner.md §5.2 checks 2, 3 and 5: ratio, req-ring only for c4, ring divides the SWA page and is a
 * whole number of chunks.
 */
export function validateRing(o: RingOptions): void {
  requireOptionsObject(o);
  if (o.compressRatio !== 4 && o.compressRatio !== 128) {
    throw new PlannerError(
      "INVALID_RATIO",
      "compressRatio",
      o.compressRatio,
      "must be 4 or 128 (the compress planner serves c4 and c128 only)",
    );
  }
  if (optionalBoolean("useReqRing", o.useReqRing) && o.compressRatio !== 4) {
    throw new PlannerError(
      "REQ_RING_NEEDS_C4",
      "useReqRing",
      true,
      "a request ring is a c4 option; c128 always uses its request ring (set useReqRing only with compressRatio 4)",
    );
  }
  requireInteger("ringSize", o.ringSize, 1, INT32_MAX);
  requireInteger("swaPageSize", o.swaPageSize, 1, INT32_MAX);
  if (o.ringSize % o.compressRatio !== 0) {
    throw new PlannerError(
      "INVALID_RING",
      "ringSize",
      o.ringSize,
      `must be a multiple of compressRatio ${o.compressRatio} (a state page is ${o.compressRatio} consecutive slots)`,
    );
  }
  if (o.swaPageSize % o.ringSize !== 0) {
    throw new PlannerError(
      "INVALID_RING",
      "swaPageSize",
      o.swaPageSize,
      `must be a multiple of ringSize ${o.ringSize} (each SWA page owns whole rings)`,
    );
  }
}
