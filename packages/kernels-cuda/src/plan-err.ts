// Generated from native/planner/plan_kernels.cuh (enum PlanErr) by scripts/plan-err.mjs; do not edit.
// test/plan-err.test.ts fails when this file is stale: run `node scripts/plan-err.mjs`.

/** The planner kernels' status codes (PlanStatus.code), by their C++ names. */
export const PLAN_ERR = {
  /** kErrNone */
  kErrNone: 0,
  /** S_b < 0 index=b value=S */
  kErrSeqNeg: 1,
  /** E_b < 0 (or < 1 on host rules) index=b value=E */
  kErrExtendNeg: 2,
  /** E_b > S_b index=b value=E aux=S */
  kErrExtendGtSeq: 3,
  /** sum(E) > num_q (device) / != num_q (host rules) value=sum */
  kErrExtendSum: 4,
  /** rid < 0 index=b value=rid */
  kErrRidNeg: 5,
  /** rid >= rows of req_to_token index=b value=rid aux=rows */
  kErrRidRows: 6,
  /** p >= req_to_token row length index=rid value=p aux=stride */
  kErrPosStride: 7,
  /** full-pool loc outside full_to_state index=rid value=full aux=p */
  kErrFullRange: 8,
  /** SWA location < 0 index=rid value=swa aux=p */
  kErrSwaNeg: 9,
  /** rid*R + p%R > INT32_MAX index=b value=rid */
  kErrSlotOverflow: 10,
  /** decode S < 1 index=i value=S */
  kErrDecodeSeq: 11,
  /** host rules: E_b == 0 index=b value=E */
  kErrExtendZero: 12,
  /** int64 length outside int32 index=b value=v aux=0 seqLens / 1 extendLens */
  kErrNarrow: 13,
} as const;

export type PlanErrName = keyof typeof PLAN_ERR;
