/**
 * `dsv4-kv plan`: one case or a JSON array of cases in, the exact plan records out.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  PlannerError,
  cpuPlanEngine,
  planCase,
  type CompressPlanTable,
  type DecodePlanTable,
  type PlanCaseTables,
  type PlanEngine,
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

export type PlanCaseResult =
  | { planC: Row[]; planW: Row[]; planD: Row[]; bytes: { planC: string; planW: string; planD: string } }
  | { error: { code: string; message: string; field?: string } };

type Row = Record<string, number> | { invalid: true };

export type PlanEngineName = "cpu" | "gpu";

function rowsOf(t: CompressPlanTable | WritePlanTable | DecodePlanTable | undefined): Row[] {
  if (!t) return [];
  const rows: Row[] = [];
  for (let i = 0; i < t.rowCount; i++)
    rows.push(t.isInvalid(i) ? { invalid: true } : (t.row(i) as unknown as Record<string, number>));
  return rows;
}

export function renderTables(t: PlanCaseTables): PlanCaseResult {
  return {
    planC: rowsOf(t.planC),
    planW: rowsOf(t.planW),
    planD: rowsOf(t.planD),
    bytes: { planC: t.planC?.toHex() ?? "", planW: t.planW?.toHex() ?? "", planD: t.planD?.toHex() ?? "" },
  };
}

function errorResult(err: unknown): PlanCaseResult {
  if (err instanceof PlannerError) return { error: { code: err.code, message: err.message, field: err.field } };
  // kernels-cuda errors (GPU unavailable, CUDA failures) carry a code too.
  const e = err as { code?: unknown; message?: unknown };
  return {
    error: {
      code: typeof e.code === "string" ? e.code : "INTERNAL",
      message: typeof e.message === "string" ? e.message : String(err),
    },
  };
}

/** The GPU engine of @dsv4-kv/kernels-cuda, loaded only when asked for (the addon stays unloaded otherwise). */
async function loadGpuEngine(): Promise<PlanEngine> {
  const { createGpuPlanEngine } = await import("@dsv4-kv/kernels-cuda");
  return createGpuPlanEngine();
}

export async function runPlanCases(
  input: unknown,
  engineName: PlanEngineName = "cpu",
): Promise<{ results: PlanCaseResult[]; ok: boolean }> {
  const cases = Array.isArray(input) ? input : [input];
  const engine = engineName === "gpu" ? await loadGpuEngine() : cpuPlanEngine;
  const results: PlanCaseResult[] = [];
  for (const c of cases) {
    try {
      results.push(renderTables(planCase(c, engine)));
    } catch (err) {
      results.push(errorResult(err));
    }
  }
  return { results, ok: results.every((r) => !("error" in r)) };
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      input: { type: "string" },
      path: { type: "string", default: "cpu" },
      pretty: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.path !== "cpu" && values.path !== "gpu")
    throw new UsageError(`--path = ${JSON.stringify(values.path)}: must be cpu or gpu`);
  const text = values.input !== undefined ? readFileSync(values.input, "utf8") : await readAll(io.stdin);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    io.stdout.write(
      `${JSON.stringify({ error: { code: "INVALID_JSON", message: `input is not JSON: ${(err as Error).message}` } })}\n`,
    );
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
  for (const r of outcome.results)
    if ("error" in r) io.stderr.write(`dsv4-kv plan: ${r.error.code}: ${r.error.message}\n`);
  return outcome.ok ? 0 : 2;
}
