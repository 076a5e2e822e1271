/**
 * `dsv4-kv plan`: one case or a JSON array of cases in, the exact plan records out.
 */
import { Dsv4KvError, type ErrorJson } from "@dsv4-kv/errors";
import { formatValue } from "@dsv4-kv/errors/internal";
import {
  cpuPlanEngine,
  planCase,
  type CompressPlanTable,
  type DecodePlanTable,
  type PlanCaseTables,
  type PlanEngine,
  type WritePlanTable,
} from "@dsv4-kv/planner";
import { type FlagTable, choice, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import { MAX_INPUT_DEPTH, readJsonInput } from "./input.js";
import type { CommandIO } from "./registry.js";
import { loadGpuPlanner } from "../gpu.js";

const FLAGS = {
  input: { type: "string", arg: "FILE", help: "read cases from FILE instead of stdin" },
  path: choice(["cpu", "gpu"], "plan with the TypeScript planner (cpu) or the CUDA planner (gpu)", "cpu"),
  pretty: { type: "bool", help: "indent the JSON" },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: ["[--input FILE] [--path cpu|gpu] [--pretty]"],
  description: `Reads one case, or a JSON array of cases, from --input FILE or stdin, and prints the plans as JSON.

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
  A bad case prints {"error": {"code", "field", "value", "rule", "params", "message"}} in its place.
  The case is checked as given: nothing is coerced ("false" is not false) and unknown keys are refused.

Input: at most 256 MiB, nested at most ${MAX_INPUT_DEPTH} levels deep.`,
  flags: FLAGS,
  exitCodes: [
    [0, "every case planned"],
    [2, "a case was refused or the input is not usable JSON"],
  ],
  more: `Example:
  echo '{"kind":"prefill","compressRatio":4,"ringSize":16,"swaPageSize":256,"seqLens":[518],"extendLens":[6]}' | dsv4-kv plan`,
};

export type PlanCaseResult =
  | { planC: Row[]; planW: Row[]; planD: Row[]; bytes: { planC: string; planW: string; planD: string } }
  | { error: ErrorJson | { code: string; message: string } };

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
  if (Dsv4KvError.isInstance(err)) return { error: err.toJSON() };
  const what = err instanceof Error ? `${err.name}: ${err.message}` : formatValue(err);
  return { error: { code: "INTERNAL", message: `internal error (${what.slice(0, 200)})` } };
}

/** The GPU engine of @dsv4-kv/planner/gpu, loaded only when asked for (the addon stays unloaded otherwise). */
async function loadGpuEngine(): Promise<PlanEngine> {
  const { createGpuPlanEngine } = await loadGpuPlanner("--path", "gpu");
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
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  let input: unknown;
  try {
    const source = values.input === undefined ? { field: "stdin" } : { field: "--input", path: values.input };
    input = await readJsonInput(source, io.stdin);
  } catch (err) {
    if (!Dsv4KvError.isInstance(err) || err.code !== "INPUT") throw err;
    io.stdout.write(`${JSON.stringify({ error: err.toJSON() })}\n`);
    io.stderr.write(`dsv4-kv plan: ${err.code}: ${err.message}\n`);
    return 2;
  }
  let outcome: { results: PlanCaseResult[]; ok: boolean };
  try {
    outcome = await runPlanCases(input, values.path ?? "cpu");
  } catch (err) {
    const result = errorResult(err);
    io.stdout.write(`${JSON.stringify(result)}\n`);
    if ("error" in result) io.stderr.write(`dsv4-kv plan: ${result.error.code}: ${result.error.message}\n`);
    return 2;
  }
  const out = Array.isArray(input) ? outcome.results : outcome.results[0];
  io.stdout.write(`${JSON.stringify(out, null, values.pretty ? 2 : undefined)}\n`);
  for (const r of outcome.results)
    if ("error" in r) io.stderr.write(`dsv4-kv plan: ${r.error.code}: ${r.error.message}\n`);
  return outcome.ok ? 0 : 2;
}
