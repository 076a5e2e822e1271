/**
 * The PlannerError each non-zero status code of the planner kernels stands for: the same code, field and rule the
 * CPU planner raises for the same input (agreement-tests compare every code with the CPU planner). The codes come
 * from native/planner/plan_kernels.cuh through kernels-cuda's generated PLAN_ERR; the RULES table is typed by its
 * names, so a code without a rule does not compile.
 */
import { PLAN_ERR, type PlanErrName, type PlanStatus } from "@dsv4-kv/kernels-cuda/internal";
import { PlannerError } from "../errors.js";
import { INT32_MAX } from "../inputs.js";

/** What a record does not carry but a rule names: the call's ring size, full_to_state length and layout. */
export interface StatusGeometry {
  ringSize: number;
  fullToStateLength: number;
  legacy: boolean;
}

type Rule = (st: PlanStatus, g: StatusGeometry) => PlannerError;

const E = (code: ConstructorParameters<typeof PlannerError>[0], field: string, value: unknown, rule: string) =>
  new PlannerError(code, field, value, rule);

/**
 * PlanErr name -> error, in PlanErr order; typed by the generated names, so a code without a rule (or a rule for a
 * code that no longer exists) does not compile. Codes 2 and 4 arise on device rules only (host inputs are checked in
 * TS).
 */
const RULES: Readonly<Record<Exclude<PlanErrName, "kErrNone">, Rule>> = {
  kErrSeqNeg: ({ index: i, value: v }) => E("INVALID_ARGUMENT", `seqLens[${i}]`, v, `must be in [0, ${INT32_MAX}]`),
  kErrExtendNeg: ({ index: i, value: v }) => E("EXTEND_LEN", `extendLens[${i}]`, v, "must be >= 0"),
  kErrExtendGtSeq: ({ index: i, value: v, aux }) =>
    E("EXTEND_LEN", `extendLens[${i}]`, v, `must be <= seqLens[${i}] = ${aux} (the prefix S - E cannot be negative)`),
  kErrExtendSum: ({ value: v, aux }) =>
    E("EXTEND_SUM", "numQTokens", aux, `must be >= the sum of extendLens (${v}); the plan tables have numQTokens rows`),
  kErrRidNeg: ({ index: i, value: v }) =>
    E("INVALID_ARGUMENT", `reqPoolIndices[${i}]`, v, `must be in [0, ${Number.MAX_SAFE_INTEGER}]`),
  kErrRidRows: ({ value: v, aux }) =>
    E("INDEX_OUT_OF_RANGE", "reqPoolIndices", v, `must be < ${aux} (rows of reqToToken)`),
  kErrPosStride: ({ index: rid, value: p, aux }) =>
    E("INDEX_OUT_OF_RANGE", `reqToToken[${rid}]`, p, `position must be < ${aux} (tokens per request row)`),
  kErrFullRange: ({ index: rid, value: full, aux: p }, g) =>
    E(
      "INDEX_OUT_OF_RANGE",
      `fullToState[reqToToken[${rid}][${p}]]`,
      full,
      `full-pool location must be in [0, ${g.fullToStateLength})`,
    ),
  kErrSwaNeg: ({ index: rid, value: swa, aux: p }) =>
    E("INDEX_OUT_OF_RANGE", `SWA location of request ${rid} position ${p}`, swa, "must be >= 0"),
  kErrSlotOverflow: slotOverflow,
  kErrDecodeSeq: ({ index: i, value: v }) => E("INVALID_ARGUMENT", `seqLens[${i}]`, v, `must be in [1, ${INT32_MAX}]`),
  kErrExtendZero: ({ index: i, value: v }) =>
    E(
      "EXTEND_LEN",
      `extendLens[${i}]`,
      v,
      "must be > 0 (every request in a prefill batch extends by at least one token)",
    ),
  kErrNarrow: narrowed,
};

/** The PlanErr names RULES maps (test/plan-status.test.ts checks them against kernels-cuda's generated table). */
export const PLAN_ERR_RULE_NAMES: readonly string[] = Object.keys(RULES);

/** PlanStatus.code -> its PlanErr name (undefined for a code the header does not define, or 0). */
const NAME_OF_CODE: ReadonlyMap<number, Exclude<PlanErrName, "kErrNone">> = new Map(
  (Object.keys(RULES) as Exclude<PlanErrName, "kErrNone">[]).map((name) => [PLAN_ERR[name], name]),
);

/** kErrNarrow, an int64 length outside int32: toIntArray's refusal (seqLens in [0, max], extendLens any int32). */
function narrowed({ index: i, value: v, aux }: PlanStatus): PlannerError {
  const min = aux === 1 ? -INT32_MAX - 1 : 0;
  const field = `${aux === 1 ? "extendLens" : "seqLens"}[${i}]`;
  return E(v > INT32_MAX ? "INT32_OVERFLOW" : "INVALID_ARGUMENT", field, v, `must be in [${min}, ${INT32_MAX}]`);
}

/** kErrSlotOverflow: the legacy bound, or the ring slot at position `aux` (the record names no position otherwise). */
function slotOverflow({ value: rid, aux: p }: PlanStatus, g: StatusGeometry): PlannerError {
  if (g.legacy) {
    return E("INT32_OVERFLOW", "reqPoolIndices", rid, "legacy slot rid*ringSize + p%ringSize does not fit int32");
  }
  const r = g.ringSize;
  const slot = rid * r + (p % r);
  return E("INT32_OVERFLOW", "reqPoolIndices", rid, `request ring slot rid*${r}+p%${r} = ${slot} does not fit int32`);
}

/** The PlannerError a non-zero status stands for (the CPU planner's error for the same input). */
export function plannerErrorOf(st: PlanStatus, geometry: StatusGeometry): PlannerError {
  const name = NAME_OF_CODE.get(st.code);
  if (name) return RULES[name](st, geometry);
  return new PlannerError("INTERNAL", "status.code", st.code, "unknown GPU planner status code");
}
