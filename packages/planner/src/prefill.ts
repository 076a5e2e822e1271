/**
 * Prefill / verify planning (docs/reference/planner.md §5): which positions of a batch compress (PlanC), which raw
 * tokens are persisted into the ring (PlanW), then stage-1 location finalisation.
 *
 * Both upstream paths are mirrored:
 *  - `host`: the CPU host loop. Rows are batch-major, positions ascending; without `useCudaGraph` the tables hold
 *    exactly the valid rows, with it they are padded with invalid rows to `numQTokens`.
 *  - `device`: the contract of the GPU kernel. Always `numQTokens` rows, valid rows first (the kernel's order is
 *    unspecified; this mirror emits the host order), the same multiset as the host loop.
 */
import { SlotResolver, legacyPage, legacySlot, requireLegacyRid, type SlotMaps } from "./addressing.js";
import { PlannerError } from "./errors.js";
import {
  MAX_NUM_Q_TOKENS,
  INT32_MAX,
  UPSTREAM_DEVICE_BATCH_LIMIT,
  optionalBoolean,
  requireBatchLength,
  requireInteger,
  requireOptionKeys,
  requireOptionsObject,
  toIntArray,
  validateRing,
  type IntegerArray,
  type RingOptions,
} from "./inputs.js";
import { writePad as derivedWritePad, windowSize } from "./pad.js";
import { CompressPlanTable, INVALID_RAGGED_ID, INVALID_SEQ_LEN, WritePlanTable } from "./records.js";

export type PlannerPath = "host" | "device";

export interface PrefillPlanOptions extends RingOptions, SlotMaps {
  /** `S` per request: sequence length after this batch (int64 upstream). */
  seqLens: IntegerArray;
  /** `E` per request: tokens in this batch. */
  extendLens: IntegerArray;
  /** Request-pool index per batch entry; default `0..B-1`. */
  reqPoolIndices?: IntegerArray;
  /** Rows of the ragged input; default the sum of `extendLens`. */
  numQTokens?: number;
  /** Host path only: pad both tables to `numQTokens` rows (a CUDA-graph bucket). */
  useCudaGraph?: boolean;
  /** Which upstream path to mirror; default `host`. */
  path?: PlannerPath;
  /**
   * Override the write pad. For simulation and regression tests only (e.g. the pre-fix pads); production
   * callers leave it unset and get `writePad(compressRatio, ringSize)`.
   */
  writePadOverride?: number;
  /** Device path: most requests per call. Upstream's single-block kernel: 1024. */
  deviceBatchLimit?: number;
}

export interface PrefillPlan {
  planC: CompressPlanTable;
  planW: WritePlanTable;
  /** Valid rows of each table (they come first). */
  numCompress: number;
  numWrite: number;
  writePad: number;
  path: PlannerPath;
  /** Device path only: which kernel-0 path upstream would take (uniform: every E equal and in [1, 32]). */
  devicePath?: "uniform" | "general";
}

/** PrefillPlanOptions after validation: what every prefill planner (CPU stage 0, the GPU kernels) starts from. */
export interface NormalizedPrefillOptions {
  readonly cr: number;
  readonly ringSize: number;
  readonly swaPageSize: number;
  readonly useReqRing: boolean;
  readonly seqLens: Int32Array;
  readonly extendLens: Int32Array;
  /** Request-pool indices (0..batch-1 when the options give none). */
  readonly rids: Int32Array | Float64Array;
  readonly numQ: number;
  readonly batch: number;
  /** The write pad in effect: writePad(cr, ringSize), 0 for legacy, or writePadOverride. */
  readonly pad: number;
  readonly path: PlannerPath;
  readonly useCudaGraph: boolean;
}
type NormalizedPrefill = NormalizedPrefillOptions;

/**
 * Validates prefill options exactly as `planPrefill` (or, with `legacy`, `planPrefillLegacy`) does: the same
 * PlannerError code, field and order, in O(batch) and without building plan tables. The GPU planner uses it so that
 * both planners refuse the same inputs the same way.
 */
export function normalizePrefillOptions(
  options: PrefillPlanOptions,
  opts: { legacy?: boolean } = {},
): NormalizedPrefillOptions {
  return normalizePrefill(options, opts.legacy ?? false);
}

/**
 * docs/reference/planner.md §5.2 validation, with the device-path checks upstream skipped
 * (docs/reference/planner.md §12.2) added. The checks run in this order, so the first refusal is the CPU planner's.
 */
function normalizePrefill(o: PrefillPlanOptions, legacy: boolean): NormalizedPrefill {
  const path = prefillPathOf(o, legacy);
  const hostRules = path === "host" || legacy;
  const { seqLens, extendLens, rids, batch } = prefillArrays(o);
  let extendSum = 0;
  for (let b = 0; b < batch; b++) extendSum += Math.max(0, extendLens[b]!);
  const numQ = o.numQTokens ?? extendSum;
  requireInteger("numQTokens", numQ, 0, Number.MAX_SAFE_INTEGER);
  checkExtendLens(seqLens, extendLens, hostRules);
  checkBatchAndTokens(batch, numQ);
  if (path === "device" && !legacy) checkDeviceBatchLimit(o.deviceBatchLimit, batch);
  checkExtendSum(extendSum, numQ, hostRules);
  let pad = legacy ? 0 : derivedWritePad(o.compressRatio, o.ringSize);
  if (o.writePadOverride !== undefined) pad = requireInteger("writePadOverride", o.writePadOverride, 0, INT32_MAX);
  return {
    cr: o.compressRatio,
    ringSize: o.ringSize,
    swaPageSize: o.swaPageSize,
    useReqRing: o.useReqRing ?? false,
    seqLens,
    extendLens,
    rids,
    numQ,
    batch,
    pad,
    path,
    useCudaGraph: optionalBoolean("useCudaGraph", o.useCudaGraph),
  };
}

/** The options object, its path, and its ratio (legacy: 4 or 128) or ring geometry. */
function prefillPathOf(o: PrefillPlanOptions, legacy: boolean): PlannerPath {
  requireOptionsObject(o);
  const path = o.path ?? "host";
  if (path !== "host" && path !== "device")
    throw new PlannerError("INVALID_ARGUMENT", "path", path, 'must be "host" or "device"');
  if (legacy) {
    if (o.compressRatio !== 4 && o.compressRatio !== 128) {
      throw new PlannerError("INVALID_RATIO", "compressRatio", o.compressRatio, "must be 4 or 128");
    }
  } else {
    validateRing(o);
  }
  return path;
}

/** The per-request arrays as integers, one entry per request (request-pool indices default to 0..batch-1). */
function prefillArrays(o: PrefillPlanOptions) {
  const seqLens = toIntArray("seqLens", o.seqLens, 0, INT32_MAX) as Int32Array;
  const extendLens = toIntArray("extendLens", o.extendLens, -INT32_MAX - 1, INT32_MAX) as Int32Array;
  const batch = seqLens.length;
  requireBatchLength("extendLens", extendLens.length, batch);
  const rids =
    o.reqPoolIndices === undefined
      ? Int32Array.from({ length: batch }, (_, i) => i)
      : toIntArray("reqPoolIndices", o.reqPoolIndices, 0, Number.MAX_SAFE_INTEGER);
  requireBatchLength("reqPoolIndices", rids.length, batch);
  return { seqLens, extendLens, rids, batch };
}

/**
 * Host loop: 0 < E <= S per request in order. Device path: upstream checks none of this; we refuse E < 0 and E > S.
 * E == 0 stays legal there: a zero-length entry contributes nothing and upstream's ragged regression test relies on
 * it.
 */
function checkExtendLens(seqLens: Int32Array, extendLens: Int32Array, hostRules: boolean): void {
  const minE = hostRules ? 1 : 0;
  for (let b = 0; b < seqLens.length; b++) {
    const e = extendLens[b]!;
    const s = seqLens[b]!;
    if (e < minE) {
      throw new PlannerError(
        "EXTEND_LEN",
        `extendLens[${b}]`,
        e,
        minE === 1 ? "must be > 0 (every request in a prefill batch extends by at least one token)" : "must be >= 0",
      );
    }
    if (e > s) {
      throw new PlannerError(
        "EXTEND_LEN",
        `extendLens[${b}]`,
        e,
        `must be <= seqLens[${b}] = ${s} (the prefix S - E cannot be negative)`,
      );
    }
  }
}

/** At least one request and one token, and batch <= numQ <= MAX_NUM_Q_TOKENS. */
function checkBatchAndTokens(batch: number, numQ: number): void {
  if (batch === 0 || numQ === 0) {
    throw new PlannerError(
      "BATCH_SIZE",
      batch === 0 ? "seqLens.length" : "numQTokens",
      batch === 0 ? batch : numQ,
      "a prefill plan needs at least one request and one token (upstream launches a zero-block grid)",
    );
  }
  if (!(batch <= numQ && numQ <= MAX_NUM_Q_TOKENS)) {
    throw new PlannerError(
      "NUM_Q_TOKENS",
      "numQTokens",
      numQ,
      `must satisfy batch size ${batch} <= numQTokens <= ${MAX_NUM_Q_TOKENS} (ragged ids are 16-bit)`,
    );
  }
}

/** The device path's batch limit: upstream's single-block kernel, or the caller's `deviceBatchLimit`. */
function checkDeviceBatchLimit(deviceBatchLimit: number | undefined, batch: number): void {
  const limit =
    deviceBatchLimit === undefined
      ? UPSTREAM_DEVICE_BATCH_LIMIT
      : requireInteger("deviceBatchLimit", deviceBatchLimit, 1, INT32_MAX);
  if (batch > limit) {
    throw new PlannerError(
      "BATCH_SIZE",
      "seqLens.length",
      batch,
      `the device planner serves at most ${limit} requests per call`,
    );
  }
}

/** Host rules: sum(E) == numQ. Device path: sum(E) <= numQ (more would write past the numQ-row tables). */
function checkExtendSum(extendSum: number, numQ: number, hostRules: boolean): void {
  if (hostRules) {
    if (extendSum !== numQ) {
      throw new PlannerError(
        "EXTEND_SUM",
        "numQTokens",
        numQ,
        `must equal the sum of extendLens (${extendSum}) on the host path`,
      );
    }
  } else if (extendSum > numQ) {
    throw new PlannerError(
      "EXTEND_SUM",
      "numQTokens",
      numQ,
      `must be >= the sum of extendLens (${extendSum}); the plan tables have numQTokens rows`,
    );
  }
}

/**
 * Stage 0 (docs/reference/planner.md §3 rules), written straight into the tables' 32-bit words (`signedWords`: same
 * bits as the unsigned fields). Emits, per request, compress events at every `p` with `(p+1) % cr == 0` and writes at
 * every `p >= firstWritePos` plus (paged c4) the last `cr` positions of every SWA page; both in ascending position.
 * Works on ranges rather than testing every token, so its cost is per row, not per token, and it allocates
 * nothing. Returns [numCompress, numWrite].
 */
export function stage0Into(
  cr: number,
  swaPageSize: number,
  pad: number,
  tailClause: boolean,
  seqLens: ArrayLike<number>,
  extendLens: ArrayLike<number>,
  cWords: Int32Array,
  wWords: Int32Array,
): [number, number] {
  const window = windowSize(cr);
  const overlap = cr === 4 ? cr : 0;
  let nc = 0;
  let nw = 0;
  let base = 0;
  const batch = seqLens.length;
  for (let b = 0; b < batch; b++) {
    const s = seqLens[b]! | 0;
    const e = extendLens[b]! | 0;
    const prefix = s - e;
    const lastCompressPos = ((s / cr) | 0) * cr;
    const firstW = Math.min(lastCompressPos - overlap, s - pad);
    // compress events: first p >= prefix with (p + 1) % cr == 0. Rows whose window reaches into the ring
    // (bufferLen > 0, only the first W/cr events of a request) come first; after them every row has
    // bufferLen 0 and its fields advance by cr, so that loop runs on a precomputed trip count, two rows per turn.
    const rem = (prefix + 1) % cr;
    let q = rem === 0 ? prefix : prefix + cr - rem;
    let j = q - prefix;
    let i = nc << 2;
    for (; q < s && j + 1 < window; q += cr, j += cr) {
      cWords[i] = q + 1;
      cWords[i + 1] = ((base + j) & 0xffff) | ((window - j - 1) << 16);
      cWords[i + 2] = -1;
      cWords[i + 3] = b;
      i += 4;
    }
    const steadyRows = q < s ? (((s - 1 - q) / cr) | 0) + 1 : 0;
    const end = i + (steadyRows << 2);
    const endPairs = i + ((steadyRows & ~1) << 2);
    let seqLenOut = q + 1;
    let ragged = base + j;
    for (; i < endPairs; i += 8, seqLenOut += 2 * cr, ragged += 2 * cr) {
      cWords[i] = seqLenOut;
      cWords[i + 1] = ragged & 0xffff;
      cWords[i + 2] = -1;
      cWords[i + 3] = b;
      cWords[i + 4] = seqLenOut + cr;
      cWords[i + 5] = (ragged + cr) & 0xffff;
      cWords[i + 6] = -1;
      cWords[i + 7] = b;
    }
    if (i < end) {
      cWords[i] = seqLenOut;
      cWords[i + 1] = ragged & 0xffff;
      cWords[i + 2] = -1;
      cWords[i + 3] = b;
      i += 4;
    }
    nc = i >> 2;
    // ragged | batch << 16 equals ragged + (batch << 16): ragged < 2^16. `rowBase + p` is that value for p.
    const rowBase = ((b & 0xffff) << 16) + base - prefix;
    const mainStart = Math.max(firstW, prefix);
    let k = nw << 1;
    if (tailClause) {
      // SWA-page tail clause: [m*SPS + SPS - cr, (m+1)*SPS) for every page m, below the main range
      const limit = Math.min(mainStart, s);
      for (let t = ((prefix / swaPageSize) | 0) * swaPageSize + swaPageSize - cr; t < limit; t += swaPageSize) {
        const hi = Math.min(t + cr, limit);
        for (let p = Math.max(t, prefix); p < hi; p++) {
          wWords[k] = rowBase + p;
          wWords[k + 1] = p + 1;
          k += 2;
        }
      }
    }
    const endK = mainStart < s ? k + 2 * (s - mainStart) : k;
    for (let packed = rowBase + mainStart, writeLocOut = mainStart + 1; k < endK; k += 2, packed++, writeLocOut++) {
      wWords[k] = packed;
      wWords[k + 1] = writeLocOut;
    }
    nw = k >> 1;
    base += e;
  }
  return [nc, nw];
}

/**
 * Stage 1 (docs/reference/planner.md §5.5): replace batch indices and positions by state pages and slots; fill padding
 * rows.
 */
function stage1(
  cr: number,
  resolver: SlotResolver,
  rids: ArrayLike<number>,
  planC: CompressPlanTable,
  numCompress: number,
  planW: WritePlanTable,
  numWrite: number,
): void {
  const cw = planC.words;
  const cs = planC.signedWords;
  for (let i = 0; i < numCompress; i++) {
    const bufferLen = cw[i * 4 + 1]! >>> 16;
    // A row whose window is entirely in the ragged input keeps its stage-0 (-1, batch) pair: upstream
    // stores nothing for it (the `bufferLen == 0` trap).
    if (bufferLen === 0) continue;
    const rid = rids[cs[i * 4 + 3]!]!;
    const q = cw[i * 4]! - 1;
    const q0 = Math.max(q - cr, 0);
    cs[i * 4 + 2] = Math.trunc(resolver.slot(rid, q0) / cr);
    cs[i * 4 + 3] = Math.trunc(resolver.slot(rid, q) / cr);
  }
  for (let i = numCompress; i < planC.rowCount; i++) setInvalidC(cw, cs, i);
  const ww = planW.words;
  const ws = planW.signedWords;
  for (let i = 0; i < numWrite; i++) {
    const packed = ww[i * 2]!;
    const rid = rids[packed >>> 16]!;
    const p = ws[i * 2 + 1]! - 1;
    ww[i * 2] = packed & 0xffff;
    ws[i * 2 + 1] = resolver.slot(rid, p);
  }
  for (let i = numWrite; i < planW.rowCount; i++) setInvalidW(ww, ws, i);
}

function setInvalidC(cw: Uint32Array, cs: Int32Array, i: number): void {
  cw[i * 4] = INVALID_SEQ_LEN;
  cw[i * 4 + 1] = 0;
  cs[i * 4 + 2] = -1;
  cs[i * 4 + 3] = -1;
}
function setInvalidW(ww: Uint32Array, ws: Int32Array, i: number): void {
  ww[i * 2] = INVALID_RAGGED_ID;
  ws[i * 2 + 1] = -1;
}

/** Stage-0 rows as upstream's first pass leaves them (batch index in readPage1, packed write ids, p+1). */
export function planPrefillStage0(options: PrefillPlanOptions): PrefillPlan {
  requireOptionKeys(options, "prefill");
  const n = normalizePrefill(options, false);
  return runStage0(n);
}

function runStage0(n: NormalizedPrefill): PrefillPlan {
  const tail = n.cr === 4 && !n.useReqRing;
  // At most one event and one write per token, so numQ rows always suffice.
  const planC = CompressPlanTable.allocate(n.numQ);
  const planW = WritePlanTable.allocate(n.numQ);
  const [nc, nw] = stage0Into(
    n.cr,
    n.swaPageSize,
    n.pad,
    tail,
    n.seqLens,
    n.extendLens,
    planC.signedWords,
    planW.signedWords,
  );
  const padded = n.path === "device" || n.useCudaGraph;
  const c = padded ? planC : new CompressPlanTable(planC.bytes.subarray(0, nc * 16));
  const w = padded ? planW : new WritePlanTable(planW.bytes.subarray(0, nw * 8));
  for (let i = nc; i < c.rowCount; i++) setInvalidC(c.words, c.signedWords, i);
  for (let i = nw; i < w.rowCount; i++) setInvalidW(w.words, w.signedWords, i);
  const plan: PrefillPlan = { planC: c, planW: w, numCompress: nc, numWrite: nw, writePad: n.pad, path: n.path };
  if (n.path === "device") plan.devicePath = devicePathOf(n.extendLens);
  return plan;
}

/** Which kernel-0 path upstream takes for these extends: uniform when every E is equal and in [1, 32]. */
export function devicePathOf(extendLens: ArrayLike<number>): "uniform" | "general" {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < extendLens.length; i++) {
    const e = extendLens[i]!;
    if (e < min) min = e;
    if (e > max) max = e;
  }
  return min === max && max > 0 && max <= 32 ? "uniform" : "general";
}

/**
 * Plans a prefill, chunk or verify batch: stage 0 and stage 1, byte-exact with upstream V-current.
 * Throws `PlannerError` naming the field, value and rule for any input upstream would refuse, and for the
 * device-path inputs upstream silently mis-handles.
 */
export function planPrefill(options: PrefillPlanOptions): PrefillPlan {
  requireOptionKeys(options, "prefill");
  const n = normalizePrefill(options, false);
  const plan = runStage0(n);
  const resolver = new SlotResolver(n.cr, n.ringSize, n.swaPageSize, n.useReqRing, options);
  stage1(n.cr, resolver, n.rids, plan.planC, plan.numCompress, plan.planW, plan.numWrite);
  return plan;
}

export interface LegacyPrefillPlanOptions {
  compressRatio: number;
  seqLens: IntegerArray;
  extendLens: IntegerArray;
  reqPoolIndices?: IntegerArray;
  numQTokens?: number;
  useCudaGraph?: boolean;
}

/**
 * Legacy prefill planner (docs/reference/planner.md §7): per-request non-paged ring (c4 `rid*8 + p%8`, c128
 * `rid*128 + p%128`), no pad, no tail clause, host path only, and stage 1 fills both pages of every valid compress row.
 */
export function planPrefillLegacy(options: LegacyPrefillPlanOptions): PrefillPlan {
  requireOptionKeys(options, "prefill-legacy");
  const cr = options.compressRatio;
  const ringSize = cr === 4 ? 8 : 128;
  // The legacy layout is a request ring with no pad and no tail clause: stage 0 is the shared host loop.
  const n = normalizePrefill({ ...options, ringSize, swaPageSize: ringSize, useReqRing: true, path: "host" }, true);
  const { planC: c, planW: w, numCompress: nc, numWrite: nw } = runStage0(n);
  const cw = c.words;
  const cs = c.signedWords;
  for (let i = 0; i < nc; i++) {
    const rid = legacyRid(n.rids[cs[i * 4 + 3]!]!);
    const q = cw[i * 4]! - 1;
    const q0 = Math.max(q - cr, 0);
    cs[i * 4 + 2] = legacyPage(cr, rid, q0);
    cs[i * 4 + 3] = legacyPage(cr, rid, q);
  }
  const ww = w.words;
  const ws = w.signedWords;
  for (let i = 0; i < nw; i++) {
    const packed = ww[i * 2]!;
    const rid = legacyRid(n.rids[packed >>> 16]!);
    const p = ws[i * 2 + 1]! - 1;
    ww[i * 2] = packed & 0xffff;
    ws[i * 2 + 1] = legacySlot(cr, rid, p);
  }
  return { planC: c, planW: w, numCompress: nc, numWrite: nw, writePad: 0, path: "host" };
}

function legacyRid(rid: number): number {
  requireLegacyRid("reqPoolIndices", rid);
  return rid;
}
