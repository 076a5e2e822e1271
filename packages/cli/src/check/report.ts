/** Human-readable and JSON renderings of a `CheckReport`. The JSON is the same content as the text. */
import {
  type CheckReport,
  type CheckReportJson,
  type ConfigNote,
  type FigureComparison,
  type LogComparison,
  checkReportJson,
  flagName,
} from "@dsv4-kv/server-config";
import { fmtBytes } from "@dsv4-kv/server-config/internal";
import { NO_PAINT, type Paint } from "../colour.js";

const GIB = 2 ** 30;
const n = (v: number): string => v.toLocaleString("en-US");
/** A note's field as the rows name it: its flag without the dashes (`tpSize` → `tp-size`). */
const rowName = (field: string): string => flagName(field).slice(2);

/** `--json`: the report with `schemaVersion`, as `@dsv4-kv/server-config/check-report.schema.json` describes it. */
export function toJson(report: CheckReport): CheckReportJson {
  return checkReportJson(report);
}

/** The text report; `paint` colours the verdict and the error and warning lines (a terminal's choice). */
export function formatReport(r: CheckReport, paint: Paint = NO_PAINT): string {
  const out: string[] = [];
  const d = r.derived;
  const L = d.layers;
  out.push(
    `dsv4-kv check: ${r.model.name} (${L.total} layers: ${L.ratio0} SWA-only, ${L.ratio4} c4, ${L.ratio128} c128)`,
  );
  if (r.model.resolvedAs !== `preset ${r.model.name}`) out.push(`Model: ${r.model.resolvedAs}`);
  out.push(
    `Result: ${r.ok ? paint.ok("VALID") : paint.bad("INVALID")} (${r.errors.length} error${r.errors.length === 1 ? "" : "s"}, ${r.warnings.length} warning${r.warnings.length === 1 ? "" : "s"})`,
  );

  out.push(
    ...argumentLines(r),
    ...ringLines(d),
    ...residencyLines(r),
    ...budgetLines(r.budget),
    ...(r.sizing ? poolLines(r.sizing) : []),
    ...adviceLines(r),
    ...issueLines(r, paint),
  );
  return `${out.join("\n")}\n`;
}

/** The resolved arguments: the table rows, then every other note. */
function argumentLines(r: CheckReport): string[] {
  const out: string[] = [];
  out.push("", "Resolved arguments");
  for (const row of resolvedArgumentRows(r)) {
    const { name, value, note } = row;
    const text = note ? `${note.kind}${note.from != null ? ` from ${String(note.from)}` : ""}: ${note.reason}` : "";
    out.push(
      row.table
        ? `  ${name.padEnd(34)} ${String(value).padEnd(12)}${note ? ` ${text}` : ""}`
        : `  ${name.padEnd(34)} ${String(value).padEnd(12)} ${text}`,
    );
  }
  return out;
}

/** Each ring, its write pad and whether it serves the draft tokens. */
function ringLines(d: CheckReport["derived"]): string[] {
  const out: string[] = [];
  out.push("", "Compress-state rings");
  for (const key of ["c4", "c128"] as const) {
    const ring = d.ringSizes[key];
    if (ring == null) {
      out.push(`  ${key.padEnd(5)} no layers`);
      continue;
    }
    const pad = d.writePads[key]!;
    const online = key === "c128" && d.onlineC128;
    const need = d.maxDraftTokens;
    const verdict = online
      ? `online (one row per request${d.onlineC128Mtp && need ? `, ${need} draft banks` : ""}): no draft limit from a ring`
      : !d.isSpeculative
        ? "no speculative verify"
        : need <= pad
          ? `needs ${need}: ok`
          : `needs ${need}: EXCEEDS`;
    out.push(
      `  ${key.padEnd(5)} ring ${String(ring).padEnd(4)} write pad ${String(pad).padEnd(4)} serves at most ${String(pad).padEnd(4)} draft tokens; ${verdict}`,
    );
  }
  if (d.maxDraftTokensServed != null)
    out.push(`  the configuration serves at most ${d.maxDraftTokensServed} draft tokens per verify`);
  return out;
}

/** The planner's ring simulator on the resolved rings, and each ring's proof. */
function residencyLines(r: CheckReport): string[] {
  const out: string[] = [];
  out.push("", "Residency check (the planner's ring simulator on the resolved rings)");
  for (const c of r.residency) {
    out.push(
      c.skipped
        ? `  c${c.ratio} ring ${c.ringSize}: skipped (${c.skipped})`
        : `  c${c.ratio} ring ${c.ringSize}, SWA page ${c.swaPageSize}, ${c.draftTokens} draft tokens${c.adaptive ? " (adaptive)" : ""}: ${c.steps} batches, ${c.verifies} verifies, ${c.violations} violations${c.violations ? ` — ${c.firstViolation}` : ""}`,
    );
    const p = c.proof;
    if (p)
      out.push(
        p.status === "proved"
          ? `    proof: every schedule of at most ${p.draftTokens} draft tokens is safe (${p.source}, ${p.states} canonical states)`
          : `    proof: ${p.status === "fails" ? `FAILS — ${p.detail}` : `not proved (${p.detail})`}; \`${p.command}\``,
      );
  }
  return out;
}

/** The KV budget per worker, and how it was computed from the GPU. */
function budgetLines(b: CheckReport["budget"]): string[] {
  const out: string[] = [];
  out.push("", "KV budget per worker");
  if (b.assumption) out.push(`  assumption: ${b.assumption}`);
  if (b.kind === "gpu") {
    out.push(
      `  free before load ${b.preFreeGiB!.toFixed(2)} GiB, after load ${b.postFreeGiB!.toFixed(2)} GiB, mem-fraction-static ${b.memFractionStatic}`,
    );
    out.push(
      `  rest = ${b.postFreeGiB!.toFixed(2)} − ${b.preFreeGiB!.toFixed(2)}·(1 − ${b.memFractionStatic}) = ${b.restGiB!.toFixed(2)} GiB; minimum viable fraction ${b.minimumViableMemFraction!.toFixed(5)}`,
    );
  }
  out.push(`  KV budget: ${b.availableBytes == null ? "none" : fmtBytes(b.availableBytes)}`);
  return out;
}

/** The pools (shape, bytes, what the estimate misses) and the capacity. */
function poolLines(s: NonNullable<CheckReport["sizing"]>): string[] {
  const out: string[] = [];
  out.push("", `Pools (sizing ${s.mode}${s.stages.length > 1 ? `, PP stage 0 of ${s.stages.length}` : ""})`);
  out.push(
    `  ${"pool".padEnd(22)} ${"layers".padStart(6)}  ${"shape per layer".padEnd(20)} ${"dtype".padEnd(8)} ${"allocated B".padStart(16)} ${"GiB".padStart(8)} ${"estimated B".padStart(16)} ${"unaccounted B".padStart(14)}`,
  );
  for (const p of s.stages[0]!.pools) {
    out.push(
      `  ${p.name.padEnd(22)} ${String(p.layers).padStart(6)}  ${`[${p.shapePerLayer.map(n).join(", ")}]`.padEnd(20)} ${p.dtype.padEnd(8)} ${n(p.totalBytes).padStart(16)} ${(p.totalBytes / GIB).toFixed(3).padStart(8)} ${n(Math.round(p.estimatedBytes)).padStart(16)} ${n(Math.round(p.unaccountedBytes)).padStart(14)}`,
    );
  }
  const bp = s.bytesPerFullToken;
  out.push(
    `  bytes per full token ${bp.total.toFixed(4)} (raw ${bp.raw.toFixed(4)} × draft factor ${bp.draftFactor.toFixed(6)}${s.mode === "exact" ? "; informational, exact mode sizes the pools themselves" : ""}); fixed c128 state ${n(s.fixedBytes)} B`,
  );
  out.push("", "Capacity");
  out.push(`  full tokens (max_total_num_tokens) ${n(s.sizes.maxTotalNumTokens)}`);
  out.push(
    `  SWA tokens ${n(s.sizes.swaTokens)}, c4 entries ${n(s.sizes.c4Size)}, c128 entries ${n(s.sizes.c128Size)}, c4 state rows ${n(s.sizes.c4StatePoolSize)}, c128 state size ${n(s.sizes.c128StatePoolSize)}`,
  );
  out.push(
    `  max running requests ${n(s.maxRunningRequests)} (request slots ${n(s.numReqSlots)}); ${n(Math.floor(s.sizes.maxTotalNumTokens / Math.max(s.maxRunningRequests, 1)))} tokens per request at full load`,
  );
  if (s.stages.length > 1)
    out.push(
      `  per-stage capacity: ${s.stages.map((st) => n(st.stageCapacityTokens)).join(", ")} (the minimum is used)`,
    );
  out.push(
    `  allocated ${fmtBytes(s.allocatedBytes)} of ${fmtBytes(s.availableBytes)}; unused ${n(s.unusedBytes)} B${s.unusedBytes < 0 ? " (OVER the budget)" : ""}`,
  );
  return out;
}

/** The ring-sizing advisor: rings that would serve the draft tokens. */
function adviceLines(r: CheckReport): string[] {
  const out: string[] = [];
  if (r.advice.length) {
    out.push("", "Ring-sizing advisor");
    for (const a of r.advice) {
      if (a.currentServes) continue;
      out.push(
        a.ringSize == null
          ? `  c${a.ratio}: ${a.reason}`
          : `  c${a.ratio}: ring ${a.ringSize} (write pad ${a.writePad}) serves ${a.draftTokens} draft tokens (current ${a.currentRingSize} serves ${a.currentWritePad})${a.stateBytesAdvised != null ? `; c${a.ratio} state ${fmtBytes(a.stateBytesCurrent!)} → ${fmtBytes(a.stateBytesAdvised)}; capacity ${n(a.capacityTokensCurrent!)} → ${n(a.capacityTokensAdvised!)} tokens` : ""}`,
      );
    }
  }
  return out;
}

/** Every error and warning, by rule. */
function issueLines(r: CheckReport, paint: Paint): string[] {
  const out: string[] = [];
  if (r.errors.length) {
    out.push("", "Errors");
    for (const e of r.errors) out.push(paint.bad(`  [${e.rule}] ${e.message}`));
  }
  if (r.warnings.length) {
    out.push("", "Warnings");
    for (const w of r.warnings) out.push(paint.warn(`  [${w.rule}] ${w.message}`));
  }
  return out;
}

/** A resolved argument as the report lists it: the table's rows, then every other note. */
export interface ResolvedArgumentRow {
  name: string;
  value: unknown;
  note: ConfigNote | undefined;
  /** One of the fixed rows (false: a note on a flag the table does not list). */
  table: boolean;
}

/** The "Resolved arguments" section as data (the text report and the HTML page both list it). */
export function resolvedArgumentRows(r: CheckReport): ResolvedArgumentRow[] {
  const d = r.derived;
  const rows: Array<[string, unknown]> = [
    ["page-size", d.effectivePageSize],
    ["attention-backend", "dsv4"],
    ["swa-full-tokens-ratio", d.swaRatio],
    ["max-running-requests", r.args.maxRunningRequests ?? d.mrrPerWorker * d.attnDpSize],
    ["kv-cache-dtype", d.kvCacheDtype],
    ["mem-fraction-static", r.budget.memFractionStatic ?? "(not used: --kv-budget-bytes)"],
    ["context-length", d.contextLen],
    ["speculative-algorithm", d.speculativeAlgorithm ?? r.args.speculativeAlgorithm ?? "none"],
    ["speculative-num-steps", d.speculativeNumSteps ?? "-"],
    ["speculative-eagle-topk", d.speculativeEagleTopk ?? "-"],
    ["speculative-num-draft-tokens", d.isSpeculative ? d.draftTokens : "-"],
    ["max-speculative-num-draft-tokens", d.isSpeculative ? d.maxDraftTokens : "-"],
    ["tp-size", r.args.tpSize],
    ["pp-size / attention-dp", `${r.args.ppSize} / ${d.attnDpSize}`],
    ["online-compress / online-c128-mtp", `${d.onlineC128} / ${d.onlineC128Mtp}`],
    ["compress-state-dtype", `${r.args.compressStateDtype} (${d.stateDtypeBytes} B)`],
    ["hisparse ratio", d.hisparseRatio],
  ];
  const out: ResolvedArgumentRow[] = rows.map(([name, value]) => ({
    name,
    value,
    note: r.notes.find((x) => rowName(x.field) === name),
    table: true,
  }));
  for (const note of r.notes) {
    if (rows.some(([name]) => name === rowName(note.field))) continue;
    out.push({ name: rowName(note.field), value: note.to, note, table: false });
  }
  return out;
}

/**
 * True when the section has nothing to reconcile (a launch only), or its generation is modelled and no compared
 * figure differs (inputs, cut values and figures with nothing to compute them from are not differences).
 */
export function logComparisonOk(c: LogComparison): boolean {
  if (c.nothingToReconcile !== undefined) return true;
  return c.generation !== "unknown" && c.figures.every((f) => f.match !== false);
}

function verdictOf(f: FigureComparison, paint: Paint): string {
  if (f.role === "input") return "input";
  if (f.role === "truncated") return paint.bad("cut");
  if (f.role === "not-computed") return paint.bad("not computed");
  return f.match ? paint.ok("yes") : paint.bad("NO");
}

function figureTable(c: LogComparison, paint: Paint): string[] {
  const rank = (f: FigureComparison) => f.rank ?? "-";
  const w = {
    name: Math.max(6, ...c.figures.map((f) => f.name.length)),
    rank: Math.max(4, ...c.figures.map((f) => rank(f).length)),
    logged: Math.max(6, ...c.figures.map((f) => f.logged.length)),
    computed: Math.max(8, ...c.figures.map((f) => (f.computed ?? "-").length)),
  };
  const row = (name: string, r: string, logged: string, computed: string, match: string) =>
    `  ${name.padEnd(w.name)}  ${r.padEnd(w.rank)}  ${logged.padStart(w.logged)}  ` +
    `${computed.padStart(w.computed)}  ${match}`;
  return [
    row("figure", "rank", "logged", "computed", "match"),
    ...c.figures.map((f) => row(f.name, rank(f), f.logged, f.computed ?? "-", verdictOf(f, paint))),
  ];
}

/** `--against-log`: one section's figures against ours, the generation and platform with their evidence, causes. */
export function formatLogComparison(
  c: LogComparison,
  path: string,
  summary: readonly string[],
  paint: Paint = NO_PAINT,
): string {
  const out: string[] = ["", `Against the log ${path} (section ${c.section}, lines ${c.firstLine}-${c.lastLine})`];
  for (const line of summary) out.push(`  ${line}`);
  out.push(`  platform: ${c.platform}`);
  for (const e of c.platformEvidence) out.push(`    evidence: ${e}`);
  if (c.nothingToReconcile !== undefined) {
    out.push(`  ${c.nothingToReconcile}`);
    out.push(...skippedLines(c));
    return `${out.join("\n")}\n`;
  }
  out.push(
    `  configurator generation: ${c.generation === "unknown" ? paint.bad("unknown (not modelled)") : c.generation}`,
  );
  for (const e of c.evidence) out.push(`    evidence: ${e}`);
  out.push(...figureTable(c, paint));
  const differing = c.figures.filter((f) => f.match === false);
  if (differing.length > 0) {
    out.push("  differences and their causes:");
    for (const f of differing) {
      const where = `${f.name}${f.rank ? ` (${f.rank})` : ""}, line ${f.line}`;
      out.push(`    ${where}: logged ${f.logged}, ours ${f.computed}; ${f.why ?? ""}`);
      if (f.cause) out.push(`      cause: ${f.cause.explained ? "" : "unexplained: "}${f.cause.text}`);
    }
  }
  const notes = new Map<string, string[]>();
  for (const f of c.figures.filter((x) => x.role === "input" || x.role === "not-computed")) {
    const key = `${f.name}: ${f.why ?? ""}`;
    notes.set(key, [...(notes.get(key) ?? []), f.rank ?? "-"]);
  }
  if (notes.size > 0) {
    out.push("  inputs and figures not computed:");
    for (const [key, ranks] of notes) out.push(`    ${key} (${ranks.join(", ")})`);
  }
  if (c.truncated.length > 0) {
    out.push("  cut in the log (not compared):");
    for (const t of c.truncated) out.push(`    line ${t.line}: ${t.name} ${t.logged}: ${t.reason}`);
  }
  out.push(...skippedLines(c));
  for (const r of c.rulesNotApplied ?? []) out.push(`  rule ${r.rule} not applied: ${r.reason}`);
  const compared = c.figures.filter((f) => f.role === "compared").length;
  out.push(
    differing.length === 0 && c.generation !== "unknown"
      ? `  ${paint.ok(`every compared figure matches (${compared})`)}`
      : `  ${paint.bad(`${differing.length} of ${compared} compared figure(s) differ`)}`,
  );
  return `${out.join("\n")}\n`;
}

function skippedLines(c: LogComparison): string[] {
  if (c.skipped.length === 0) return [];
  return ["  lines skipped:", ...c.skipped.map((s) => `    line ${s.line}: ${s.reason}: ${JSON.stringify(s.text)}`)];
}
