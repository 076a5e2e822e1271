/**
 * Geometry of one layer's ring compression (docs/reference/planner.md §8): the window `W` (the planner's
 * `windowSize`: c4 8, c128 128), the row blocks (c4 `| kv_overlap | kv | score_overlap | score |`, c128 `| kv | score
 * |`) and the validated `CompressGeometry` both backends are built from.
 */
import { windowSize } from "@dsv4-kv/planner";
import type { CompressGeometry, RingRatio, StateDtype } from "./backend.js";
import { checkInt, checkKeys, checkObject, checkOneOf } from "./check.js";

export const RING_RATIOS: readonly RingRatio[] = [4, 128];
export const HEAD_DIMS: readonly number[] = [128, 512];
export const STATE_DTYPES: readonly StateDtype[] = ["fp32", "bf16"];
const GEOMETRY_KEYS = ["compressRatio", "headDim", "stateDtype", "stateRows"] as const;
/** Ring rows are addressed as int32 on the device (`page * cr + e`). */
export const MAX_STATE_ROWS = 0x7fffffff;

/** Row blocks of a state / input row: c4 4 (overlap and main kv and score), c128 2. */
export function rowBlocks(compressRatio: RingRatio): number {
  return compressRatio === 4 ? 4 : 2;
}

/** The checked geometry plus what follows from it. */
export interface Layout extends Readonly<CompressGeometry> {
  /** Window elements W (the planner's `windowSize`). */
  readonly window: number;
  /** Floats per state / input row. */
  readonly rowElems: number;
}

/** Validates a `CompressGeometry` (keys, ratio, head dim, dtype, rows) and derives the window and row width. */
export function layoutOf(geometry: CompressGeometry, field = "geometry"): Layout {
  checkObject(geometry, field);
  checkKeys(geometry, GEOMETRY_KEYS, field);
  const { compressRatio, headDim, stateDtype, stateRows } = geometry;
  checkOneOf(compressRatio, RING_RATIOS, `${field}.compressRatio`);
  checkOneOf(headDim, HEAD_DIMS, `${field}.headDim`);
  checkOneOf(stateDtype, STATE_DTYPES, `${field}.stateDtype`);
  checkInt(stateRows, 1, MAX_STATE_ROWS, `${field}.stateRows`, `must be an integer in [1, ${MAX_STATE_ROWS}]`);
  const window = windowSize(compressRatio);
  return { compressRatio, headDim, stateDtype, stateRows, window, rowElems: rowBlocks(compressRatio) * headDim };
}

/** The geometry a backend reports: the layout's four inputs, frozen (no derived fields). */
export function frozenGeometry(layout: Layout): Readonly<CompressGeometry> {
  const { compressRatio, headDim, stateDtype, stateRows } = layout;
  return Object.freeze({ compressRatio, headDim, stateDtype, stateRows });
}
