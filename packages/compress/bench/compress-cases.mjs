// The cases of the ring compress speed table (docs/benchmarks.md) for the ring compress kernels, planned by the real planner, and the exact
// bytes one call moves (docs/reference/compress-kernels.md §9); the online prefill rows' bytes are the count of
// `onlineMtp.bench` op prefill, mirrored here for --dry. No addon here: `compress.mjs --dry` runs on a machine without
// a GPU.
import { planDecode, planPrefill } from "@dsv4-kv/planner";
import { SeededRandom } from "@dsv4-kv/planner/internal";

export const HEAD_DIM = 512;
export const STATE_TYPE_FP32 = 0;
export const STATE_BYTES = 4; // fp32 state
export const INPUT_BYTES = 4; // the ragged input is fp32
export const SWA_PAGE = 256;
export const RING = { 4: 16, 128: 256 };
/** Verify batches: 64 requests (the table). */
export const VERIFY_BATCH = 64;
/**
 * Seed of the verify prefixes (uniform in [1024, 8192)): the first seed whose draws give upstream's c128 event
 * counts, 5 compressions at D = 4 and 8 at D = 8 (the bytes imply those counts), so the bytes per call equal
 * the table's and the comparison is like for like. A typical draw gives about 2 and 4 (64 · D / 128).
 */
export const VERIFY_SEED = 307;
export const DECODE_SEED = 16;
/** Tokens of context before the 4,096-token chunk: the second chunk of a long prompt (chunk-aligned). */
export const CHUNK_PREFIX = 4096;
export const CHUNK_TOKENS = 4096;

const windowOf = (cr) => (cr === 4 ? 8 : cr);
const rowBlocksOf = (cr) => (cr === 4 ? 4 : 2);
export const rowElemsOf = (cr) => rowBlocksOf(cr) * HEAD_DIM;

/**
 * The paged c4 ring (SWA page 256, ring 16) with a compact SWA pool: request b's position p lives at full (= SWA)
 * location b · pages · 256 + p mod (pages · 256), so swa mod 256 = p mod 256 as the SGLang allocator keeps it, and
 * each request owns `pages` SWA pages (its sliding window) instead of an identity row per request, which would make
 * the state pool of a 256-request decode 2 GB per buffer set. The state rows a call touches are the same.
 */
function compactPagedMaps(batch, maxSeqLen, pages) {
  const stride = maxSeqLen;
  const span = pages * SWA_PAGE;
  const data = new Int32Array(batch * stride);
  for (let b = 0; b < batch; b++) for (let p = 0; p < stride; p++) data[b * stride + p] = b * span + (p % span);
  return { maps: { reqToToken: { data, stride } }, stateRows: batch * pages * RING[4] };
}

/** The ring options and state rows of ratio `cr` for `batch` requests of at most `maxSeqLen` tokens. */
function ringFor(cr, batch, maxSeqLen, pages) {
  const ring = { compressRatio: cr, ringSize: RING[cr], swaPageSize: SWA_PAGE };
  if (cr === 128) return { ring, maps: {}, stateRows: batch * RING[128] }; // request ring: rid · 256 + p mod 256
  const { maps, stateRows } = compactPagedMaps(batch, maxSeqLen, pages);
  return { ring: { ...ring }, maps, stateRows };
}

function verifyPrefixes(seed) {
  const r = new SeededRandom(seed);
  return Array.from({ length: VERIFY_BATCH }, () => r.int(1024, 8191));
}

/** A verify batch: 64 requests of D tokens each, tables padded to numQTokens = 64 · D as under a CUDA graph. */
function verifyCase(cr, D, seed) {
  const prefixes = verifyPrefixes(seed);
  const seqLens = prefixes.map((p) => p + D);
  const { ring, maps, stateRows } = ringFor(cr, VERIFY_BATCH, Math.max(...seqLens), 2);
  const options = {
    ...ring,
    ...maps,
    seqLens,
    extendLens: seqLens.map(() => D),
    numQTokens: VERIFY_BATCH * D,
    useCudaGraph: true,
  };
  return { plan: planPrefill(options), stateRows, inputRows: VERIFY_BATCH * D, detail: { prefixes, seed } };
}

/**
 * One chunk of 4,096 tokens after a 4,096-token prefix, host path without padding (an extend batch of that size is
 * not replayed from a CUDA graph; the bytes count the unpadded tables).
 */
function chunkCase(cr) {
  const S = CHUNK_PREFIX + CHUNK_TOKENS;
  const { ring, maps, stateRows } = ringFor(cr, 1, S, S / SWA_PAGE);
  const options = { ...ring, ...maps, seqLens: [S], extendLens: [CHUNK_TOKENS] };
  return { plan: planPrefill(options), stateRows, inputRows: CHUNK_TOKENS, detail: { prefix: CHUNK_PREFIX } };
}

/** A decode batch where every request compresses: S uniform among the multiples of cr in [1024, 8192]. */
function decodeCase(cr, batch, seed) {
  const r = new SeededRandom(seed);
  const seqLens = Array.from({ length: batch }, () => cr * r.int(1024 / cr, 8192 / cr));
  const { ring, maps, stateRows } = ringFor(cr, batch, Math.max(...seqLens), 2);
  return { planD: planDecode({ ...ring, ...maps, seqLens }), stateRows, inputRows: batch, detail: { seqLens, seed } };
}

/** Bytes of one prefill call (compress, then write) from the plan tables (docs/reference/compress-kernels.md §9.2). */
export function prefillBytes(cr, plan) {
  const W = windowOf(cr);
  const elemBytesState = 2 * HEAD_DIM * STATE_BYTES; // one element: kv and score of its half (c4) or row (c128)
  const elemBytesInput = 2 * HEAD_DIM * INPUT_BYTES;
  const c = plan.planC.words;
  let compressRows = 0,
    ringElems = 0,
    inputElems = 0,
    maskedElems = 0;
  for (let i = 0; i < plan.planC.rowCount; i++) {
    const seqLen = c[i * 4];
    if (seqLen === 0xffffffff) continue;
    compressRows++;
    const L = c[i * 4 + 1] >>> 16;
    for (let e = 0; e < W; e++) {
      if (cr === 4 && e < 4 && seqLen <= 4) maskedElems++;
      else if (e < L) ringElems++;
      else inputElems++;
    }
  }
  const w = plan.planW.words;
  let writeRows = 0;
  for (let i = 0; i < plan.planW.rowCount; i++) if (w[i * 2] !== 0xffffffff) writeRows++;
  const parts = {
    ring: ringElems * elemBytesState,
    input: inputElems * elemBytesInput,
    out: compressRows * HEAD_DIM * 4,
    write: writeRows * rowElemsOf(cr) * (INPUT_BYTES + STATE_BYTES),
    ape: W * HEAD_DIM * 4,
    plans: plan.planC.rowCount * 16 + plan.planW.rowCount * 8,
  };
  return {
    total: sumParts(parts),
    parts,
    rows: {
      planC: plan.planC.rowCount,
      compress: compressRows,
      planW: plan.planW.rowCount,
      write: writeRows,
      ringElems,
      inputElems,
      maskedElems,
    },
  };
}

/** Bytes of one decode call: every row writes its token's row; a row with S % cr == 0 compresses W ring elements. */
export function decodeBytes(cr, planD) {
  const W = windowOf(cr);
  const d = planD.words;
  let compressRows = 0,
    ringElems = 0,
    maskedElems = 0;
  for (let i = 0; i < planD.rowCount; i++) {
    const S = d[i * 4];
    if (S % cr !== 0) continue;
    compressRows++;
    for (let e = 0; e < W; e++) {
      if (cr === 4 && e < 4 && S <= 4) maskedElems++;
      else ringElems++;
    }
  }
  const parts = {
    ring: ringElems * 2 * HEAD_DIM * STATE_BYTES,
    input: 0,
    out: compressRows * HEAD_DIM * 4,
    write: planD.rowCount * rowElemsOf(cr) * (INPUT_BYTES + STATE_BYTES),
    ape: W * HEAD_DIM * 4,
    plans: planD.rowCount * 16,
  };
  return {
    total: sumParts(parts),
    parts,
    rows: {
      planD: planD.rowCount,
      compress: compressRows,
      write: planD.rowCount,
      ringElems,
      inputElems: 0,
      maskedElems,
    },
  };
}

/**
 * Bytes of `onlineMtp.bench` op `decode` at numVerify 1 (native/online_mtp/binding.cpp `RunBench`): request b sits
 * at chunk position 1024 + {0, 1, 2, 63, 120, 126, 127}[b mod 7] mod 128. Per request, fp32: the input row (kv and
 * score, 4 KiB), the state row [max | sum | acc] read unless the position is 0 and written unless it is 127 (6 KiB
 * each), the entry (2 KiB) at position 127, its seqLen and pool index; the ape rows once per distinct position.
 */
export function onlineDecodeBytes(batch) {
  const offsets = [0, 1, 2, 63, 120, 126, 127];
  const row = 3 * HEAD_DIM * STATE_BYTES;
  const parts = { stateRead: 0, input: 0, stateWrite: 0, out: 0, ape: 0, index: 0 };
  const positions = new Set();
  for (let b = 0; b < batch; b++) {
    const pos = offsets[b % 7];
    positions.add(pos);
    parts.input += 2 * HEAD_DIM * INPUT_BYTES;
    parts.index += 8;
    if (pos !== 0) parts.stateRead += row;
    if (pos !== 127) parts.stateWrite += row;
    else parts.out += HEAD_DIM * 4;
  }
  parts.ape = positions.size * HEAD_DIM * 4;
  return { total: sumParts(parts), parts, rows: { batch } };
}

/** Chunk positions of `onlineMtp.bench`'s requests: request b sits at 1024 + ONLINE_OFFSETS[b mod 7]. */
const ONLINE_OFFSETS = [0, 1, 2, 63, 120, 126, 127];
const ONLINE_CHUNK = 128;
const SEGMENT_BYTES = 5 * 4; // one segment record: [seqLen, lastRow, len, loadRow, storeRow] int32

/**
 * Bytes of `onlineMtp.bench` op prefill, the op's own count (native/online_mtp/binding.cpp `PrefillCaseSegments`,
 * which the GPU run reports and uses; this mirror serves --dry and a cross-check). Each segment (the tokens of one
 * request inside one 128-token chunk) reads its input rows (kv and score, 4 KiB each), reads the stored partial
 * [max | sum | acc] (6 KiB fp32) only when it does not start the chunk, writes the entry (2 KiB) when it closes the
 * chunk or else stores its partial (6 KiB), and reads its 20-byte record; each ape row some segment reads counts once
 * (2 KiB). Padding records are not counted.
 *   verify: `batch` requests of `numVerify` tokens after 1024 + ONLINE_OFFSETS[b mod 7], table of batch · numVerify
 *           records; chunk: one request's `chunkTokens` tokens after `chunkPrefix`.
 */
export function onlinePrefillBytes({ prefillCase, batch, numVerify, chunkTokens = 0, chunkPrefix = 0 }) {
  const row = 3 * HEAD_DIM * STATE_BYTES;
  const parts = { input: 0, stateRead: 0, out: 0, stateWrite: 0, records: 0, ape: 0 };
  const apeRows = new Set();
  let segments = 0,
    entries = 0;
  const cut = (from, to) => {
    for (let p = from; p < to; ) {
      const end = Math.min(to, (Math.floor(p / ONLINE_CHUNK) + 1) * ONLINE_CHUNK);
      const c0 = p % ONLINE_CHUNK;
      segments++;
      parts.input += (end - p) * 2 * HEAD_DIM * INPUT_BYTES;
      if (c0 !== 0) parts.stateRead += row;
      if (end % ONLINE_CHUNK === 0) {
        parts.out += HEAD_DIM * 4;
        entries++;
      } else parts.stateWrite += row;
      parts.records += SEGMENT_BYTES;
      for (let j = c0; j < c0 + (end - p); j++) apeRows.add(j);
      p = end;
    }
  };
  if (prefillCase === "verify")
    for (let b = 0; b < batch; b++) {
      const S = 1024 + ONLINE_OFFSETS[b % 7];
      cut(S, S + numVerify);
    }
  else cut(chunkPrefix, chunkPrefix + chunkTokens);
  parts.ape = apeRows.size * HEAD_DIM * 4;
  const numSegments = prefillCase === "verify" ? batch * numVerify : segments;
  const kvRows = prefillCase === "verify" ? batch * numVerify : chunkTokens;
  return { total: sumParts(parts), parts, rows: { segments, numSegments, entries, kvRows } };
}

function sumParts(parts) {
  return Object.values(parts).reduce((a, b) => a + b, 0);
}

/**
 * The speed table (upstream's kernels on our H200, graph µs per call): `bytes` in MB as the table prints them.
 * `target`: the multiple of the copy floor allowed (1.5 for verify batches, 1.25 for the L2-cold chunk and decode
 * cases, none where only "not slower than upstream" applies).
 */
export const UPSTREAM = {
  "c4 verify D=4": { bytesMB: 6.45, graphUs: 3.02, floorUs: 1.53 },
  "c4 verify D=8": { bytesMB: 12.87, graphUs: 3.87, floorUs: 3.05 },
  "c128 verify D=4": { bytesMB: 5.0, graphUs: 5.28, floorUs: 1.18 },
  "c128 verify D=8": { bytesMB: 8.68, graphUs: 9.01, floorUs: 2.06 },
  "online c128 verify D=4": { bytesMB: 2.11, graphUs: 11.02, floorUs: 0.5 },
  "online c128 verify D=8": { bytesMB: 3.17, graphUs: 16.8, floorUs: 0.75 },
  "c4 chunk 4096": { bytesMB: 36.83, graphUs: 11.48, floorUs: 8.73 },
  "c128 chunk 4096": { bytesMB: 18.17, graphUs: 7.42, floorUs: 4.31 },
  "online c128 chunk 4096": { bytesMB: 17.11, graphUs: 6.35, floorUs: 4.06 },
  "c4 decode B=256": { bytesMB: 13.13, graphUs: 4.9, floorUs: 3.11 },
  "c128 decode B=256": { bytesMB: 137.1, graphUs: 33.41, floorUs: 32.51 },
  "online c128 decode B=8": { bytesMB: 0.14, graphUs: 1.15, floorUs: 0.03 },
  "online c128 decode B=256": { bytesMB: 4.4, graphUs: 2.91, floorUs: 1.04 },
  "empty kernel": { graphUs: 0.52 },
};

/** Committed tokens before the extra online chunk row: the chunk starts mid-chunk (a load and a trailing store). */
export const ONLINE_CHUNK_PREFIX_EXTRA = 37;

/**
 * Every row of the table, in the order, then the extra rows (`extra`: not in the table, no upstream
 * figure). `build()` plans a ring case (throws the planner's error when a case is refused, so a refused plan is never
 * timed); online decode rows carry `onlineBatch`, online prefill rows (kind "onlinePrefill") the op's `prefill` keys.
 */
export function compressCases({ verifySeed = VERIFY_SEED } = {}) {
  const rows = [];
  for (const cr of [4, 128])
    for (const D of [4, 8])
      rows.push({
        name: `c${cr} verify D=${D}`,
        kind: "prefill",
        cr,
        l2Cold: false,
        target: 1.5,
        build: () => verifyCase(cr, D, verifySeed),
      });
  for (const D of [4, 8])
    rows.push({
      name: `online c128 verify D=${D}`,
      kind: "onlinePrefill",
      cr: 128,
      l2Cold: false,
      target: 1.5,
      prefill: { prefillCase: "verify", batch: VERIFY_BATCH, numVerify: D },
    });
  for (const cr of [4, 128])
    rows.push({
      name: `c${cr} chunk 4096`,
      kind: "prefill",
      cr,
      l2Cold: true,
      target: 1.25,
      build: () => chunkCase(cr),
    });
  rows.push({
    name: "online c128 chunk 4096",
    kind: "onlinePrefill",
    cr: 128,
    l2Cold: true,
    target: 1.25,
    prefill: { prefillCase: "chunk", batch: 1, numVerify: 1, chunkTokens: CHUNK_TOKENS },
  });
  for (const cr of [4, 128])
    rows.push({
      name: `c${cr} decode B=256`,
      kind: "decode",
      cr,
      l2Cold: true,
      target: 1.25,
      build: () => decodeCase(cr, 256, DECODE_SEED),
    });
  rows.push({ name: "online c128 decode B=8", kind: "online", cr: 128, l2Cold: false, target: null, onlineBatch: 8 });
  rows.push({
    name: "online c128 decode B=256",
    kind: "online",
    cr: 128,
    l2Cold: true,
    target: 1.25,
    onlineBatch: 256,
  });
  rows.push({
    name: `online c128 chunk 4096 after ${ONLINE_CHUNK_PREFIX_EXTRA} (extra)`,
    kind: "onlinePrefill",
    cr: 128,
    l2Cold: true,
    target: 1.25,
    extra: `not in the issue's table: the chunk starts ${ONLINE_CHUNK_PREFIX_EXTRA} tokens into a chunk`,
    prefill: {
      prefillCase: "chunk",
      batch: 1,
      numVerify: 1,
      chunkTokens: CHUNK_TOKENS,
      chunkPrefix: ONLINE_CHUNK_PREFIX_EXTRA,
    },
  });
  for (const r of rows) r.upstream = UPSTREAM[r.name] ?? null;
  return rows;
}

/** Bytes of a built case. */
export function caseBytes(c, built) {
  if (c.kind === "prefill") return prefillBytes(c.cr, built.plan);
  if (c.kind === "decode") return decodeBytes(c.cr, built.planD);
  if (c.kind === "onlinePrefill") return onlinePrefillBytes(c.prefill);
  return onlineDecodeBytes(c.onlineBatch);
}
