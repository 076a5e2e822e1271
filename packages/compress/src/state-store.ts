/**
 * Host-side helpers shared by both backends for the state pool's rows: argument checks of readState* /
 * writeStateRows / setApe, and the fp32 ↔ state-dtype conversions (bf16 round-to-nearest-even through
 * @dsv4-kv/online-mtp-controller's bf16 steps, so the CPU's bits are the kernels' bits).
 */
import { bf16BitsOf, bf16ValueOf } from "@dsv4-kv/online-mtp-controller/internal";
import type { StateDtype } from "./backend.js";
import { check, checkFiniteElements, checkFloat32Array, checkInt } from "./check.js";
import type { Layout } from "./geometry.js";

/** Checks `firstRow` / `count` against the pool; returns the element range [lo, hi). */
export function checkRowRange(layout: Layout, firstRow: unknown, count: unknown): [number, number] {
  checkInt(firstRow, 0, layout.stateRows, "firstRow", `must be a state row in [0, stateRows = ${layout.stateRows}]`);
  const left = layout.stateRows - firstRow;
  checkInt(count, 0, left, "count", `must be in [0, stateRows − firstRow = ${left}]`);
  return [firstRow * layout.rowElems, (firstRow + count) * layout.rowElems];
}

/** Checks `writeStateRows` values (whole finite rows that fit from `firstRow`); returns the row count. */
export function checkStateValues(layout: Layout, firstRow: unknown, values: unknown): number {
  checkFloat32Array(values, "values");
  const re = layout.rowElems;
  const rule = `must be a whole number of rows of rowElems = ${re} floats`;
  check(values.length % re === 0, "BUFFER_SHAPE", "values.length", values.length, rule);
  checkRowRange(layout, firstRow, values.length / re);
  checkFiniteElements(values, "values");
  return values.length / re;
}

/** Checks `setApe`'s `[W, headDim]` fp32 bias. */
export function checkApe(layout: Layout, ape: unknown): asserts ape is Float32Array {
  checkFloat32Array(ape, "ape");
  const n = layout.window * layout.headDim;
  const rule = `must hold window × headDim = ${layout.window} × ${layout.headDim} = ${n} floats`;
  check(ape.length === n, "BUFFER_SHAPE", "ape.length", ape.length, rule);
  checkFiniteElements(ape, "ape");
}

/** `values` as the state dtype's bits: the same floats (fp32) or bf16 bits rounded to nearest even. */
export function toStateBits(dtype: StateDtype, values: Float32Array): Float32Array | Uint16Array {
  if (dtype === "fp32") return values;
  const bits = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) bits[i] = bf16BitsOf(values[i]!);
  return bits;
}

/** bf16 bits widened to the fp32 values they stand for (exact), into `out` from `outAt`. */
export function widenBf16(bits: Uint16Array, out = new Float32Array(bits.length), outAt = 0): Float32Array {
  for (let i = 0; i < bits.length; i++) out[outAt + i] = bf16ValueOf(bits[i]!);
  return out;
}

/** A Float32Array of `n` NaNs with all bits set (0xFFFFFFFF: what a 0xFF device fill reads as). */
export function nanFilled(n: number): Float32Array {
  const out = new Float32Array(n);
  new Uint32Array(out.buffer).fill(0xffffffff);
  return out;
}
