/** Single windows pooled from ring rows by a backend, and the oracle of the same rows (tolerance tests). */
import { CompressPlanTable } from "@dsv4-kv/planner";
import type { CompressGeometry, RingCompressBackend, RingRatio, StateDtype } from "../src/backend.js";
import { CpuCompressBackend, offlineCompress, windowOf } from "../src/index.js";

export const D = 128;

/** A window of W token rows (row e = element e, whole rows) pooled from the ring, and the oracle. */
export function poolFromRing(
  cr: RingRatio,
  dtype: StateDtype,
  rows: Float32Array,
  ape: Float32Array,
  make: (g: CompressGeometry) => RingCompressBackend = (g) => new CpuCompressBackend(g),
) {
  const w = cr === 4 ? 8 : 128;
  const b = make({ compressRatio: cr, headDim: D, stateDtype: dtype, stateRows: w });
  b.setApe(ape);
  b.writeStateRows(0, rows);
  const rec =
    cr === 4
      ? { seqLen: 16, raggedId: 0, bufferLen: 8, readPage0: 0, readPage1: 1 }
      : { seqLen: 256, raggedId: 0, bufferLen: 128, readPage0: -1, readPage1: 0 };
  const out = b.prefill({
    input: new Float32Array(0),
    inputRows: 0,
    planC: CompressPlanTable.fromRecords([rec]).bytes,
    planW: new Uint8Array(0),
  });
  const re = rows.length / w;
  const q = cr === 4 ? 15 : 255;
  const elements = windowOf(cr, D, (p) => rows.subarray((p - (q - w + 1)) * re, (p - (q - w + 1) + 1) * re), q);
  const want = offlineCompress({ compressRatio: cr, headDim: D, ape, elements });
  let err = 0;
  for (let d = 0; d < D; d++) err = Math.max(err, Math.abs(out[d]! - want[d]!));
  return { out, want, err };
}

/** c4 rows where element e (row e, its overlap half for e < 4, main half otherwise) has kv `kv(e)`, score `s(e)`. */
export function c4Rows(kv: (e: number) => number, score: (e: number) => number): Float32Array {
  const rows = new Float32Array(8 * 4 * D);
  for (let e = 0; e < 8; e++) {
    const h = e < 4 ? 0 : D;
    rows.fill(kv(e), e * 4 * D + h, e * 4 * D + h + D);
    rows.fill(score(e), e * 4 * D + 2 * D + h, e * 4 * D + 2 * D + h + D);
  }
  return rows;
}

export interface AdversarialWindow {
  name: string;
  dtype: StateDtype;
  rows: Float32Array;
  ape: Float32Array;
  maxAbsKv: number;
  maxAbsScore: number;
  /** The smallest fraction of the CPU bound the CPU reference's error must reach. */
  minRatio: number;
}

const sign = (e: number) => (e % 2 === 0 ? 1 : -1);
const S0 = 8 * (1 + 2 ** -8);
const K1 = 1 + 2 ** -8;

function apeOf(v: (e: number) => number): Float32Array {
  const ape = new Float32Array(8 * D);
  for (let e = 0; e < 8; e++) ape.fill(v(e), e * D, (e + 1) * D);
  return ape;
}

export const ADVERSARIAL: readonly AdversarialWindow[] = [
  {
    // Logits exactly 0 (score ∓8.03125, ape ±8.03125); bf16 rounds the scores by ±1/32 in opposite directions for
    // kv = +1 and kv = −1, so the entry moves by tanh(1/32) ≈ 0.03124 against a bound of 0.0353.
    name: "bf16 score rounding: ≥ 85% of the bf16 bound",
    dtype: "bf16",
    rows: c4Rows(sign, (e) => -sign(e) * S0),
    ape: apeOf((e) => sign(e) * S0),
    maxAbsKv: 1,
    maxAbsScore: S0,
    minRatio: 0.85,
  },
  {
    // kv = 1 + 2^-8 (a tie: rounds to 1), equal logits: the entry is off by exactly 2^-8.
    name: "bf16 kv rounding: ≥ 99% of the bound",
    dtype: "bf16",
    rows: c4Rows(
      () => K1,
      () => 0,
    ),
    ape: new Float32Array(8 * D),
    maxAbsKv: K1,
    maxAbsScore: 0,
    minRatio: 0.99,
  },
  {
    // score 1024 + ape (3 or 1)·2^-14 rounds to nearest even: up by 2^-14 for kv = +1, down for kv = −1, so the
    // entry is off by about 2^-14 = u·S; s − m is exact here (Sterbenz) and costs the bound only 2.9u (n/e).
    name: "fp32 logit rounding: ≥ 95% of the fp32 bound",
    dtype: "fp32",
    rows: c4Rows(sign, () => 1024),
    ape: apeOf((e) => (sign(e) > 0 ? 3 : 1) * 2 ** -14),
    maxAbsKv: 1,
    maxAbsScore: 1024 + 2 ** -12,
    minRatio: 0.95,
  },
];
