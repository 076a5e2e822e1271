/**
 * Plan cases: the JSON description of one planner call (what `dsv4-kv plan` reads), and the dispatch of a case to
 * a planning engine. The CPU engine is this package; @dsv4-kv/kernels-cuda provides a GPU engine with the same
 * signatures, so the case format and its validation live here once for both.
 */
import { planDecode, planDecodeLegacy, type DecodePlanOptions, type LegacyDecodePlanOptions } from "./decode.js";
import { closestMatch } from "@dsv4-kv/errors/internal";
import { z } from "zod";
import { PlannerError } from "./errors.js";
import type { ReqToToken } from "./inputs.js";
import {
  type PlannerPath,
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

/** Form only: types, integer-ness and which keys each kind takes. Ranges and rules are the planner's to check. */
const int = z.int();
const intList = z.array(int);
const ringFields = { ringSize: int, swaPageSize: int, useReqRing: z.boolean().optional() };
const mapFields = {
  reqToToken: z
    .union([z.array(z.array(z.int32())), z.strictObject({ identity: z.strictObject({ tokensPerReq: int }) })])
    .optional(),
  fullToState: z.union([z.array(z.int32()), z.literal("identity")]).optional(),
};
const batchFields = { compressRatio: int, seqLens: intList, reqPoolIndices: intList.optional() };
const prefillFields = { extendLens: intList, numQTokens: int.optional(), useCudaGraph: z.boolean().optional() };

const CASE_SCHEMAS = {
  prefill: z.strictObject({
    kind: z.literal("prefill"),
    ...batchFields,
    ...ringFields,
    ...mapFields,
    ...prefillFields,
    path: z.string().optional(),
  }),
  decode: z.strictObject({ kind: z.literal("decode"), ...batchFields, ...ringFields, ...mapFields }),
  "prefill-legacy": z.strictObject({ kind: z.literal("prefill-legacy"), ...batchFields, ...prefillFields }),
  "decode-legacy": z.strictObject({ kind: z.literal("decode-legacy"), ...batchFields }),
} as const;
const planCaseSchema = z.discriminatedUnion("kind", [
  CASE_SCHEMAS.prefill,
  CASE_SCHEMAS.decode,
  CASE_SCHEMAS["prefill-legacy"],
  CASE_SCHEMAS["decode-legacy"],
]);

/** Every key some kind takes: a key outside it is unknown, a key inside it but not in the case's kind misplaced. */
const ALL_CASE_KEYS = new Set(Object.values(CASE_SCHEMAS).flatMap((schema) => Object.keys(schema.shape)));

/** The rule for a value that matched no form of a union field. */
const UNION_RULES: Readonly<Record<string, string>> = {
  reqToToken: 'must be an int[][] or {"identity": {"tokensPerReq": N}}',
  fullToState: 'must be an int[] or "identity"',
};

const TYPE_RULES: Readonly<Record<string, string>> = {
  number: "must be a number",
  int: "must be an integer",
  int32: "must be an integer",
  boolean: "must be true or false",
  array: "must be an array",
  object: "must be an object",
  string: "must be a string",
};

const NUMERIC_TYPES: ReadonlySet<string> = new Set(["number", "int", "int32"]);

/** What a JSON value is, in words, for a type refusal: `1` is "a number", `"false"` "a string". */
function typeWord(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function article(expected: string): string {
  const word = expected === "int" || expected === "int32" ? "integer" : expected;
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

type PathKey = PropertyKey;

/** A field path as users write it: `seqLens[3]`, `reqToToken[1][2]`, `reqToToken.identity.tokensPerReq`. */
function fieldOf(path: readonly PathKey[]): string {
  let out = "";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`;
  return out === "" ? "case" : out;
}

function valueAt(input: unknown, path: readonly PathKey[]): unknown {
  let v = input;
  for (const key of path)
    v = typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

/** The issue to report for a union field: the form the value took (the branch that got past the top). */
function unionIssue(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue | null {
  for (const branch of issue.errors) {
    const first = branch.find((i) => i.code === "unrecognized_keys") ?? branch[0];
    if (first !== undefined && first.path.length > 0) {
      return { ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue;
    }
  }
  return null;
}

/** One zod issue as a PlannerError naming the field as the user wrote it. */
function issueError(input: unknown, kind: string, issue: z.core.$ZodIssue): PlannerError {
  const field = fieldOf(issue.path);
  const value = valueAt(input, issue.path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const key = issue.keys[0]!;
      const keyField = fieldOf([...issue.path, key]);
      const keyValue = valueAt(input, [...issue.path, key]);
      if (issue.path.length === 0 && ALL_CASE_KEYS.has(key)) {
        const schema = CASE_SCHEMAS[kind as PlanCaseKind];
        const takers = Object.entries(CASE_SCHEMAS)
          .filter(([, s]) => key in s.shape)
          .map(([k]) => k);
        return new PlannerError(
          "NOT_APPLICABLE",
          keyField,
          keyValue,
          `does not apply to a ${kind} case (only ${takers.join(", ")} cases take it); remove it`,
          { kind, keys: Object.keys(schema.shape) },
        );
      }
      const known = Object.keys(
        issue.path.length === 0 ? CASE_SCHEMAS[kind as PlanCaseKind].shape : (valueAt(input, issue.path) ?? {}),
      ).filter((k) => !issue.keys.includes(k));
      const suggestion = closestMatch(key, issue.path.length === 0 ? known : ["identity", "tokensPerReq"]);
      return new PlannerError(
        "UNKNOWN_KEY",
        keyField,
        keyValue,
        "is not a key of the plan case format",
        suggestion === null ? undefined : { suggestion },
      );
    }
    case "invalid_union": {
      if (issue.path.length === 1 && issue.path[0] === "kind" && "discriminator" in issue) {
        return new PlannerError("INVALID_CASE", "kind", value, `must be one of ${PLAN_CASE_KINDS.join(", ")}`);
      }
      const inner = unionIssue(issue);
      if (inner !== null) return issueError(input, kind, inner);
      return new PlannerError("INVALID_TYPE", field, value, UNION_RULES[field] ?? "has the wrong form");
    }
    case "invalid_type": {
      if (issue.path.length === 0) return new PlannerError("INVALID_CASE", "case", value, "must be a JSON object");
      if (value === undefined) return new PlannerError("INVALID_CASE", field, value, `is required in a ${kind} case`);
      if (typeof value === "number" && NUMERIC_TYPES.has(issue.expected)) {
        if (!Number.isFinite(value)) return new PlannerError("INVALID_CASE", field, value, "must be a finite number");
        return new PlannerError("INVALID_CASE", field, value, "must be an integer");
      }
      const rule = TYPE_RULES[issue.expected] ?? `must be ${issue.expected}`;
      return new PlannerError(
        "INVALID_TYPE",
        field,
        value,
        `${rule} (${typeWord(value)} is not ${article(issue.expected)})`,
      );
    }
    case "too_big":
    case "too_small":
      // int32 table entries (reqToToken, fullToState) or integers past 2^53: refused, never wrapped
      return new PlannerError(
        issue.origin === "number" ? "INT32_OVERFLOW" : "INVALID_CASE",
        field,
        value,
        issue.origin === "number" ? "must fit int32 (table entries are int32)" : "must be a safe integer (|v| < 2^53)",
      );
    case "invalid_value":
      return new PlannerError(
        "INVALID_CASE",
        field,
        value,
        UNION_RULES[field] ?? "has a value the format does not take",
      );
    default:
      return new PlannerError("INVALID_CASE", field, value, "does not match the plan case format");
  }
}

function caseError(field: string, value: unknown, rule: string): PlannerError {
  return new PlannerError("INVALID_CASE", field, value, rule);
}

function reqToTokenOf(v: number[][] | { identity: { tokensPerReq: number } } | undefined): ReqToToken | undefined {
  if (v === undefined || !Array.isArray(v)) return v;
  const stride = v[0]?.length ?? 0;
  if (stride === 0) throw caseError("reqToToken", v, "must be a non-empty matrix (int[][])");
  const data = new Int32Array(v.length * stride);
  v.forEach((row, r) => {
    if (row.length !== stride) {
      throw caseError(
        `reqToToken[${r}].length`,
        row.length,
        `every row must have ${stride} entries (rows are equally long)`,
      );
    }
    data.set(row, r * stride);
  });
  return { data, stride };
}

/** The case, checked against its kind's schema (form only; the planner then checks the values). */
function parseCase(input: unknown): z.infer<typeof planCaseSchema> {
  const result = planCaseSchema.safeParse(input);
  if (result.success) return result.data;
  const kind = (input as { kind?: unknown } | null)?.kind;
  // A misspelt key explains a missing one ("use_req_ring" for "useReqRing"): report unknown keys first.
  const issues = result.error.issues;
  const issue = issues.find((i) => i.code === "unrecognized_keys") ?? issues[0]!;
  throw issueError(input, typeof kind === "string" ? kind : "", issue);
}

/**
 * Plans one case with an engine (the CPU planner by default). Throws `PlannerError`: `INVALID_CASE` for a case
 * that is not of the format above, the planner's own codes for inputs the planner refuses.
 */
export function planCase(input: unknown, engine: PlanEngine = cpuPlanEngine): PlanCaseTables {
  const c = parseCase(input);
  const { compressRatio, seqLens, reqPoolIndices } = c;
  switch (c.kind) {
    case "prefill": {
      const { kind: _, reqToToken, ...options } = c;
      const p = engine.planPrefill({ ...options, reqToToken: reqToTokenOf(reqToToken), path: c.path as PlannerPath });
      return { planC: p.planC, planW: p.planW };
    }
    case "prefill-legacy": {
      const { kind: _, ...options } = c;
      const p = engine.planPrefillLegacy(options);
      return { planC: p.planC, planW: p.planW };
    }
    case "decode": {
      const { kind: _, reqToToken, ...options } = c;
      return { planD: engine.planDecode({ ...options, reqToToken: reqToTokenOf(reqToToken) }) };
    }
    case "decode-legacy":
      return { planD: engine.planDecodeLegacy({ compressRatio, seqLens, reqPoolIndices }) };
  }
}
