/**
 * The check page: the verdict, the controls, the errors and warnings with their fixes, the charts and the resolved
 * arguments. Every change (a control, the URL fragment) reruns the CLI's check pipeline in the page and redraws.
 */
import { Dsv4KvError, ERROR_CODES, type ErrorCode } from "@dsv4-kv/errors";
import { type CheckReport, type ConfigIssue, RULES, type RuleId } from "@dsv4-kv/server-config";
import type { Values } from "../../check/launch.js";
import { runCheckPipeline } from "../../check/pipeline.js";
import { formatReport, resolvedArgumentRows, toJson } from "../../check/report.js";
import type { CheckPayload } from "../check-payload.js";
import { capacitySweep } from "./capacity-model.js";
import { capacityChart } from "./charts/capacity.js";
import { memoryChart } from "./charts/memory.js";
import { enginesSection } from "./engines-view.js";
import { residencyChart } from "./charts/residency.js";
import { ringChart } from "./charts/ring.js";
import { fragmentOf, parseFragment, pipelineInput } from "./check-state.js";
import { type Control, controlsFor } from "./controls.js";
import { el } from "./dom.js";
import { logSection } from "./log-view.js";
import { type RingPicture, ringPicture } from "./ring-model.js";

/** The highest draft-token count the capacity chart reruns the check for (at least this many, more when needed). */
const SWEEP_MIN_DRAFT_TOKENS = 16;

interface ViewState {
  overrides: Values;
  /** Refusals of the fragment's entries (shown; the entries are not applied). */
  fragmentErrors: Dsv4KvError[];
}

export function mountCheckView(root: HTMLElement, payload: CheckPayload): void {
  root.replaceChildren();
  const header = el("header", { class: "verdict-bar" });
  const alerts = el("div", { id: "alerts", role: "alert", "aria-live": "polite" });
  const form = el("form", { id: "controls", class: "controls", "aria-label": "Check settings" });
  const body = el("div", { id: "report-body" });
  root.append(header, alerts, form, body);
  const state: ViewState = { overrides: {}, fragmentErrors: [] };
  const controls = controlsFor(payload, (flag, value) => {
    if (value === undefined || same(value, payload.inputs.values[flag])) delete state.overrides[flag];
    else state.overrides[flag] = value;
    state.fragmentErrors = [];
    history.replaceState(null, "", `#${fragmentOf(state.overrides)}`);
    draw();
  });
  form.append(...controls.elements, resetButton());
  form.addEventListener("submit", (event) => event.preventDefault());

  const readFragment = () => {
    const read = parseFragment(location.hash.replace(/^#/, ""));
    state.overrides = read.overrides;
    state.fragmentErrors = read.errors;
  };
  window.addEventListener("hashchange", () => {
    readFragment();
    draw();
  });
  readFragment();
  draw();

  function resetButton(): HTMLElement {
    const button = el("button", { type: "button", id: "reset" }, "Back to the CLI's settings");
    button.addEventListener("click", () => {
      state.overrides = {};
      state.fragmentErrors = [];
      history.replaceState(null, "", location.pathname + location.search);
      draw();
    });
    return button;
  }

  function draw(): void {
    const errors: Dsv4KvError[] = [...state.fragmentErrors];
    let report: CheckReport;
    let overrides = state.overrides;
    let input: ReturnType<typeof pipelineInput>;
    try {
      // Inside the try: a --model override the check does not know is refused here.
      input = pipelineInput(payload, overrides);
      report = runCheckPipeline(input).report;
    } catch (error) {
      if (!Dsv4KvError.isInstance(error)) throw error;
      // The check refuses these settings: say why, and show the CLI's own settings rather than nothing.
      errors.push(error as Dsv4KvError);
      overrides = {};
      input = pipelineInput(payload, overrides);
      report = runCheckPipeline(input).report;
    }
    const changed = Object.keys(overrides).length > 0;
    header.replaceChildren(...verdictLine(report, payload, changed, overrides));
    const engines = enginesSection(input, report, errors);
    alerts.replaceChildren(...errors.map(errorBox));
    syncControls(controls.controls, report, payload, overrides);
    body.replaceChildren(
      issuesSection(report),
      memoryChart(report),
      ...engines,
      capacityChart(report, sweep(report, payload, overrides)),
      ringChart(pictureOf(report)),
      residencyChart(report),
      argumentsSection(report),
      ignoredSection(report),
      overriddenSection(report),
      logSection(payload, changed),
      terminalSection(report),
    );
  }
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function verdictLine(report: CheckReport, payload: CheckPayload, changed: boolean, overrides: Values): HTMLElement[] {
  // The terminal report's own verdict line.
  const text =
    formatReport(report)
      .split("\n")
      .find((line) => line.startsWith("Result: ")) ?? "";
  const { logComparison: _, sections: __, enginesComparison: ___, ...cliJson } = payload.report;
  const identical = !changed && same(toJson(report), cliJson);
  return [
    el("h1", {}, `dsv4-kv check: ${report.model.name}`),
    el("p", { id: "verdict", class: report.ok ? "verdict ok" : "verdict bad", "data-ok": String(report.ok) }, text),
    el(
      "p",
      { id: "provenance", class: "provenance" },
      changed
        ? `Recomputed in this page for ${Object.keys(overrides)
            .map((name) => `--${name}`)
            .join(", ")} (the URL holds these settings: share it to share this view).`
        : identical
          ? "Recomputed in this page with the CLI's inputs: identical to the report `dsv4-kv check` wrote."
          : "Recomputed in this page with the CLI's inputs: it DIFFERS from the report `dsv4-kv check` wrote " +
            "(a page from another version?).",
    ),
  ];
}

function errorBox(error: Dsv4KvError): HTMLElement {
  return el(
    "div",
    { class: "input-error", "data-code": error.code, "data-field": error.field },
    el("strong", {}, "Refused: "),
    error.message,
    el(
      "dl",
      {},
      el("dt", {}, "field"),
      el("dd", {}, error.field),
      el("dt", {}, "value"),
      el("dd", {}, error.value === undefined ? "(none)" : JSON.stringify(error.value)),
      el("dt", {}, "rule"),
      el("dd", {}, error.rule),
    ),
  );
}

function syncControls(controls: readonly Control[], report: CheckReport, payload: CheckPayload, overrides: Values) {
  for (const c of controls) c.show(overrides[c.flag] ?? payload.inputs.values[c.flag], report);
}

function sweep(report: CheckReport, payload: CheckPayload, overrides: Values) {
  if (!report.derived.isSpeculative) return [];
  const top = Math.max(SWEEP_MIN_DRAFT_TOKENS, Math.min(64, report.derived.maxDraftTokens + 2));
  return capacitySweep(pipelineInput(payload, overrides), top);
}

/** The ring to draw (c4, else c128), or why there is none. */
function pictureOf(report: CheckReport): RingPicture | string {
  const d = report.derived;
  if (!d.isSpeculative || d.speculativeAlgorithm == null)
    return "No speculative verify: the ring is written only by plain batches (write pad 0).";
  const draftTokens = d.maxDraftTokens;
  if (draftTokens < 1) return "No draft tokens per verify in this configuration (see the errors).";
  const ring =
    d.ringSizes.c4 != null
      ? ([4, d.ringSizes.c4] as const)
      : d.ringSizes.c128 != null && !d.onlineC128
        ? ([128, d.ringSizes.c128] as const)
        : null;
  if (ring === null) return "No compress-state ring with room for draft tokens in this configuration.";
  try {
    return ringPicture(ring[0], ring[1], d.effectivePageSize, draftTokens);
  } catch (error) {
    if (!Dsv4KvError.isInstance(error)) throw error;
    return `The planner refuses this verify on c${ring[0]} ring ${ring[1]}: ${(error as Dsv4KvError).message}`;
  }
}

function issuesSection(report: CheckReport): HTMLElement {
  const section = el("section", { id: "issues", "aria-labelledby": "issues-title" });
  const count = report.errors.length + report.warnings.length;
  section.append(el("h2", { id: "issues-title" }, count === 0 ? "Errors and warnings: none" : "Errors and warnings"));
  const list = el("ul", { class: "issues" });
  for (const issue of [...report.errors, ...report.warnings]) list.append(issueItem(issue));
  if (count > 0) section.append(list);
  return section;
}

function issueItem(issue: ConfigIssue): HTMLElement {
  const info = ERROR_CODES[issue.code as ErrorCode];
  const rule = RULES[issue.rule as RuleId];
  return el(
    "li",
    { class: `issue ${issue.severity}`, "data-rule": issue.rule },
    el("span", { class: "rule" }, issue.rule),
    el("span", { class: "severity" }, issue.severity),
    el("p", { class: "message" }, issue.message),
    rule ? el("p", { class: "summary" }, `Rule ${issue.rule}: ${rule.summary}`) : null,
    info ? el("p", { class: "fix" }, el("strong", {}, "Fix: "), info.fix, ` (code ${issue.code})`) : null,
  );
}

function argumentsSection(report: CheckReport): HTMLElement {
  const table = el(
    "table",
    { class: "args" },
    el("thead", {}, el("tr", {}, el("th", {}, "argument"), el("th", {}, "value"), el("th", {}, "what check did"))),
  );
  const tbody = el("tbody");
  for (const row of resolvedArgumentRows(report)) {
    const note = row.note;
    tbody.append(
      el(
        "tr",
        { class: note ? `note ${note.kind}` : "" },
        el("td", {}, row.name),
        el("td", {}, String(row.value)),
        el(
          "td",
          {},
          note ? `${note.kind}${note.from != null ? ` from ${String(note.from)}` : ""}: ${note.reason}` : "",
        ),
      ),
    );
  }
  table.append(tbody);
  return el(
    "section",
    { id: "arguments", "aria-labelledby": "arguments-title" },
    el("h2", { id: "arguments-title" }, "Resolved arguments"),
    el("p", {}, `Model: ${report.model.resolvedAs}. Rows with a note were defaulted or corrected by the check.`),
    table,
  );
}

function ignoredSection(report: CheckReport): HTMLElement | string {
  if (report.ignored.length === 0) return "";
  const list = el("ul");
  for (const i of report.ignored)
    list.append(
      el(
        "li",
        {},
        `${i.name}${i.value === true ? "" : ` ${JSON.stringify(i.value)}`}` +
          (i.effect === "unmodelled" ? " (NOT MODELLED: SGLang may change KV state with it)" : ""),
      ),
    );
  return el("section", { id: "ignored" }, el("h2", {}, "Accepted and not read"), list);
}

function overriddenSection(report: CheckReport): HTMLElement | string {
  if (!report.overridden?.length) return "";
  const place = (s: NonNullable<CheckReport["overridden"]>[number]["won"]) =>
    `${s.name} ${JSON.stringify(s.value)}${s.line === null ? "" : ` (line ${s.line})`}`;
  const list = el("ul");
  for (const o of report.overridden)
    list.append(el("li", {}, `${o.flag}: ${place(o.won)} wins over ${o.lost.map(place).join(", ")} (${o.rule})`));
  return el("section", { id: "overridden" }, el("h2", {}, "Given more than once: the one SGLang takes"), list);
}

function terminalSection(report: CheckReport): HTMLElement {
  return el(
    "section",
    { id: "terminal" },
    el("details", {}, el("summary", {}, "The terminal report"), el("pre", {}, formatReport(report))),
  );
}
