/**
 * Plan cases: the JSON description of one planner call (what `dsv4-kv plan` reads), and the dispatch of a case to
 * a planning engine. The CPU engine is this package; @dsv4-kv/kernels-cuda provides a GPU engine with the same
 * signatures, so the case format and its validation live here once for both.
 */
import { planDecode, planDecodeLegacy, type DecodePlanOptions, type LegacyDecodePlanOptions } from "./decode.js";
import { PlannerError } from "./errors.js";
import type { ReqToToken } from "./inputs.js";
import {
  planPrefill,
  planPrefillLegacy,
  type LegacyPrefillPlanOptions,
  type PrefillPlan,
  type PrefillPlanOptions,
} from "./prefill.js";
import type { CompressPlanTable, DecodePlanTable, WritePlanTable } from "./records.js";

export type PlanCaseKind = "prefill" | "decode" | "prefill-legacy" | "decode-legacy";
export const PLAN_CASE_KINDS: readonly PlanCaseKind[] = ["prefill", "decode", "prefill-legacy", "decode-legacy"];

/** One planner call as JSON. Token maps default to upstream's test context (identity, 2,048 tokens per request). */
export interface PlanCase {
  kind: PlanCaseKind;
  compressRatio: number;
  ringSize?: number;
  swaPageSize?: number;
  useReqRing?: boolean;
  numQTokens?: number;
  useCudaGraph?: boolean;
  seqLens: number[];
  extendLens?: number[];
  reqPoolIndices?: number[];
  reqToToken?: number[][] | { identity: { tokensPerReq: number } };
  fullToState?: number[] | "identity";
  path?: "host" | "device";
}

/** The four planner entry points; `cpuPlanEngine` is this package, kernels-cuda's GPU engine has the same shape. */
export interface PlanEngine {
  planPrefill(options: PrefillPlanOptions): PrefillPlan;
  planDecode(options: DecodePlanOptions): DecodePlanTable;
  planPrefillLegacy(options: LegacyPrefillPlanOptions): PrefillPlan;
  planDecodeLegacy(options: LegacyDecodePlanOptions): DecodePlanTable;
}

export const cpuPlanEngine: PlanEngine = { planPrefill, planDecode, planPrefillLegacy, planDecodeLegacy };

/** The tables a case produced: prefill kinds give planC and planW, decode kinds planD. */
export interface PlanCaseTables {
  planC?: CompressPlanTable;
  planW?: WritePlanTable;
  planD?: DecodePlanTable;
}

function caseError(field: string, value: unknown, rule: string): PlannerError {
  return new PlannerError("INVALID_CASE", field, value, rule);
}

function intList(field: string, v: unknown): number[] {
  if (!Array.isArray(v)) throw caseError(field, v, "must be an array of integers");
  return v.map((x, i) => {
    if (typeof x !== "number" || !Number.isInteger(x)) throw caseError(`${field}[${i}]`, x, "must be an integer");
    return x;
  });
}

function reqToTokenOf(v: unknown): ReqToToken | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    const first: unknown = v[0];
    const stride = Array.isArray(first) ? first.length : 0;
    if (stride === 0) throw caseError("reqToToken", v, "must be a non-empty matrix (int[][])");
    const data = new Int32Array(v.length * stride);
    v.forEach((row: unknown, r) => {
      const ints = intList(`reqToToken[${r}]`, row);
      if (ints.length !== stride)
        throw caseError(
          `reqToToken[${r}].length`,
          ints.length,
          `every row must have ${stride} entries (rows are equally long)`,
        );
      data.set(ints, r * stride);
    });
    return { data, stride };
  }
  if (typeof v === "object" && v !== null && "identity" in v) return v as ReqToToken;
  throw caseError("reqToToken", v, 'must be an int[][] or {"identity": {"tokensPerReq": N}}');
}

/**
 * Plans one case with an engine (the CPU planner by default). Throws `PlannerError`: `INVALID_CASE` for a case
 * that is not of the format above, the planner's own codes for inputs the planner refuses.
 */
export function planCase(input: unknown, engine: PlanEngine = cpuPlanEngine): PlanCaseTables {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw caseError("case", input, "must be a JSON object");
  const c = input as PlanCase;
  if (!PLAN_CASE_KINDS.includes(c.kind))
    throw caseError("kind", c.kind, `must be one of ${PLAN_CASE_KINDS.join(", ")}`);
  const seqLens = intList("seqLens", c.seqLens);
  const reqPoolIndices = c.reqPoolIndices === undefined ? undefined : intList("reqPoolIndices", c.reqPoolIndices);
  const ring = {
    compressRatio: c.compressRatio,
    ringSize: c.ringSize as number,
    swaPageSize: c.swaPageSize as number,
    useReqRing: c.useReqRing ?? false,
  };
  const fullToState =
    c.fullToState === undefined || c.fullToState === "identity" ? c.fullToState : intList("fullToState", c.fullToState);
  const maps = { reqToToken: reqToTokenOf(c.reqToToken), fullToState };
  switch (c.kind) {
    case "prefill": {
      const extendLens = intList("extendLens", c.extendLens);
      const p = engine.planPrefill({
        ...ring,
        ...maps,
        seqLens,
        extendLens,
        reqPoolIndices,
        numQTokens: c.numQTokens,
        useCudaGraph: c.useCudaGraph,
        path: c.path,
      });
      return { planC: p.planC, planW: p.planW };
    }
    case "prefill-legacy": {
      const extendLens = intList("extendLens", c.extendLens);
      const p = engine.planPrefillLegacy({
        compressRatio: c.compressRatio,
        seqLens,
        extendLens,
        reqPoolIndices,
        numQTokens: c.numQTokens,
        useCudaGraph: c.useCudaGraph,
      });
      return { planC: p.planC, planW: p.planW };
    }
    case "decode":
      return { planD: engine.planDecode({ ...ring, ...maps, seqLens, reqPoolIndices }) };
    case "decode-legacy":
      return { planD: engine.planDecodeLegacy({ compressRatio: c.compressRatio, seqLens, reqPoolIndices }) };
  }
}
