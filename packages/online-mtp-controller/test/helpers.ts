/** Shared fixtures of the invariant suites (CPU always, GPU on a CUDA machine). */
import { SeededRandom } from "@dsv4-kv/planner/internal";
import {
  CHUNK_TOKENS,
  HEAD_DIM,
  KV_SCORE_COLS,
  OnlineMtpController,
  STATE_ROW_ELEMS,
  type MatrixF32,
  type OnlineMtpBackend,
  type StateDtype,
  type WritePrefixParams,
} from "../src/index.js";
import type { TokenInput } from "../src/testing.js";

export const H = HEAD_DIM;

export function gaussian(rng: SeededRandom): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export function randn(rng: SeededRandom, n: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, () => gaussian(rng) * scale);
}

/** A valid online state row: max ~ N(0,1), sum in [1, 20], acc ~ N(0,1). */
export function randomStateRow(rng: SeededRandom): Float32Array {
  const row = new Float32Array(STATE_ROW_ELEMS);
  for (let d = 0; d < H; d++) {
    row[d] = gaussian(rng);
    row[H + d] = 1 + Math.abs(gaussian(rng)) * 8;
    row[2 * H + d] = gaussian(rng);
  }
  return row;
}

export interface Setup {
  be: OnlineMtpBackend;
  ctrl: OnlineMtpController;
  rng: SeededRandom;
  apeHost: Float32Array;
  ape: MatrixF32;
}

export function setup(
  be: OnlineMtpBackend,
  o: {
    N?: number;
    Dmax?: number;
    D?: number;
    L?: number;
    dtype?: StateDtype;
    seed?: number;
    Ctor?: typeof OnlineMtpController;
  } = {},
): Setup {
  const rng = new SeededRandom(o.seed ?? 7);
  const Ctor = o.Ctor ?? OnlineMtpController;
  const ctrl = new Ctor({
    backend: be,
    numReqSlots: o.N ?? 6,
    maxDraftTokens: o.Dmax ?? 8,
    numDraftTokens: o.D ?? o.Dmax ?? 8,
    numLayers: o.L ?? 1,
    stateDtype: o.dtype ?? "fp32",
  });
  // Fill every row of every layer with valid random states so "untouched" checks are meaningful.
  for (const s of ctrl.layers) {
    const all = new Float32Array(s.rows * STATE_ROW_ELEMS);
    for (let r = 0; r < s.rows; r++) all.set(randomStateRow(rng), r * STATE_ROW_ELEMS);
    be.writeStateRows(s, 0, all);
  }
  const apeHost = randn(rng, CHUNK_TOKENS * H);
  return { be, ctrl, rng, apeHost, ape: be.uploadMatrix(apeHost, CHUNK_TOKENS, H) };
}

export function tokenOf(kv: Float32Array, row: number, apeHost: Float32Array, pos: number): TokenInput {
  const p = pos % CHUNK_TOKENS;
  return {
    kvScore: kv.subarray(row * KV_SCORE_COLS, (row + 1) * KV_SCORE_COLS),
    ape: apeHost.subarray(p * H, (p + 1) * H),
  };
}

export function bitsEqual(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** All rows of a state buffer as raw bits. */
export function snapshot(be: OnlineMtpBackend, ctrl: OnlineMtpController, layer = 0): Uint32Array | Uint16Array {
  return be.readStateBits(ctrl.layers[layer]!, 0, ctrl.stateRows);
}

/** Rows whose bits differ between two snapshots. */
export function changedRows(a: ArrayLike<number>, b: ArrayLike<number>): number[] {
  const rows: number[] = [];
  for (let r = 0; r * STATE_ROW_ELEMS < a.length; r++) {
    for (let e = 0; e < STATE_ROW_ELEMS; e++) {
      if (a[r * STATE_ROW_ELEMS + e] !== b[r * STATE_ROW_ELEMS + e]) {
        rows.push(r);
        break;
      }
    }
  }
  return rows;
}

/** Valid writePrefix parameters for slots 1 and 2 of a setup with N = 4, D = 4 (8 random input rows). */
export function writePrefixParams(s: Setup): WritePrefixParams {
  const idx = s.be.uploadIndex(Int32Array.of(1, 2));
  return {
    kvScore: s.be.uploadMatrix(randn(s.rng, 8 * KV_SCORE_COLS), 8, KV_SCORE_COLS),
    seqLens: idx,
    reqPoolIndices: idx,
    ape: s.ape,
    state: s.ctrl.layers[0]!,
    batchSize: 2,
    numVerifyTokens: 4,
    bankStrideRows: s.ctrl.bankStrideRows,
    numReqSlots: 4,
  };
}

/** A target verify of one request (slot, committed length S) with random input rows, then writePrefix on layer 0. */
export function verifyOne(s: Setup, slot: number, S: number): void {
  const D = s.ctrl.numVerifyTokens();
  s.ctrl.prepareForward("target_verify", s.be.uploadIndex(Int32Array.of(slot)), s.be.uploadIndex(Int32Array.of(S)));
  const kv = s.be.uploadMatrix(randn(s.rng, D * KV_SCORE_COLS), D, KV_SCORE_COLS);
  s.ctrl.writePrefixStates(0, kv, s.ape, "target_verify");
}
