/**
 * Decode planning (docs/reference/planner.md §6, §7): one DecodePlan per request, whether or not it compresses this
 * step. Upstream's decode planner validates nothing but the req-ring/ratio pairing; we validate the ring as the
 * prefill planner does, and `S >= 1`.
 */
import { SlotResolver, legacyPage, legacySlot, requireLegacyRid, type SlotMaps } from "./addressing.js";
import { PlannerError } from "./errors.js";
import {
  INT32_MAX,
  requireBatchLength,
  requireOptionKeys,
  toIntArray,
  validateRing,
  type IntegerArray,
  type RingOptions,
} from "./inputs.js";
import { DecodePlanTable } from "./records.js";

export interface DecodePlanOptions extends RingOptions, SlotMaps {
  /** `S` per request, including the token decoded now (so `S >= 1`). */
  seqLens: IntegerArray;
  reqPoolIndices?: IntegerArray;
}

/** Decode inputs as every decode planner (CPU, GPU, legacy) validates them: `S >= 1`, pool indices >= 0. */
export function validateDecodeInputs(
  seqLensIn: IntegerArray,
  ridsIn: IntegerArray | undefined,
): { seqLens: Int32Array; rids: Int32Array | Float64Array } {
  const seqLens = toIntArray("seqLens", seqLensIn, 1, INT32_MAX) as Int32Array;
  if (seqLens.length === 0)
    throw new PlannerError("BATCH_SIZE", "seqLens.length", 0, "a decode plan needs at least one request");
  const rids =
    ridsIn === undefined
      ? Int32Array.from({ length: seqLens.length }, (_, i) => i)
      : toIntArray("reqPoolIndices", ridsIn, 0, Number.MAX_SAFE_INTEGER);
  requireBatchLength("reqPoolIndices", rids.length, seqLens.length);
  return { seqLens, rids };
}

/** planDecodeLegacy's checks, in its order (the GPU planner runs the same ones): keys, ratio, inputs, pool indices. */
export function validateLegacyDecode(options: LegacyDecodePlanOptions): {
  cr: 4 | 128;
  seqLens: Int32Array;
  rids: Int32Array | Float64Array;
} {
  requireOptionKeys(options, "decode-legacy");
  const cr = options.compressRatio;
  if (cr !== 4 && cr !== 128) throw new PlannerError("INVALID_RATIO", "compressRatio", cr, "must be 4 or 128");
  const { seqLens, rids } = validateDecodeInputs(options.seqLens, options.reqPoolIndices);
  for (let i = 0; i < rids.length; i++) requireLegacyRid(`reqPoolIndices[${i}]`, rids[i]!);
  return { cr, seqLens, rids };
}

/** `{S, slot(S-1), page(max(S-1-cr, 0)), page(S-1)}` per request. */
export function planDecode(options: DecodePlanOptions): DecodePlanTable {
  requireOptionKeys(options, "decode");
  validateRing(options);
  const cr = options.compressRatio;
  const { seqLens, rids } = validateDecodeInputs(options.seqLens, options.reqPoolIndices);
  const resolver = new SlotResolver(cr, options.ringSize, options.swaPageSize, options.useReqRing ?? false, options);
  const plan = DecodePlanTable.allocate(seqLens.length);
  const w = plan.words;
  const s = plan.signedWords;
  for (let i = 0; i < seqLens.length; i++) {
    const seqLen = seqLens[i]!;
    const rid = rids[i]!;
    const p1 = seqLen - 1;
    const p0 = Math.max(p1 - cr, 0);
    const writeLoc = resolver.slot(rid, p1);
    w[i * 4] = seqLen;
    s[i * 4 + 1] = writeLoc;
    s[i * 4 + 2] = Math.trunc(resolver.slot(rid, p0) / cr);
    s[i * 4 + 3] = Math.trunc(writeLoc / cr);
  }
  return plan;
}

export interface LegacyDecodePlanOptions {
  compressRatio: number;
  seqLens: IntegerArray;
  reqPoolIndices?: IntegerArray;
}

/**
 * Legacy decode (docs/reference/planner.md §7):
 * `{S, legacySlot(rid, S-1), legacyPage(rid, max(S-1-cr, 0)), legacyPage(rid, S-1)}`.
 */
export function planDecodeLegacy(options: LegacyDecodePlanOptions): DecodePlanTable {
  const { cr, seqLens, rids } = validateLegacyDecode(options);
  const plan = DecodePlanTable.allocate(seqLens.length);
  for (let i = 0; i < seqLens.length; i++) {
    const seqLen = seqLens[i]!;
    const rid = rids[i]!;
    const p1 = seqLen - 1;
    const p0 = Math.max(p1 - cr, 0);
    plan.set(i, {
      seqLen,
      writeLoc: legacySlot(cr, rid, p1),
      readPage0: legacyPage(cr, rid, p0),
      readPage1: legacyPage(cr, rid, p1),
    });
  }
  return plan;
}
