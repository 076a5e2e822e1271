/**
 * onlinePrefill (native/online_mtp, docs/reference/online-mtp.md §5.2, §6.2) on a GPU against a float64 fold written
 * here: every segment length 1..128 closing and trailing, with and without a stored partial (a cleared row among
 * them), in each of the three launch shapes and both paths (the launch picks a shape from input rows / segments and
 * the fused single kernel for small tables, so the tests size the kvScore buffer or pad the table to reach each); a
 * 4,096-token chunk with and without a partial prefix and plain extends that cross a chunk boundary (a trailing
 * segment stores the row a closing segment loads: every load must still read the pre-launch row); verify batches of
 * 64 requests at D 4 and 8 with padded tables; bad records reported and skipped; fp32 and bf16 state. Skipped without
 * a GPU.
 */
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { describe, expect } from "vitest";
import {
  createDeviceBuffer,
  getDefaultContext,
  probeOnlineMtp,
  type DeviceBuffer,
  type GpuContext,
} from "../src/index.js";
import { ONLINE_MTP_ERR, onlineMtpNative, type OnlineMtpNative } from "../src/internal.js";
import { processBenchAddon } from "./bench-build.js";
import { fromBf16, Rng, toBf16 } from "./helpers.js";

const H = 512;
const ROW = 3 * H;
const KVC = 2 * H;
const CHUNK = 128;

type Dtype = "fp32" | "bf16";
interface Env {
  nat: OnlineMtpNative;
  ctx: GpuContext;
  bufs: DeviceBuffer[];
}
const gpuTest = createGpuTest(
  probeOnlineMtp,
  (): Env => ({ nat: onlineMtpNative(), ctx: getDefaultContext(), bufs: [] }),
);

function dev(env: Env, view: ArrayBufferView, minBytes = 16): DeviceBuffer {
  const b = createDeviceBuffer(Math.max(minBytes, view.byteLength), env.ctx);
  env.bufs.push(b);
  env.nat.copyToDevice(env.ctx, b, view);
  return b;
}
function freeAll(env: Env): void {
  for (const b of env.bufs) b.free();
  env.bufs.length = 0;
}
/** State rows on the device in `dtype`; `host` = the values as the kernel reads them (bf16 widened). */
function stateBuf(env: Env, vals: Float32Array, dtype: Dtype): { buf: DeviceBuffer; host: Float32Array } {
  if (dtype === "fp32") return { buf: dev(env, vals), host: Float32Array.from(vals) };
  const bits = Uint16Array.from(vals, toBf16);
  return { buf: dev(env, bits), host: Float32Array.from(bits, fromBf16) };
}
function readState(env: Env, b: DeviceBuffer, rows: number, dtype: Dtype): { vals: Float32Array; bits: Uint32Array } {
  if (dtype === "fp32") {
    const bits = env.nat.copyToHost(env.ctx, b, new Uint32Array(rows * ROW));
    return { vals: new Float32Array(bits.buffer), bits };
  }
  const raw = env.nat.copyToHost(env.ctx, b, new Uint16Array(rows * ROW));
  return { vals: Float32Array.from(raw, fromBf16), bits: Uint32Array.from(raw) };
}
function stateBits(host: Float32Array, dtype: Dtype): Uint32Array {
  return dtype === "fp32" ? new Uint32Array(Float32Array.from(host).buffer) : Uint32Array.from(host, toBf16);
}
/** Random state rows; every 5th row cleared (max −inf, sum 0, acc 0: an identity of the merge). */
function randomState(rng: Rng, rows: number): Float32Array {
  const v = new Float32Array(rows * ROW);
  for (let r = 0; r < rows; r++)
    for (let d = 0; d < H; d++) {
      const cleared = r % 5 === 4;
      v[r * ROW + d] = cleared ? Number.NEGATIVE_INFINITY : rng.n();
      v[r * ROW + H + d] = cleared ? 0 : 1 + 8 * rng.u();
      v[r * ROW + 2 * H + d] = cleared ? 0 : rng.n();
    }
  return v;
}
function randn(rng: Rng, n: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, () => scale * rng.n());
}

/** One record [seqLen, lastRow, len, loadRow, storeRow] (docs/reference/online-mtp.md §6.2). */
type Seg = [number, number, number, number, number];
/** The segment of `len` tokens ending at chunk offset c1 (1..128) on input rows lastRow-len+1..lastRow. */
function seg(chunkIndex: number, c1: number, len: number, lastRow: number, loadRow: number, storeRow: number): Seg {
  return [chunkIndex * CHUNK + c1, lastRow, len, loadRow, storeRow];
}

/**
 * docs/reference/online-mtp.md §5.2 in float64 for one segment: the fold of its tokens merged with the stored partial
 * `prev` (null: none), as [max, sum, acc] per channel.
 */
function foldSegment(s: Seg, kv: Float32Array, ape: Float32Array, prev: Float32Array | null): Float64Array {
  const [seqLen, lastRow, len] = s;
  const c0 = ((seqLen - 1) % CHUNK) + 1 - len;
  const out = new Float64Array(ROW);
  for (let d = 0; d < H; d++) {
    let m = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < len; j++) m = Math.max(m, kv[(lastRow - len + 1 + j) * KVC + H + d]! + ape[(c0 + j) * H + d]!);
    let sg = 0;
    let n = 0;
    for (let j = 0; j < len; j++) {
      const row = lastRow - len + 1 + j;
      const e = Math.exp(kv[row * KVC + H + d]! + ape[(c0 + j) * H + d]! - m);
      sg += e;
      n += e * kv[row * KVC + d]!;
    }
    if (prev && c0 !== 0) {
      const m1 = prev[d]!;
      const mm = Math.max(m1, m);
      const w1 = prev[H + d]! * Math.exp(m1 - mm);
      const w2 = Math.exp(m - mm);
      const sum = w1 + sg * w2;
      out[d] = mm;
      out[H + d] = sum;
      out[2 * H + d] = (prev[2 * H + d]! * w1 + n * w2) / sum;
    } else {
      out[d] = m;
      out[H + d] = sg;
      out[2 * H + d] = n / sg;
    }
  }
  return out;
}
function close(got: number, want: number, dtype: Dtype): boolean {
  const [atol, rtol] = dtype === "fp32" ? [2e-4, 2e-4] : [1e-2, 8e-3];
  return Math.abs(got - want) <= atol + rtol * Math.abs(want);
}

interface Case {
  segs: Seg[];
  kvRows: number;
  /** Rows the kvScore buffer holds (>= kvRows): a larger buffer moves the launch to a longer-segment shape. */
  kvBufferRows?: number;
  stateRows: number;
  seed: number;
}
/**
 * Runs one prefill on `c` and checks it against foldSegment: closing segments' entries (fp32), trailing segments'
 * stored rows, every other state row and every other output row bitwise untouched, the error word clear (or `err`).
 */
function runCase(env: Env, c: Case, dtype: Dtype, err: number[] = [0, 0, 0, 0]): { bad: number; untouched: number } {
  const rng = new Rng(c.seed);
  const init = randomState(rng, c.stateRows);
  const st = stateBuf(env, init, dtype);
  const kv = randn(rng, c.kvRows * KVC);
  const ape = randn(rng, CHUNK * H, 0.5);
  const n = c.segs.length;
  const outInit = Float32Array.from({ length: n * H }, (_, i) => -1000 - i);
  const out = dev(env, outInit);
  const errBuf = dev(env, new Int32Array(4));
  env.nat.prefill(env.ctx, {
    state: st.buf,
    kvScore: dev(env, kv, (c.kvBufferRows ?? c.kvRows) * KVC * 4),
    ape: dev(env, ape),
    segments: dev(env, Int32Array.from(c.segs.flat())),
    out,
    err: errBuf,
    numSegments: n,
    stateType: dtype === "fp32" ? 0 : 1,
  });
  const got = readState(env, st.buf, c.stateRows, dtype);
  const o = env.nat.copyToHost(env.ctx, out, new Float32Array(n * H));
  expect(Array.from(env.nat.copyToHost(env.ctx, errBuf, new Int32Array(4))), "error word").toEqual(err);
  const stored = new Set<number>();
  const emitted = new Set<number>();
  let bad = 0;
  c.segs.forEach((s, i) => {
    const [seqLen, lastRow, len, loadRow, storeRow] = s;
    const c1 = ((seqLen - 1) % CHUNK) + 1;
    const valid = seqLen > 0 && len >= 1 && len <= c1 && lastRow - len + 1 >= 0 && lastRow < c.kvRows;
    if (!valid || (c1 !== CHUNK && (storeRow < 0 || storeRow >= c.stateRows))) return;
    if (c1 - len !== 0 && loadRow >= c.stateRows) return;
    // Every load reads the pre-launch state (closing segments run first, trailing ones store after them).
    const prev = loadRow >= 0 ? st.host.subarray(loadRow * ROW, (loadRow + 1) * ROW) : null;
    const want = foldSegment(s, kv, ape, prev);
    if (c1 === CHUNK) {
      emitted.add(i);
      for (let d = 0; d < H; d++) if (!close(o[i * H + d]!, want[2 * H + d]!, "fp32")) bad++;
    } else {
      stored.add(storeRow);
      for (let e = 0; e < ROW; e++) if (!close(got.vals[storeRow * ROW + e]!, want[e]!, dtype)) bad++;
    }
  });
  let untouched = 0;
  const initBits = stateBits(st.host, dtype);
  for (let r = 0; r < c.stateRows; r++) {
    if (stored.has(r)) continue;
    for (let e = 0; e < ROW; e++) if (got.bits[r * ROW + e] !== initBits[r * ROW + e]) untouched++;
  }
  for (let i = 0; i < n; i++) {
    if (emitted.has(i)) continue;
    for (let d = 0; d < H; d++) if (!Object.is(o[i * H + d], outInit[i * H + d])) untouched++;
  }
  return { bad, untouched };
}

/**
 * Every length 1..128 twice: closing (c1 = 128) and, below 128, trailing (c1 < 128); each starts at offset 0 or
 * inside its chunk, with a stored partial (a cleared row for every 5th) or loadRow −1. Trailing segments store to
 * their own rows, above every load row.
 */
function everyLength(seed: number): Omit<Case, "seed"> & { rng: Rng } {
  const rng = new Rng(seed);
  const segs: Seg[] = [];
  const loadRows = 40;
  let row = 0;
  let store = loadRows;
  for (let len = 1; len <= CHUNK; len++) {
    const closingC0 = CHUNK - len;
    segs.push(seg(3 + (len % 4), CHUNK, len, row + len - 1, len % 7 === 0 ? -1 : rng.int(0, loadRows - 1), 0));
    row += len;
    if (closingC0 === 0) continue;
    const c0 = len % 3 === 0 ? 0 : rng.int(1, CHUNK - len - 1 > 0 ? CHUNK - len - 1 : 1);
    if (c0 + len >= CHUNK) continue;
    segs.push(seg(2, c0 + len, len, row + len - 1, len % 11 === 0 ? -1 : rng.int(0, loadRows - 1), store++));
    row += len;
  }
  return { segs, kvRows: row, stateRows: store, rng };
}

const padding = (count: number): Seg[] => Array.from({ length: count }, (): Seg => [0, 0, 0, 0, 0]);

/**
 * The launch's paths for one table: the verify shape (mean < 12 tokens per segment) in the fused kernel (up to 512
 * records) and in two passes (more), and the two-pass 64 x 4 and 16 x 16 shapes. Each entry: a name, the padded table
 * and the kvScore buffer's rows (a larger buffer raises the mean).
 */
function everyPath(segs: Seg[], kvRows: number): [string, Seg[], number][] {
  const n = segs.length;
  const pad = (count: number): Seg[] => [...segs, ...padding(Math.max(0, count - n))];
  const out: [string, Seg[], number][] = [];
  const fused = Math.max(n, Math.ceil(kvRows / 11));
  if (fused <= 512) out.push(["128 x 1 fused", pad(fused), kvRows]);
  const twoPass = Math.max(513, fused);
  out.push(["128 x 1 two-pass", pad(twoPass), Math.max(kvRows, 11 * twoPass)]);
  const mid = Math.max(n, Math.ceil(kvRows / 30));
  out.push(["64 x 4", pad(mid), Math.max(kvRows, 30 * mid)]);
  out.push(["16 x 16", segs, Math.max(kvRows, 64 * n)]);
  return out;
}

/** `segs` (in input-row order) cut into tables of at most `maxRows` input rows and `maxSegs` records, rows from 0. */
function splitTables(segs: Seg[], maxRows: number, maxSegs: number): { segs: Seg[]; kvRows: number }[] {
  const out: { segs: Seg[]; kvRows: number }[] = [];
  let cur: Seg[] = [];
  let row0 = 0;
  let rows = 0;
  for (const s of segs) {
    if (cur.length > 0 && (rows + s[2] > maxRows || cur.length === maxSegs)) {
      out.push({ segs: cur, kvRows: rows });
      cur = [];
      row0 += rows;
      rows = 0;
    }
    cur.push([s[0], s[1] - row0, s[2], s[3], s[4]]);
    rows += s[2];
  }
  if (cur.length > 0) out.push({ segs: cur, kvRows: rows });
  return out;
}

describe("onlinePrefill: every segment length, every launch shape", () => {
  for (const dtype of ["fp32", "bf16"] as const) {
    gpuTest(`lengths 1..128, closing and trailing, each shape and path, ${dtype}: = float64 fold`, ({ gpu: env }) => {
      const base = everyLength(71);
      // Mean tokens per segment picks the shape: < 12 one block of 128 per segment, < 48 two of 256, else eight of
      // 256. Padding rows (seqLen 0) bring the mean down; a larger kvScore buffer brings it up; the table's size picks
      // the verify shape's path. The whole table runs every two-pass shape, its pieces the fused kernel.
      const tables = [{ segs: base.segs, kvRows: base.kvRows }, ...splitTables(base.segs, 5000, 512)];
      for (const [t, table] of tables.entries())
        for (const [name, segs, kvBufferRows] of everyPath(table.segs, table.kvRows)) {
          if (t === 0 ? name.includes("fused") : !name.includes("fused")) continue;
          const c = { segs, kvRows: table.kvRows, kvBufferRows, stateRows: base.stateRows, seed: 5 + t };
          expect(runCase(env, c, dtype), `table ${t}, ${name}: off the fold / touched`).toEqual({
            bad: 0,
            untouched: 0,
          });
          freeAll(env);
        }
    });

    gpuTest(
      `plain extends across chunk boundaries, every shape and path, ${dtype}: loads see the pre-launch rows`,
      ({ gpu: env }) => {
        // Request k (slot k + 1) extends `tokens` tokens after `prefix`; its closing first segment loads bank 0 and its
        // trailing segment stores bank 0. One more closing segment loads slot 1's row too (two loads, one store).
        const extends_: [number, number][] = [
          [1024 + 123, 10],
          [127, 2],
          [100, 60],
          [5, 300],
          [64, 64],
          [0, 130],
          [126, 3],
        ];
        const segs: Seg[] = [];
        let row = 0;
        extends_.forEach(([prefix, tokens], k) => {
          for (let p = prefix; p < prefix + tokens; ) {
            const end = Math.min(prefix + tokens, (Math.floor(p / CHUNK) + 1) * CHUNK);
            segs.push([end, row + end - 1 - prefix, end - p, k + 1, k + 1]);
            p = end;
          }
          row += tokens;
        });
        segs.push(seg(10, CHUNK, 3, row + 2, 1, 0));
        row += 3;
        for (const [name, table, kvBufferRows] of everyPath(segs, row)) {
          const c = { segs: table, kvRows: row, kvBufferRows, stateRows: extends_.length + 2, seed: 41 };
          expect(runCase(env, c, dtype), name).toEqual({ bad: 0, untouched: 0 });
          freeAll(env);
        }
      },
    );

    gpuTest(`a 4,096-token chunk, prefix 0 and prefix 37 (bank 0 loaded and stored), ${dtype}`, ({ gpu: env }) => {
      for (const prefix of [0, 37, 127]) {
        const T = 4096;
        const segs: Seg[] = [];
        for (let p = prefix; p < prefix + T; ) {
          const end = Math.min(prefix + T, (Math.floor(p / CHUNK) + 1) * CHUNK);
          segs.push([end, end - 1 - prefix, end - p, 1, 1]); // plain extend: load and store row 1 (bank 0)
          p = end;
        }
        const r = runCase(env, { segs, kvRows: T, stateRows: 4, seed: 90 + prefix }, dtype);
        expect(r, `prefix ${prefix}`).toEqual({ bad: 0, untouched: 0 });
      }
      freeAll(env);
    });

    gpuTest(`verify, 64 requests, D 4 and 8, padded table, trailing parts into bank 1, ${dtype}`, ({ gpu: env }) => {
      for (const D of [4, 8]) {
        const batch = 64;
        const O = batch + 3;
        const offsets = [0, 1, 2, 63, 120, 126, 127, 125];
        const segs: Seg[] = [];
        for (let b = 0; b < batch; b++) {
          const S = 1024 + offsets[b % offsets.length]!;
          for (let p = S; p < S + D; ) {
            const end = Math.min(S + D, (Math.floor(p / CHUNK) + 1) * CHUNK);
            segs.push([end, b * D + (end - 1 - S), end - p, b + 1, b + 1 + O]);
            p = end;
          }
        }
        while (segs.length < batch * D) segs.push([0, 0, 0, 0, 0]);
        const r = runCase(env, { segs, kvRows: batch * D, stateRows: 2 * O, seed: 300 + D }, dtype);
        expect(r, `D ${D}`).toEqual({ bad: 0, untouched: 0 });
      }
      freeAll(env);
    });
  }

  gpuTest(
    "bad records: the first is reported [code, segment, value, kernel], every bad one skipped",
    ({ gpu: env }) => {
      const good: Seg[] = [seg(1, CHUNK, 128, 127, -1, 0), seg(2, 50, 50, 177, -1, 5)];
      const cases: [Seg, number, number][] = [
        [seg(1, CHUNK, 0, 10, -1, 0), ONLINE_MTP_ERR.segLen, 0],
        [seg(1, 20, 21, 30, -1, 3), ONLINE_MTP_ERR.segLen, 21],
        [seg(1, CHUNK, 4, 400, -1, 0), ONLINE_MTP_ERR.segLastRow, 400],
        [seg(1, CHUNK, 4, 2, -1, 0), ONLINE_MTP_ERR.segLastRow, 2],
        [seg(1, CHUNK, 4, 20, 99, 0), ONLINE_MTP_ERR.segLoadRow, 99],
        [seg(1, 60, 4, 20, 2, 8), ONLINE_MTP_ERR.segStoreRow, 8],
        [seg(1, 60, 4, 20, 2, -2), ONLINE_MTP_ERR.segStoreRow, -2],
      ];
      for (const [badSeg, code, value] of cases) {
        // As is (16 x 16), padded to a mean below 12 (128 x 1 fused) and past the fused kernel's 512 records.
        for (const extra of [0, 17, 600]) {
          const segs = [good[0]!, badSeg, good[1]!, ...padding(extra)];
          const r = runCase(env, { segs, kvRows: 200, stateRows: 8, seed: 11 }, "fp32", [code, 1, value, 0]);
          expect(r, `code ${code} value ${value}, ${extra} padding rows`).toEqual({ bad: 0, untouched: 0 });
        }
      }
      freeAll(env);
    },
  );
});

describe("bench op prefill (a GPU run; the timing itself is the lead's)", () => {
  const benchAddon = processBenchAddon();
  gpuTest("verify and chunk cases run and report their bytes", ({ gpu: env, skip }) => {
    if (!benchAddon.addon) return skip(benchAddon.reason);
    const nat = benchAddon.addon.onlineMtp;
    const common = { stateType: 0, graph: 1, rotate: 1, iters: 2, reps: 1 } as const;
    const verify = nat.bench(env.ctx, { op: "prefill", prefillCase: "verify", batch: 64, numVerify: 4, ...common });
    expect(verify.numSegments).toBe(256);
    expect(verify.bytes).toBeGreaterThan(64 * 4 * 4096);
    const chunk = nat.bench(env.ctx, {
      op: "prefill",
      prefillCase: "chunk",
      chunkTokens: 4096,
      batch: 1,
      numVerify: 1,
      ...common,
    });
    expect(chunk.numSegments).toBe(32);
    // 4,096 input rows, 32 entries, 32 records, all 128 ape rows.
    expect(chunk.bytes).toBe(4096 * 4096 + 32 * 2048 + 32 * 20 + 128 * 2048);
  });
});
