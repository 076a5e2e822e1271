/**
 * `dsv4-kv plan`: one case or a JSON array of cases in, the exact plan records out.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  PlannerError,
  planDecode,
  planDecodeLegacy,
  planPrefill,
  planPrefillLegacy,
  type CompressPlanTable,
  type DecodePlanTable,
  type FullToState,
  type ReqToToken,
  type WritePlanTable,
} from "@dsv4-kv/planner";
import { UsageError, readAll } from "./args.js";
import type { CommandIO } from "./registry.js";

export const help = `Usage: dsv4-kv plan [--input FILE] [--path cpu|gpu] [--pretty]

Reads one case, or a JSON array of cases, from --input FILE or stdin, and prints the plans as JSON.

A case:
  { "kind": "prefill" | "decode" | "prefill-legacy" | "decode-legacy",
    "compressRatio": 4 | 128, "ringSize": N, "swaPageSize": N, "useReqRing"?: bool,
    "numQTokens"?: N (default: sum of extendLens), "useCudaGraph"?: bool,
    "seqLens": [N...], "extendLens"?: [N...] (prefill kinds),
    "reqPoolIndices"?: [N...] (default 0..B-1),
    "reqToToken"?: [[N...]...] | {"identity": {"tokensPerReq": N}} (default identity, 2048 per request),
    "fullToState"?: [N...] | "identity" (default identity),
    "path"?: "host" | "device" (default host) }

Output per case:
  { "planC": [rows], "planW": [rows], "planD": [rows],
    "bytes": { "planC": hex, "planW": hex, "planD": hex } }
  rows: {seqLen, raggedId, bufferLen, readPage0, readPage1} | {raggedId, writeLoc} |
        {seqLen, writeLoc, readPage0, readPage1}, or {"invalid": true} for a padding row.
  A bad case prints {"error": {"code", "message"}} in its place.

Options:
  --input FILE   read cases from FILE instead of stdin
  --path cpu|gpu plan with the TypeScript planner (cpu, default) or the CUDA planner (gpu)
  --pretty       indent the JSON

Exit codes: 0 every case planned, 2 a case was refused or the input is not JSON.

Example:
  echo '{"kind":"prefill","compressRatio":4,"ringSize":16,"swaPageSize":256,"seqLens":[518],"extendLens":[6]}' | dsv4-kv plan
`;

export type PlanCaseKind = "prefill" | "decode" | "prefill-legacy" | "decode-legacy";

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

type Row = Record<string, number> | { invalid: true };

export type PlanCaseResult =
  | { planC: Row[]; planW: Row[]; planD: Row[]; bytes: { planC: string; planW: string; planD: string } }
  | { error: { code: string; message: string; field?: string } };

export type PlanEngine = "cpu" | "gpu";

/** The tables one case produced, before JSON rendering; the GPU engine (kernels-cuda) returns the same shape. */
export interface CaseTables {
  planC?: CompressPlanTable;
  planW?: WritePlanTable;
  planD?: DecodePlanTable;
}

class CaseError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const KINDS: readonly PlanCaseKind[] = ["prefill", "decode", "prefill-legacy", "decode-legacy"];

function intList(field: string, v: unknown): number[] {
  if (!Array.isArray(v)) throw new CaseError("INVALID_CASE", `${field} must be an array of integers`);
  return v.map((x, i) => {
    if (typeof x !== "number" || !Number.isInteger(x)) throw new CaseError("INVALID_CASE", `${field}[${i}] = ${JSON.stringify(x)}: must be an integer`);
    return x;
  });
}

function reqToTokenOf(v: PlanCase["reqToToken"]): ReqToToken | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    const stride = v[0]?.length ?? 0;
    if (v.length === 0 || stride === 0) throw new CaseError("INVALID_CASE", "reqToToken must be a non-empty matrix");
    const data = new Int32Array(v.length * stride);
    v.forEach((row, r) => {
      const ints = intList(`reqToToken[${r}]`, row);
      if (ints.length !== stride) throw new CaseError("INVALID_CASE", `reqToToken[${r}] has ${ints.length} entries: every row must have ${stride} (rows are equally long)`);
      data.set(ints, r * stride);
    });
    return { data, stride };
  }
  if (typeof v === "object" && v !== null && "identity" in v) return v;
  throw new CaseError("INVALID_CASE", 'reqToToken must be an int[][] or {"identity": {"tokensPerReq": N}}');
}

function fullToStateOf(v: PlanCase["fullToState"]): FullToState | undefined {
  if (v === undefined || v === "identity") return v;
  return intList("fullToState", v);
}

/** Plans one validated case with the TypeScript planner. */
export function planCaseTables(c: PlanCase): CaseTables {
  if (typeof c !== "object" || c === null || Array.isArray(c)) throw new CaseError("INVALID_CASE", "a case must be a JSON object");
  if (!KINDS.includes(c.kind)) throw new CaseError("INVALID_CASE", `kind = ${JSON.stringify(c.kind)}: must be one of ${KINDS.join(", ")}`);
  const seqLens = intList("seqLens", c.seqLens);
  const ring = { compressRatio: c.compressRatio, ringSize: c.ringSize as number, swaPageSize: c.swaPageSize as number, useReqRing: c.useReqRing ?? false };
  const maps = { reqToToken: reqToTokenOf(c.reqToToken), fullToState: fullToStateOf(c.fullToState) };
  const reqPoolIndices = c.reqPoolIndices === undefined ? undefined : intList("reqPoolIndices", c.reqPoolIndices);
  switch (c.kind) {
    case "prefill": {
      const p = planPrefill({ ...ring, ...maps, seqLens, extendLens: intList("extendLens", c.extendLens), reqPoolIndices, numQTokens: c.numQTokens, useCudaGraph: c.useCudaGraph, path: c.path });
      return { planC: p.planC, planW: p.planW };
    }
    case "prefill-legacy": {
      const p = planPrefillLegacy({ compressRatio: c.compressRatio, seqLens, extendLens: intList("extendLens", c.extendLens), reqPoolIndices, numQTokens: c.numQTokens, useCudaGraph: c.useCudaGraph });
      return { planC: p.planC, planW: p.planW };
    }
    case "decode":
      return { planD: planDecode({ ...ring, ...maps, seqLens, reqPoolIndices }) };
    case "decode-legacy":
      return { planD: planDecodeLegacy({ compressRatio: c.compressRatio, seqLens, reqPoolIndices }) };
  }
}

function rowsOf(t: CompressPlanTable | WritePlanTable | DecodePlanTable | undefined): Row[] {
  if (!t) return [];
  const rows: Row[] = [];
  for (let i = 0; i < t.rowCount; i++) rows.push(t.isInvalid(i) ? { invalid: true } : (t.row(i) as unknown as Record<string, number>));
  return rows;
}

export function renderTables(t: CaseTables): PlanCaseResult {
  return {
    planC: rowsOf(t.planC),
    planW: rowsOf(t.planW),
    planD: rowsOf(t.planD),
    bytes: { planC: t.planC?.toHex() ?? "", planW: t.planW?.toHex() ?? "", planD: t.planD?.toHex() ?? "" },
  };
}

function errorResult(err: unknown): PlanCaseResult {
  if (err instanceof PlannerError) return { error: { code: err.code, message: err.message, field: err.field } };
  if (err instanceof CaseError) return { error: { code: err.code, message: err.message } };
  // A GPU engine error (kernels-cuda) carries a code too.
  const e = err as { code?: unknown; message?: unknown };
  return { error: { code: typeof e.code === "string" ? e.code : "INTERNAL", message: typeof e.message === "string" ? e.message : String(err) } };
}

/**
 * The GPU engine: the CUDA planner of @dsv4-kv/kernels-cuda, loaded only when asked for. It must return the same
 * tables as `planCaseTables` (the agreement tests hold it to that).
 */
export type CaseTablePlanner = (c: PlanCase) => CaseTables | Promise<CaseTables>;

export async function loadGpuCasePlanner(): Promise<CaseTablePlanner> {
  const kernels = (await import("@dsv4-kv/kernels-cuda")) as Record<string, unknown>;
  const factory = kernels["createCasePlanner"];
  if (typeof factory !== "function") {
    throw new CaseError("GPU_UNAVAILABLE", "this build of @dsv4-kv/kernels-cuda has no GPU case planner (createCasePlanner)");
  }
  return (factory as (fallback: CaseTablePlanner) => CaseTablePlanner)(planCaseTables);
}

export async function runPlanCases(input: unknown, engine: PlanEngine = "cpu"): Promise<{ results: PlanCaseResult[]; ok: boolean }> {
  const cases = Array.isArray(input) ? input : [input];
  let planner: CaseTablePlanner = planCaseTables;
  if (engine === "gpu") planner = await loadGpuCasePlanner();
  const results: PlanCaseResult[] = [];
  for (const c of cases) {
    try {
      results.push(renderTables(await planner(c as PlanCase)));
    } catch (err) {
      results.push(errorResult(err));
    }
  }
  return { results, ok: results.every((r) => !("error" in r)) };
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { input: { type: "string" }, path: { type: "string", default: "cpu" }, pretty: { type: "boolean", default: false } },
    strict: true,
  });
  if (values.path !== "cpu" && values.path !== "gpu") throw new UsageError(`--path = ${JSON.stringify(values.path)}: must be cpu or gpu`);
  const text = values.input !== undefined ? readFileSync(values.input, "utf8") : await readAll(io.stdin);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    io.stdout.write(`${JSON.stringify({ error: { code: "INVALID_JSON", message: `input is not JSON: ${(err as Error).message}` } })}\n`);
    return 2;
  }
  let outcome: { results: PlanCaseResult[]; ok: boolean };
  try {
    outcome = await runPlanCases(input, values.path);
  } catch (err) {
    io.stdout.write(`${JSON.stringify(errorResult(err))}\n`);
    return 2;
  }
  const out = Array.isArray(input) ? outcome.results : outcome.results[0];
  io.stdout.write(`${JSON.stringify(out, null, values.pretty ? 2 : undefined)}\n`);
  for (const r of outcome.results) if ("error" in r) io.stderr.write(`dsv4-kv plan: ${r.error.code}: ${r.error.message}\n`);
  return outcome.ok ? 0 : 2;
}
