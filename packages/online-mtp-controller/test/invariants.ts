/**
 * The invariants of docs/reference/online-mtp.md (section 15, numbered 1–20) as backend-generic checks.
 * Each throws (vitest `expect`) when violated; suites register them for the CPU backend and, on a CUDA machine,
 * for the GPU backend. Mutation tests run some of them against deliberately broken backends and expect throws.
 */
import { expect } from "vitest";
import {
  CHUNK_TOKENS,
  KV_SCORE_COLS,
  OnlineMtpError,
  STATE_ROW_ELEMS,
  type MatrixF32,
  runSimulation,
  type OnlineMtpBackend,
  type StateDtype,
} from "../src/index.js";
import { STATE_TOLERANCE, SEGMENT_FIELDS } from "../src/internal.js";
import {
  UpstreamOnlineMtpController,
  clearedRow,
  compareRows,
  foldRow,
  offlinePool,
  type TokenInput,
} from "../src/testing.js";
import { ChunkReference, emptyRowErrorStats } from "../src/bf16-reference.js";
import { H, bitsEqual, changedRows, randn, setup, snapshot, tokenOf, writePrefixParams } from "./helpers.js";

export type Invariant = (be: OnlineMtpBackend, dtype: StateDtype) => void;

const tolOf = (dtype: StateDtype) => STATE_TOLERANCE[dtype];
/** Emitted entries are computed in fp32 registers from fp32 inputs (+ at most one bf16 state load). */
const emitTol = (dtype: StateDtype) => (dtype === "fp32" ? { atol: 2e-4, rtol: 2e-4 } : { atol: 5e-2, rtol: 5e-2 });

/** One chunk's `tokens` (from position 0) and the indices after which the kernels stored its row (`stored` says yes). */
interface ChunkStores {
  tokens: readonly TokenInput[];
  stored: (i: number) => boolean;
}

/**
 * bf16: the reference of one chunk with its kernel stores (docs/reference/online-mtp.md §5.4); its live mean bound is
 * what an entry emitted after the last token carries.
 */
function chunkRef({ tokens, stored }: ChunkStores): ChunkReference {
  const ref = new ChunkReference(H, true);
  tokens.forEach((t, i) => {
    ref.append(t);
    if (stored(i)) ref.store();
  });
  return ref;
}

/** An emitted entry: fp32 the stated tolerance; bf16 the bound derived from the stores of its chunk. */
function expectEmitted(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  dtype: StateDtype,
  chunk: ChunkStores,
  what: string,
): void {
  if (dtype === "fp32") {
    expectClose(actual, expected, emitTol(dtype), what);
    return;
  }
  const bound = chunkRef(chunk).meanBound();
  const bad = Array.from(bound, (b, d) => Math.abs(actual[d]! - expected[d]!) - b).filter((x) => !(x <= 0));
  expect(bad.length, `${what}: ${bad.length} channels outside the derived bound`).toBe(0);
}

/** A stored row: fp32 the stated tolerance; bf16 both references of docs/reference/online-mtp.md §5.4. */
function expectStored(actual: ArrayLike<number>, dtype: StateDtype, chunk: ChunkStores, what: string): void {
  if (dtype === "fp32") {
    expectClose(actual, offlinePool(chunk.tokens, H), tolOf(dtype), what);
    return;
  }
  const bad: unknown[] = [];
  chunkRef(chunk).checkRow(actual, emptyRowErrorStats(), (v) => bad.push(v));
  expect(bad, what).toEqual([]);
}

function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: { atol: number; rtol: number },
  what: string,
): void {
  const st = compareRows(actual, expected, tol);
  expect(st.violations, `${what}: max abs error ${st.maxAbsError}`).toBe(0);
}

/** Runs the verify-time (or extend-time) prefill compression for one request over positions [S, S+n). */
function prefillRange(
  s: ReturnType<typeof setup>,
  slot: number,
  S: number,
  n: number,
  kvHost: Float32Array,
  firstRow: number,
  loadRow: number,
  storeRow: number,
): { out: Float32Array; closing: { outRow: number; lastPos: number }[] } {
  const segs: number[] = [];
  const closing: { outRow: number; lastPos: number }[] = [];
  let p = S;
  while (p < S + n) {
    const chunkEnd = (Math.floor(p / CHUNK_TOKENS) + 1) * CHUNK_TOKENS;
    const end = Math.min(S + n, chunkEnd);
    if (end === chunkEnd) closing.push({ outRow: segs.length / SEGMENT_FIELDS, lastPos: end - 1 });
    segs.push(end, firstRow + (end - 1 - S), end - p, loadRow, storeRow);
    p = end;
  }
  void slot;
  const out = s.be.allocMatrix(Math.max(1, segs.length / SEGMENT_FIELDS), H);
  s.be.onlinePrefill({
    state: s.ctrl.layers[0]!,
    kvScore: s.be.uploadMatrix(kvHost, kvHost.length / KV_SCORE_COLS, KV_SCORE_COLS),
    ape: s.ape,
    segments: s.be.uploadIndex(Int32Array.from(segs)),
    numSegments: segs.length / SEGMENT_FIELDS,
    out,
  });
  s.be.synchronize();
  return { out: s.be.readMatrix(out), closing };
}

/** Prefill of [S, S+n) in bank 0 of `slot` as several forwards split at `cuts` (chunked prefill). */
function prefillChunked(
  s: ReturnType<typeof setup>,
  S: number,
  n: number,
  kvHost: Float32Array,
  slot: number,
  cuts: number[],
) {
  const bounds = [S, ...cuts.filter((c) => c > S && c < S + n), S + n];
  let last: ReturnType<typeof prefillRange> = { out: new Float32Array(0), closing: [] };
  let closingAll: { outRow: number; lastPos: number; out: Float32Array }[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const a = bounds[i]!;
    const b = bounds[i + 1]!;
    last = prefillRange(
      s,
      slot,
      a,
      b - a,
      kvHost.subarray((a - S) * KV_SCORE_COLS, (b - S) * KV_SCORE_COLS),
      0,
      slot,
      slot,
    );
    closingAll = closingAll.concat(last.closing.map((c) => ({ ...c, out: last.out })));
  }
  const c = closingAll[closingAll.length - 1];
  return { out: c ? c.out : last.out, closing: closingAll };
}

/** Verify: prepareForward + verify prefill + writePrefix for one request per batch entry. */
function verify(
  s: ReturnType<typeof setup>,
  slots: number[],
  lens: number[],
  kvHost: Float32Array,
  withPrefill = true,
) {
  const D = s.ctrl.numVerifyTokens();
  const rpi = s.be.uploadIndex(Int32Array.from(slots));
  const seq = s.be.uploadIndex(Int32Array.from(lens));
  const off = s.ctrl.prepareForward("target_verify", rpi, seq);
  const kv = s.be.uploadMatrix(kvHost, kvHost.length / KV_SCORE_COLS, KV_SCORE_COLS);
  if (withPrefill) {
    for (const [b, r] of slots.entries()) prefillRange(s, r, lens[b]!, D, kvHost.subarray(0), b * D, r, r + off);
  }
  s.ctrl.writePrefixStates(0, kv, s.ape, "target_verify");
  s.be.synchronize();
  return off;
}

/** Decodes positions [from, to) of `kvHost` into bank 0 of `slot`, one token per launch; entries go to `out`. */
function decodeTokens(
  s: ReturnType<typeof setup>,
  slot: number,
  kvHost: Float32Array,
  from: number,
  to: number,
  out: MatrixF32,
): void {
  for (let p = from; p < to; p++) {
    s.be.onlineDecode({
      state: s.ctrl.layers[0]!,
      kvScore: s.be.uploadMatrix(kvHost.slice(p * KV_SCORE_COLS, (p + 1) * KV_SCORE_COLS), 1, KV_SCORE_COLS),
      ape: s.ape,
      seqLens: s.be.uploadIndex(Int32Array.of(p + 1)),
      reqPoolIndices: s.be.uploadIndex(Int32Array.of(slot)),
      batchSize: 1,
      slotOffsetRows: 0,
      numReqSlots: s.ctrl.numReqSlots,
      out,
    });
  }
  s.be.synchronize();
}

function bank0(s: ReturnType<typeof setup>, r: number, layer = 0): Float32Array {
  return s.be.readStateRows(s.ctrl.layers[layer]!, r, 1);
}

export const INVARIANTS: Record<string, Invariant> = {
  "1 online == offline pooling (decode one by one, prefill at any cuts, mixed)": (be, dtype) => {
    const s = setup(be, { dtype, N: 4, Dmax: 1, seed: 11 });
    const kvHost = randn(s.rng, CHUNK_TOKENS * KV_SCORE_COLS);
    const tokens: TokenInput[] = Array.from({ length: CHUNK_TOKENS }, (_, j) => tokenOf(kvHost, j, s.apeHost, j));
    const expected = offlinePool(tokens, H).subarray(2 * H);
    // (a) decode token by token in slot 1
    const out = be.allocMatrix(1, H);
    decodeTokens(s, 1, kvHost, 0, CHUNK_TOKENS, out);
    // decode stores after every token but the last (docs/reference/online-mtp.md §8.5)
    expectEmitted(be.readMatrix(out), expected, dtype, { tokens, stored: () => true }, "decode");
    // (b) prefill with random cut points, then (c) mixed: prefill a prefix, decode the rest
    for (const cuts of [[], [1], [37, 38, 100], [64], [5, 17, 29, 41, 53, 65, 77, 89, 101, 113, 125, 127]]) {
      // each cut is a separate forward (chunked prefill): one trailing write segment per request per launch
      const { out: o, closing } = prefillChunked(s, 0, CHUNK_TOKENS, kvHost, 2, cuts);
      expect(closing.length).toBe(1);
      expectEmitted(
        o.subarray(closing[0]!.outRow * H, (closing[0]!.outRow + 1) * H),
        expected,
        dtype,
        { tokens, stored: (i) => cuts.includes(i + 1) }, // each forward stores its trailing segment
        `prefill cuts ${cuts}`,
      );
    }
    prefillRange(s, 3, 0, 90, kvHost, 0, 3, 3);
    decodeTokens(s, 3, kvHost, 90, CHUNK_TOKENS, out);
    expectEmitted(be.readMatrix(out), expected, dtype, { tokens, stored: (i) => i >= 89 }, "mixed prefill + decode");
  },

  "2 state semantics: bank 0 = stats of the open chunk however L was reached": (be, dtype) => {
    const s = setup(be, { dtype, N: 4, Dmax: 2, seed: 12 });
    const L = 128 + 77;
    const kvHost = randn(s.rng, L * KV_SCORE_COLS);
    prefillChunked(s, 0, L, kvHost, 1, [150, 190]);
    const tokens = Array.from({ length: L - 128 }, (_, j) => tokenOf(kvHost, 128 + j, s.apeHost, 128 + j));
    // stored at the end of each forward: after positions 149, 189 and 204 (chunk indices 21, 61, 76)
    expectStored(bank0(s, 1), dtype, { tokens, stored: (i) => [21, 61, 76].includes(i) }, "prefill");
  },

  "3 write-prefix banks = fold from bank 0; bank at an exact boundary untouched": (be, dtype) => {
    for (const D of [1, 4, 8]) {
      const s = setup(be, { dtype, N: 9, Dmax: 8, D, seed: 13 + D });
      const offsets = [0, 1, 63, 120, 126, 127, 125, 2];
      const lens = offsets.map((o, i) => 1024 + o + (i === 0 ? 0 : 0));
      const slots = [1, 2, 3, 4, 5, 6, 7, 8];
      const before = snapshot(be, s.ctrl);
      const before0 = slots.map((r) => bank0(s, r));
      const kvHost = randn(s.rng, slots.length * D * KV_SCORE_COLS);
      verify(s, slots, lens, kvHost, false);
      const after = snapshot(be, s.ctrl);
      const O = s.ctrl.bankStrideRows;
      slots.forEach((r, b) => {
        const S = lens[b]!;
        let start: Float32Array | null = S % CHUNK_TOKENS !== 0 ? before0[b]! : null;
        let firstPos = S % CHUNK_TOKENS;
        let toks: TokenInput[] = [];
        for (let i = 0; i < D; i++) {
          const pos = S + i;
          if (pos % CHUNK_TOKENS === 0) {
            start = null;
            firstPos = 0;
            toks = [];
          }
          toks.push(tokenOf(kvHost, b * D + i, s.apeHost, pos));
          const row = r + (i + 1) * O;
          const got = after.subarray(row * STATE_ROW_ELEMS, (row + 1) * STATE_ROW_ELEMS);
          if ((S + i + 1) % CHUNK_TOKENS === 0) {
            expect(
              bitsEqual(got, before.subarray(row * STATE_ROW_ELEMS, (row + 1) * STATE_ROW_ELEMS)),
              `bank ${i + 1} at boundary must be untouched`,
            ).toBe(true);
          } else {
            const want = foldRow(start, toks, firstPos, "f64", H);
            expectClose(be.readStateRows(s.ctrl.layers[0]!, row, 1), want, tolOf(dtype), `S=${S} D=${D} bank ${i + 1}`);
          }
        }
      });
    }
  },

  "4 verify (prefill passes + writePrefix) leaves bank 0 bitwise unchanged": (be, dtype) => {
    const s = setup(be, { dtype, N: 5, D: 8, seed: 14 });
    const slots = [1, 2, 3, 4];
    const lens = [5, 126, 127, 300];
    const before = snapshot(be, s.ctrl);
    verify(s, slots, lens, randn(s.rng, 4 * 8 * KV_SCORE_COLS));
    const after = snapshot(be, s.ctrl);
    for (const r of slots)
      expect(
        bitsEqual(
          after.subarray(r * STATE_ROW_ELEMS, (r + 1) * STATE_ROW_ELEMS),
          before.subarray(r * STATE_ROW_ELEMS, (r + 1) * STATE_ROW_ELEMS),
        ),
      ).toBe(true);
  },

  "5 commit = bitwise copy of bank a (skipped at a boundary / no progress); banks >= 1 untouched; marker consumed": (
    be,
    dtype,
  ) => {
    const s = setup(be, { dtype, N: 9, D: 8, seed: 15 });
    const slots = [1, 2, 3, 4, 5, 6, 7, 8];
    const lens = [1025, 1087, 1144, 1151, 1020, 1100, 1200, 1030];
    const accepts = [0, 1, 3, 1, 4, 8, -2, 9];
    verify(s, slots, lens, randn(s.rng, 8 * 8 * KV_SCORE_COLS));
    const before = snapshot(be, s.ctrl);
    const cur = lens.map((S, i) => S + accepts[i]!);
    s.ctrl.prepareForward("decode", be.uploadIndex(Int32Array.from(slots)), be.uploadIndex(Int32Array.from(cur)));
    be.synchronize();
    const after = snapshot(be, s.ctrl);
    const O = s.ctrl.bankStrideRows;
    const rowBits = (snap: ArrayLike<number> & { subarray(a: number, b: number): ArrayLike<number> }, row: number) =>
      snap.subarray(row * STATE_ROW_ELEMS, (row + 1) * STATE_ROW_ELEMS);
    const expectedChanged: number[] = [];
    slots.forEach((r, b) => {
      const a = Math.max(0, Math.min(accepts[b]!, 8));
      const S = lens[b]!;
      if (a >= 1 && (S + a) % CHUNK_TOKENS !== 0) {
        expect(bitsEqual(rowBits(after, r), rowBits(before, r + a * O)), `slot ${r} a=${a}`).toBe(true);
        if (!bitsEqual(rowBits(before, r), rowBits(before, r + a * O))) expectedChanged.push(r);
      } else {
        expect(bitsEqual(rowBits(after, r), rowBits(before, r)), `slot ${r} a=${a} must keep bank 0`).toBe(true);
      }
    });
    expect(changedRows(before, after)).toEqual(expectedChanged);
    expect(Array.from(be.readIndex(s.ctrl.pendingSeqLens))).toEqual(Array(9).fill(-1));
  },

  "6 verify D + commit a == decoding the a tokens one at a time": (be, dtype) => {
    const s = setup(be, { dtype, N: 5, D: 8, seed: 16 });
    const slots = [1, 2, 3, 4];
    const lens = [1030, 1150, 1100, 1277];
    const start = slots.map((r) => bank0(s, r));
    const kvHost = randn(s.rng, 4 * 8 * KV_SCORE_COLS);
    verify(s, slots, lens, kvHost);
    const accepts = [8, 3, 5, 2];
    s.ctrl.prepareForward(
      "decode",
      be.uploadIndex(Int32Array.from(slots)),
      be.uploadIndex(Int32Array.from(lens.map((S, i) => S + accepts[i]!))),
    );
    // sequential decode of the same tokens on a scratch slot bank (slots copied into a fresh controller)
    const t = setup(be, { dtype, N: 5, D: 8, seed: 99 });
    for (const [b, r] of slots.entries()) be.writeStateRows(t.ctrl.layers[0]!, r, start[b]!);
    const out = be.allocMatrix(4, H);
    for (let i = 0; i < 8; i++) {
      const rows = new Float32Array(4 * KV_SCORE_COLS);
      for (let b = 0; b < slots.length; b++) {
        rows.set(kvHost.subarray((b * 8 + i) * KV_SCORE_COLS, (b * 8 + i + 1) * KV_SCORE_COLS), b * KV_SCORE_COLS);
      }
      const seq = lens.map((S, b) => (i < accepts[b]! ? S + i + 1 : -1));
      be.onlineDecode({
        state: t.ctrl.layers[0]!,
        kvScore: be.uploadMatrix(rows, 4, KV_SCORE_COLS),
        ape: s.ape,
        seqLens: be.uploadIndex(Int32Array.from(seq)),
        reqPoolIndices: be.uploadIndex(Int32Array.from(slots)),
        batchSize: 4,
        slotOffsetRows: 0,
        numReqSlots: 5,
        out,
      });
    }
    be.synchronize();
    slots.forEach((r, b) => {
      if ((lens[b]! + accepts[b]!) % CHUNK_TOKENS === 0) return;
      expectClose(bank0(s, r), be.readStateRows(t.ctrl.layers[0]!, r, 1), tolOf(dtype), `slot ${r}`);
    });
  },

  "7 rollback: a = 0 or cur < S keeps bank 0; a re-verify equals a fresh verify": (be, dtype) => {
    const s = setup(be, { dtype, N: 3, D: 6, seed: 17 });
    const before = snapshot(be, s.ctrl);
    verify(s, [1, 2], [500, 700], randn(s.rng, 2 * 6 * KV_SCORE_COLS));
    const kv2 = randn(s.rng, 2 * 6 * KV_SCORE_COLS);
    verify(s, [1, 2], [500, 690], kv2); // commit pass: a = 0 and cur < S
    const mid = snapshot(be, s.ctrl);
    for (const r of [1, 2])
      expect(
        bitsEqual(
          mid.subarray(r * STATE_ROW_ELEMS, (r + 1) * STATE_ROW_ELEMS),
          before.subarray(r * STATE_ROW_ELEMS, (r + 1) * STATE_ROW_ELEMS),
        ),
      ).toBe(true);
    const fresh = setup(be, { dtype, N: 3, D: 6, seed: 17 });
    verify(fresh, [1, 2], [500, 690], kv2);
    const O = s.ctrl.bankStrideRows;
    for (const r of [1, 2])
      for (let b = 1; b <= 6; b++) {
        const row = r + b * O;
        expect(
          bitsEqual(
            mid.subarray(row * STATE_ROW_ELEMS, (row + 1) * STATE_ROW_ELEMS),
            snapshot(be, fresh.ctrl).subarray(row * STATE_ROW_ELEMS, (row + 1) * STATE_ROW_ELEMS),
          ),
          `slot ${r} bank ${b}`,
        ).toBe(true);
      }
  },

  "8 boundary crossing: emitted entry of the closed chunk and banks after it": (be, dtype) => {
    for (const off of [121, 124, 126, 127]) {
      const s = setup(be, { dtype, N: 2, D: 8, seed: 18 + off });
      const S = 128 * 3 + off;
      // committed prefix of the open chunk, by prefill from a cleared slot
      s.ctrl.onRequestSlotsAssigned([1]);
      const pre = randn(s.rng, off * KV_SCORE_COLS);
      prefillRange(s, 1, 128 * 3, off, pre, 0, 1, 1);
      const kvHost = randn(s.rng, 8 * KV_SCORE_COLS);
      const rpi = be.uploadIndex(Int32Array.of(1));
      const off0 = s.ctrl.prepareForward("target_verify", rpi, be.uploadIndex(Int32Array.of(S)));
      const { out, closing } = prefillRange(s, 1, S, 8, kvHost, 0, 1, 1 + off0);
      s.ctrl.writePrefixStates(0, be.uploadMatrix(kvHost, 8, KV_SCORE_COLS), s.ape, "target_verify");
      be.synchronize();
      const chunk = [
        ...Array.from({ length: off }, (_, j) => tokenOf(pre, j, s.apeHost, j)),
        ...Array.from({ length: 128 - off }, (_, j) => tokenOf(kvHost, j, s.apeHost, off + j)),
      ];
      expect(closing.length).toBe(1);
      expectClose(out.subarray(0, H), offlinePool(chunk, H).subarray(2 * H), emitTol(dtype), `emitted, off ${off}`);
      const after = Array.from({ length: 8 - (128 - off) }, (_, j) => tokenOf(kvHost, 128 - off + j, s.apeHost, j));
      const last = 1 + 8 * s.ctrl.bankStrideRows;
      expectClose(
        be.readStateRows(s.ctrl.layers[0]!, last, 1),
        offlinePool(after, H),
        tolOf(dtype),
        `bank 8, off ${off}`,
      );
    }
  },

  "9 isolation: other requests, padding rows, other layers, invalid rows untouched": (be, dtype) => {
    // The kernels' own isolation: the controller refuses these rows when the backend keeps host copies of its
    // index vectors, so the controller here runs on a view of the backend that keeps none.
    const blind = new Proxy(be, { get: (t, p, r) => (p === "hostIndex" ? undefined : Reflect.get(t, p, r)) });
    const s = setup(blind, { dtype, N: 6, D: 4, L: 2, seed: 19 });
    const before = [snapshot(be, s.ctrl, 0), snapshot(be, s.ctrl, 1)];
    // batch: slot 2, plus invalid rows r = -1, r = N, seq < 0
    const rpi = be.uploadIndex(Int32Array.of(2, -1, 6, 3));
    const seq = be.uploadIndex(Int32Array.of(300, 400, 500, -1));
    const off = s.ctrl.prepareForward("target_verify", rpi, seq);
    s.ctrl.writePrefixStates(
      0,
      be.uploadMatrix(randn(s.rng, 16 * KV_SCORE_COLS), 16, KV_SCORE_COLS),
      s.ape,
      "target_verify",
    );
    be.synchronize();
    expect(changedRows(before[1]!, snapshot(be, s.ctrl, 1))).toEqual([]); // layer 1 had no writePrefix
    s.ctrl.prepareForward("decode", rpi, be.uploadIndex(Int32Array.of(303, 999, 999, 999)));
    be.synchronize();
    const O = s.ctrl.bankStrideRows;
    const touched = changedRows(before[0]!, snapshot(be, s.ctrl, 0));
    expect(touched.every((row) => row % O === 2)).toBe(true);
    expect(touched.length).toBeGreaterThan(0);
    // the commit copies bank a → 0 in every layer, for slot 2 only
    expect(changedRows(before[1]!, snapshot(be, s.ctrl, 1)).every((row) => row === 2)).toBe(true);
    expect(off).toBe(O);
  },

  "10 mark: pending[r] = S for the batch; other markers kept (hardened) / reset (upstream)": (be, dtype) => {
    const s = setup(be, { dtype, N: 6, D: 4, seed: 20 });
    verify(s, [1, 2], [10, 20], randn(s.rng, 8 * KV_SCORE_COLS), false);
    s.ctrl.markPending(be.uploadIndex(Int32Array.of(30, 40)), be.uploadIndex(Int32Array.of(3, 4)), 2);
    expect(Array.from(be.readIndex(s.ctrl.pendingSeqLens))).toEqual([-1, 10, 20, 30, 40, -1]);
    const u = setup(be, { dtype, N: 6, D: 4, seed: 20, Ctor: UpstreamOnlineMtpController });
    verify(u, [1, 2], [10, 20], randn(u.rng, 8 * KV_SCORE_COLS), false);
    u.ctrl.markPending(be.uploadIndex(Int32Array.of(30, 40)), be.uploadIndex(Int32Array.of(3, 4)), 2);
    expect(Array.from(be.readIndex(u.ctrl.pendingSeqLens))).toEqual([-1, -1, -1, 30, 40, -1]);
  },

  "11 slot reset: rows r + b·O cleared, pending -1, others untouched; a cleared row is an empty state": (be, dtype) => {
    const s = setup(be, { dtype, N: 4, Dmax: 2, D: 2, seed: 21 });
    verify(s, [1, 3], [10, 20], randn(s.rng, 4 * KV_SCORE_COLS), false);
    const before = snapshot(be, s.ctrl);
    s.ctrl.onRequestSlotsAssigned([1, 3]);
    const O = s.ctrl.bankStrideRows; // 6
    expect(changedRows(before, snapshot(be, s.ctrl))).toEqual([1, 3, 7, 9, 13, 15]);
    const cleared = clearedRow(H);
    for (const row of [1, 3, 7, 9, 13, 15])
      expect(Array.from(be.readStateRows(s.ctrl.layers[0]!, row, 1))).toEqual(Array.from(cleared));
    expect(Array.from(be.readIndex(s.ctrl.pendingSeqLens))).toEqual([-1, -1, -1, -1]);
    // reading a cleared row at pos != 0 gives the single-token state
    const kv = randn(s.rng, KV_SCORE_COLS);
    const out = be.allocMatrix(1, H);
    be.onlineDecode({
      state: s.ctrl.layers[0]!,
      kvScore: be.uploadMatrix(kv, 1, KV_SCORE_COLS),
      ape: s.ape,
      seqLens: be.uploadIndex(Int32Array.of(50)),
      reqPoolIndices: be.uploadIndex(Int32Array.of(1)),
      batchSize: 1,
      slotOffsetRows: 0,
      numReqSlots: 4,
      out,
    });
    be.synchronize();
    expectClose(
      bank0(s, 1),
      foldRow(null, [tokenOf(kv, 0, s.apeHost, 49)], 0, "f64", H),
      tolOf(dtype),
      "cleared row as identity",
    );
    void O;
  },

  "12 shape/dtype guards raise typed errors naming field, value, rule; bs = 0 is a no-op": (be, dtype) => {
    const s = setup(be, { dtype, N: 4, Dmax: 4, D: 4, seed: 22 });
    const base = writePrefixParams(s);
    const { kvScore: kv, seqLens: idx } = base;
    const cases: [Partial<typeof base>, string][] = [
      [{ numVerifyTokens: 0 }, "numVerifyTokens"],
      [{ numVerifyTokens: 9 }, "numVerifyTokens"],
      [{ bankStrideRows: 0 }, "bankStrideRows"],
      [{ bankStrideRows: 3 }, "bankStrideRows"],
      [{ bankStrideRows: 100 }, "state.rows"],
      [{ batchSize: 3 }, "seqLens.length"],
      [{ kvScore: be.uploadMatrix(randn(s.rng, 7 * KV_SCORE_COLS), 7, KV_SCORE_COLS) }, "kvScore.rows"],
      [{ ape: be.uploadMatrix(randn(s.rng, 64 * H), 64, H) }, "ape"],
    ];
    for (const [patch, field] of cases) {
      let err: unknown;
      try {
        be.writePrefix({ ...base, ...patch });
      } catch (e) {
        err = e;
      }
      expect(err, field).toBeInstanceOf(OnlineMtpError);
      expect((err as OnlineMtpError).field).toBe(field);
      expect((err as OnlineMtpError).rule.length).toBeGreaterThan(5);
    }
    expect(() =>
      be.markPending({
        seqLens: idx,
        reqPoolIndices: idx,
        pendingSeqLens: be.allocIndex(2, -1),
        pendingWidths: be.allocIndex(4, 0),
        batchSize: 2,
        numVerifyTokens: 4,
        numReqSlots: 4,
        clearAll: false,
      }),
    ).toThrow(/pendingSeqLens.length/);
    const before = snapshot(be, s.ctrl);
    be.writePrefix({ ...base, batchSize: 0 });
    be.synchronize();
    expect(changedRows(before, snapshot(be, s.ctrl))).toEqual([]);
    // device-resident out-of-range segment rows are reported as an error, never written out of bounds
    for (const [segment, bad] of [
      [[10, 50, 3, -1, 1], /lastRow/],
      [[10, 5, 3, -1, 100000], /storeRow/],
    ] as const) {
      be.onlinePrefill({
        state: s.ctrl.layers[0]!,
        kvScore: kv,
        ape: s.ape,
        segments: be.uploadIndex(Int32Array.from(segment)),
        numSegments: 1,
        out: be.allocMatrix(1, H),
      });
      expect(() => be.synchronize()).toThrow(bad);
    }
    expect(changedRows(before, snapshot(be, s.ctrl))).toEqual([]);
  },

  "16 multi-step scenario == sequential reference; no commit lost": (be, dtype) => {
    const r = runSimulation({
      backend: be,
      requests: 6,
      steps: 60,
      draftTokens: 8,
      adaptive: true,
      seed: 5,
      stateDtype: dtype,
    });
    expect(r.lostCommits).toBe(0);
    expect(r.violations).toBe(0);
    expect(r.commits).toBeGreaterThan(50);
  },

  "19 CUDA-graph padding: padded rows (slot 0) change nothing but the dummy slot; real rows equal eager": (
    be,
    dtype,
  ) => {
    const a = setup(be, { dtype, N: 5, D: 4, seed: 23 });
    const b = setup(be, { dtype, N: 5, D: 4, seed: 23 });
    const kvReal = randn(a.rng, 2 * 4 * KV_SCORE_COLS);
    const kvPad = new Float32Array(4 * 4 * KV_SCORE_COLS);
    kvPad.set(kvReal);
    kvPad.set(randn(a.rng, 2 * 4 * KV_SCORE_COLS), kvReal.length);
    verify(a, [1, 2], [100, 200], kvReal, false);
    const before = snapshot(be, b.ctrl);
    b.ctrl.prepareForward(
      "target_verify",
      be.uploadIndex(Int32Array.of(1, 2, 0, 0)),
      be.uploadIndex(Int32Array.of(100, 200, 0, 0)),
      2,
    );
    b.ctrl.writePrefixStates(0, be.uploadMatrix(kvPad, 16, KV_SCORE_COLS), b.ape, "target_verify");
    be.synchronize();
    expect(bitsEqual(snapshot(be, a.ctrl), snapshot(be, b.ctrl))).toBe(true);
    // the raw kernel with padding rows included writes only to slot 0's rows
    be.writePrefix({
      kvScore: be.uploadMatrix(kvPad, 16, KV_SCORE_COLS),
      seqLens: be.uploadIndex(Int32Array.of(100, 200, 0, 0)),
      reqPoolIndices: be.uploadIndex(Int32Array.of(1, 2, 0, 0)),
      ape: b.ape,
      state: b.ctrl.layers[0]!,
      batchSize: 4,
      numVerifyTokens: 4,
      bankStrideRows: b.ctrl.bankStrideRows,
      numReqSlots: 5,
    });
    be.synchronize();
    const O = b.ctrl.bankStrideRows;
    const extra = changedRows(snapshot(be, a.ctrl), snapshot(be, b.ctrl));
    expect(extra.every((row) => row % O === 0)).toBe(true);
    void before;
  },
};
