/**
 * The `simulate residency --html` page: the command, the terminal's verdict word for word, and per ring its inputs,
 * the fault (or "no violation") in words, and the two charts of residency-charts.ts.
 */
import type { ResidencyFault, ResidencyPayload, ResidencyRingView } from "../residency-payload.js";
import { el } from "./dom.js";
import { batchesChart, ringChart } from "./residency-charts.js";

const STYLE = `
.rz-command { font-family: ui-monospace, monospace; background: #f4f4f4; padding: .5em .75em; overflow-x: auto; }
.rz-verdict { font-family: ui-monospace, monospace; white-space: pre-wrap; border-left: 4px solid #888;
  padding: .25em .75em; }
.rz-verdict.rz-bad { border-color: #d7191c; } .rz-verdict.rz-ok { border-color: #2e8b57; }
.rz-result-bad { color: #b00; font-weight: bold; } .rz-result-ok { color: #1a6b3a; font-weight: bold; }
.rz-inputs { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; margin: .5em 0 1em; }
.rz-inputs dt { color: #555; } .rz-inputs dd { margin: 0; }
.rz-fault { border: 2px solid #d7191c; background: #fff4f4; padding: .5em 1em; margin: 1em 0; }
.rz-fault strong.rz-slot { color: #d7191c; }
.rz-clean { border: 2px solid #2e8b57; background: #f2fbf5; padding: .5em 1em; margin: 1em 0; }
.rz-chart { margin: 1.5em 0; overflow-x: auto; }
`;

function verdictBlock(payload: ResidencyPayload): HTMLElement {
  const tone = payload.verdict.clean ? "ok" : "bad";
  return el(
    "section",
    { class: `rz-verdict rz-${tone}`, "aria-label": "verdict", id: "verdict" },
    ...payload.verdict.lines.map((line) => el("div", {}, line)),
    el("div", { class: `rz-result-${tone}` }, payload.verdict.result),
  );
}

function inputsList(view: ResidencyRingView): HTMLElement {
  const i = view.inputs;
  const rows: Array<[string, string]> = [
    ["compression ratio", `c${i.compressRatio}`],
    ["ring", `${i.ringSize} slots, ${i.compressRatio === 128 || i.useReqRing ? "request ring" : "one per SWA page"}`],
    ["SWA page", `${i.swaPageSize} tokens`],
    [
      "draft tokens",
      i.draftTokens === null
        ? "per batch (replay)"
        : `${i.adaptive ? "D in [1, " : "D = "}${i.draftTokens}${i.adaptive ? "]" : ""}`,
    ],
    ["write pad", `${i.writePad} (${i.padSource}): serves at most ${i.writePad} draft tokens`],
  ];
  if (i.replayFile !== null) rows.push(["replayed file", i.replayFile]);
  else rows.push(["steps, seed", `${i.steps} batches after the initial prefill, seed ${i.seed}`]);
  rows.push(["batches run", `${view.batchesRun}${view.verifies !== null ? `, ${view.verifies} verifies` : ""}`]);
  rows.push(["violations", String(view.violations)]);
  return el("dl", { class: "rz-inputs" }, ...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function faultBlock(fault: ResidencyFault): HTMLElement {
  const slot = el("strong", { class: "rz-slot", "data-fault-slot": String(fault.slot) }, `slot ${fault.slot}`);
  const held =
    fault.held === null
      ? "nothing (never written)"
      : `position ${fault.held.position}${fault.held.rejectedDraft ? " (a rejected draft)" : ""}, written by step ` +
        `${fault.held.writtenAtStep} (${fault.held.writtenBy})`;
  const write =
    fault.clobberedBy === null
      ? `none: step ${fault.committedAtStep} (${fault.committedBy}) committed position ${fault.position} without ` +
        "writing it to the ring"
      : `step ${fault.clobberedBy.step} (${fault.clobberedBy.batch}) wrote token position ` +
        `${fault.clobberedBy.position}` +
        `${fault.clobberedBy.rejectedDraft ? " (a rejected draft)" : ""} to slot ${fault.clobberedBy.slot}`;
  const facts: Array<[string, Node | string]> = [
    ["slot at fault", slot],
    [
      fault.kind === "never-written" ? "committed position lost" : "committed position destroyed",
      `${fault.position} (committed by step ${fault.committedAtStep}: ${fault.committedBy})`,
    ],
    ["clobbering write", write],
    ["what the slot held when read", held],
    ["read by", `step ${fault.step} (${fault.batch}), the compression at position ${fault.compressAt}`],
    ["kind", fault.kind],
  ];
  return el(
    "section",
    { class: "rz-fault", role: "alert", "aria-label": "first violation" },
    el("h3", {}, `First violation, at step ${fault.step}`),
    el("p", { class: "rz-summary" }, fault.summary),
    el("dl", { class: "rz-inputs" }, ...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
    el("p", {}, "The simulator's words: ", el("q", {}, fault.message)),
  );
}

function cleanBlock(view: ResidencyRingView): HTMLElement {
  return el(
    "section",
    { class: "rz-clean", "aria-label": "no violation" },
    el("p", {}, "No violation: every compression read the committed value of every position."),
    el("p", {}, `The last ${view.batches.length} batches of the run are drawn below.`),
  );
}

function ringSection(view: ResidencyRingView, width: number): HTMLElement {
  const section = el("section", { class: "rz-ring", "aria-label": view.label }, el("h2", {}, view.label));
  section.append(inputsList(view));
  if (view.fault !== null) section.append(faultBlock(view.fault));
  else if (view.violations > 0) section.append(el("p", {}, "The first violation lies outside the recorded window."));
  else section.append(cleanBlock(view));
  section.append(el("div", { class: "rz-chart rz-batches" }, batchesChart(view, width)));
  section.append(el("div", { class: "rz-chart rz-ring-slots" }, ringChart(view, width)));
  return section;
}

/** Draws the residency page into `root`. */
export function mountResidencyView(root: HTMLElement, payload: ResidencyPayload): void {
  const width = Math.max(640, Math.min(1200, root.clientWidth || 1200));
  root.replaceChildren(
    el("style", {}, STYLE),
    el("h1", {}, "Ring residency"),
    el("p", { class: "rz-command" }, payload.command),
    verdictBlock(payload),
    ...payload.rings.map((view) => ringSection(view, width)),
  );
}
