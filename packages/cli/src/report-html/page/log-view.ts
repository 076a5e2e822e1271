/**
 * The page's "Against the log" part (`check --html` with `--against-log`): the section reconciled, its generation
 * and platform with their evidence, every figure (logged, ours, role, cause), the lines the log cut or that were
 * skipped, and every section of the file with its verdict (`--section N` writes the page for another one).
 */
import type { FigureComparison, LogComparison } from "@dsv4-kv/server-config";
import { el } from "./dom.js";

/** What the log part reads of a page's payload: the V4 check page's and the V4.1 page's both carry it. */
export interface LogPagePayload {
  report: {
    logComparison?: LogComparison;
    sections?: readonly { section: number; ok: boolean; logComparison: LogComparison }[];
  };
}

const verdict = (f: FigureComparison) =>
  f.role === "input"
    ? "input"
    : f.role === "truncated"
      ? "cut"
      : f.role === "not-computed"
        ? "not computed"
        : f.match
          ? "yes"
          : "NO";

function figureTable(c: LogComparison): HTMLElement {
  const head = ["figure", "rank", "line", "logged", "ours", "match", "from the log's", "cause or note"];
  const body = el("tbody");
  for (const f of c.figures)
    body.append(
      el(
        "tr",
        { class: `figure ${f.role}${f.match === false ? " differs" : ""}`, "data-figure": f.name },
        el("td", {}, f.name),
        el("td", {}, f.rank ?? "-"),
        el("td", {}, f.line ?? "-"),
        el("td", {}, f.logged),
        el("td", {}, f.computed ?? "-"),
        el("td", {}, verdict(f)),
        el("td", {}, f.derivedFrom.join(", ") || "-"),
        el("td", {}, f.cause ? `${f.cause.explained ? "" : "unexplained: "}${f.cause.text}` : (f.why ?? "")),
      ),
    );
  return el("table", { class: "figures" }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))), body);
}

function listOf(id: string, title: string, items: string[]): HTMLElement | string {
  if (items.length === 0) return "";
  return el("section", { id }, el("h3", {}, title), el("ul", {}, ...items.map((i) => el("li", {}, i))));
}

function sectionsList(payload: LogPagePayload, current: number): HTMLElement | string {
  const sections = payload.report.sections ?? [];
  if (sections.length < 2) return "";
  const items = sections.map((s) => {
    const c = s.logComparison;
    const differ = c.figures.filter((f) => f.match === false).length;
    const what = c.nothingToReconcile
      ? "launch checked, nothing to reconcile"
      : `${c.generation} on ${c.platform}, ${differ} differ`;
    const mark = s.section === current ? " (this page)" : "";
    const where = `section ${s.section}, lines ${c.firstLine}-${c.lastLine} (${c.startedBy})`;
    return `${where}: ${s.ok ? "ok" : "NOT ok"}: ${what}${mark}`;
  });
  return el(
    "section",
    { id: "log-sections" },
    el("h3", {}, "Sections of the log"),
    el("p", {}, "Each server start in the file is checked on its own; --section N writes the page for section N."),
    el("ul", {}, ...items.map((i) => el("li", {}, i))),
  );
}

export function logSection(payload: LogPagePayload, changed: boolean): HTMLElement | string {
  const c = payload.report.logComparison;
  if (!c) return "";
  const differ = c.figures.filter((f) => f.match === false).length;
  const compared = c.figures.filter((f) => f.role === "compared").length;
  const summary = c.nothingToReconcile
    ? c.nothingToReconcile
    : `Configurator generation ${c.generation} on ${c.platform}; ` +
      (differ === 0
        ? `every compared figure matches (${compared})`
        : `${differ} of ${compared} compared figure(s) differ`) +
      `${changed ? " (for the CLI's settings, not the ones changed here)" : ""}.`;
  return el(
    "section",
    { id: "log", "data-section": c.section },
    el("h2", {}, `Against the log: section ${c.section} (lines ${c.firstLine}-${c.lastLine})`),
    el("p", { class: "log-summary" }, summary),
    listOf("log-evidence", "Evidence", [...c.platformEvidence.map((e) => `platform: ${e}`), ...c.evidence]),
    c.figures.length > 0 ? figureTable(c) : "",
    listOf(
      "log-truncated",
      "Cut in the log (not compared)",
      c.truncated.map((t) => `line ${t.line}: ${t.name} ${t.logged}: ${t.reason}`),
    ),
    listOf(
      "log-skipped",
      "Lines skipped",
      c.skipped.map((s) => `line ${s.line}: ${s.reason}: “${s.text}”`),
    ),
    listOf(
      "log-rules",
      "Rules not applied to this log",
      (c.rulesNotApplied ?? []).map((r) => `${r.rule}: ${r.reason}`),
    ),
    sectionsList(payload, c.section),
  );
}
