// The PlanErr enum of native/planner/plan_kernels.cuh as a TypeScript table (src/plan-err.ts), so the kernels' error
// codes have one source. `node scripts/plan-err.mjs` rewrites src/plan-err.ts; test/plan-err.test.ts fails when the
// file is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
export const HEADER = join(pkg, "native/planner/plan_kernels.cuh");
export const GENERATED = join(pkg, "src/plan-err.ts");

/** The enum's entries in order: name, value and the header's trailing comment. */
export function parsePlanErr(header) {
  const body = /enum PlanErr : int32_t \{([\s\S]*?)\n\};/.exec(header);
  if (!body) throw new Error("plan_kernels.cuh: no `enum PlanErr : int32_t { ... };`");
  const entries = [];
  for (const line of body[1].split("\n")) {
    const m = /^\s*(kErr\w+)\s*=\s*(\d+),?\s*(?:\/\/\s*(.*))?$/.exec(line);
    if (m) entries.push({ name: m[1], value: Number(m[2]), note: (m[3] ?? "").replace(/\s+/g, " ").trim() });
    else if (line.trim() !== "") throw new Error(`plan_kernels.cuh: unparsed PlanErr line: ${line.trim()}`);
  }
  return entries;
}

/** The text of src/plan-err.ts for a header. */
export function renderPlanErr(header) {
  const rows = parsePlanErr(header).map((e) => `  /** ${e.note || e.name} */\n  ${e.name}: ${e.value},`);
  return [
    "// Generated from native/planner/plan_kernels.cuh (enum PlanErr) by scripts/plan-err.mjs; do not edit.",
    "// test/plan-err.test.ts fails when this file is stale: run `node scripts/plan-err.mjs`.",
    "",
    "/** The planner kernels' status codes (PlanStatus.code), by their C++ names. */",
    "export const PLAN_ERR = {",
    ...rows,
    "} as const;",
    "",
    "export type PlanErrName = keyof typeof PLAN_ERR;",
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(GENERATED, renderPlanErr(readFileSync(HEADER, "utf8")));
  console.log(`wrote ${GENERATED}`);
}
