/**
 * The ring during one verify step (ring-model.ts, from the planner's write plans): one column per position, one
 * row per slot, each cell what the slot holds for that position after the verify; above, the write pad and the
 * positions the next compression reads. A needed position the ring lost is crossed, its slot highlighted.
 */
import * as Plot from "@observablehq/plot";
import type { RingCell, RingCellState, RingPicture } from "../ring-model.js";
import { el, emptyFigure, figure } from "../dom.js";

const STATES: readonly RingCellState[] = ["committed", "written", "rejected", "overwritten", "not-written"];
const STATE_LABEL: Record<RingCellState, string> = {
  committed: "committed (earlier batch)",
  written: "written by this batch, committed",
  rejected: "rejected draft (written by this batch)",
  overwritten: "overwritten by this batch",
  "not-written": "not in the ring",
};
const STATE_COLOUR: Record<RingCellState, string> = {
  committed: "#4c78a8",
  written: "#54a24b",
  rejected: "#f58518",
  overwritten: "#e45756",
  "not-written": "#eeeeee",
};
const PAD_ROW = "write pad";
const NEED_ROW = "next reads";

/** `picture`: the ring to draw, or why there is none. */
export function ringChart(picture: RingPicture | string): HTMLElement {
  const title = "The ring during one verify step";
  if (typeof picture === "string") return emptyFigure("chart-ring", title, picture);
  const p = picture;
  const slotRow = (slot: number) => `slot ${slot}`;
  const rows = [PAD_ROW, NEED_ROW, ...Array.from({ length: p.ringSize }, (_, i) => slotRow(i))];
  const positions = p.cells.map((c) => c.position);
  const clobbered = new Set(p.clobberedSlots);
  // The clobbered slot's whole row is tinted.
  const highlight = [...clobbered].flatMap((slot) => positions.map((position) => ({ position, slot })));
  const plot = Plot.plot({
    width: Math.min(1200, 140 + positions.length * 44),
    height: 60 + rows.length * 22,
    marginLeft: 80,
    marginBottom: 40,
    padding: 0.06,
    x: { label: "position →", domain: positions, tickFormat: (v: number) => (v % 2 === 0 ? String(v) : "") },
    y: { label: null, domain: rows },
    color: {
      domain: STATES.map((s) => STATE_LABEL[s]),
      range: STATES.map((s) => STATE_COLOUR[s]),
      legend: true,
    },
    marks: [
      Plot.cell(highlight, {
        x: "position",
        y: (c: { slot: number }) => slotRow(c.slot),
        fill: "#e45756",
        fillOpacity: 0.22,
        inset: -1,
      }),
      Plot.cell(p.cells, {
        x: "position",
        y: (c: RingCell) => slotRow(c.slot),
        fill: (c: RingCell) => STATE_LABEL[c.state],
        stroke: (c: RingCell) => (c.lost ? "#b00020" : "none"),
        strokeWidth: 2.5,
        title: (c: RingCell) =>
          `position ${c.position}, slot ${c.slot}: ${STATE_LABEL[c.state]}` +
          (c.heldBy !== null ? `; the slot holds ${c.heldBy}` : "") +
          (c.needed ? "; read by the next compression" : ""),
      }),
      ...[false, true].map((lost) =>
        Plot.text(
          // Numbers fit a cell up to about 64 columns; wider, only the lost cells keep theirs.
          p.cells.filter((c) => c.lost === lost && (lost || positions.length <= 64)),
          {
            x: "position",
            y: (c: RingCell) => slotRow(c.slot),
            text: label,
            fontSize: lost ? 10 : 9,
            fontWeight: lost ? "bold" : "normal",
            fill: (c: RingCell) => (c.state === "not-written" ? "#b00020" : "white"),
          },
        ),
      ),
      Plot.cell(
        p.cells.filter((c) => c.inPad),
        { x: "position", y: () => PAD_ROW, fill: "#9467bd" },
      ),
      Plot.cell(
        p.cells.filter((c) => c.needed),
        { x: "position", y: () => NEED_ROW, fill: (c: RingCell) => (c.lost ? "#b00020" : "#72b7b2") },
      ),
      Plot.text(
        p.cells.filter((c) => c.lost),
        { x: "position", y: () => NEED_ROW, text: () => "✗", fill: "white", fontSize: 13, fontWeight: "bold" },
      ),
    ],
  });
  return figure("chart-ring", title, plot, ringCaption(p));
}

/** A cell's text: its position; a lost cell reads "✗ 544", the position its slot holds instead. */
function label(c: RingCell): string {
  if (c.lost) return `✗ ${c.heldBy ?? ""}`;
  return c.state === "not-written" ? "" : String(c.position);
}

function ringCaption(p: RingPicture): Array<string | HTMLElement> {
  const serves = p.draftTokens <= p.writePad;
  const parts: Array<string | HTMLElement> = [
    `c${p.ratio} ring ${p.ringSize} (write pad ${p.writePad}, window ${p.window}, SWA page ${p.swaPageSize}), from ` +
      `the planner's write plans: prefill, ${p.ringSize} decodes to P = ${p.prefix}, verify D = ${p.draftTokens} at ` +
      `[${p.prefix}, ${p.seqLen}) (its plan writes from ${p.firstWrite}), accept ${p.accept}; the next compression ` +
      `at ${p.nextCompressAt} reads [${p.neededFrom}, ${p.nextPrefix}) from the ring. `,
    `Write pad: the last ${p.writePad} positions of the batch are always written; c${p.ratio} ring ${p.ringSize} ` +
      `serves at most ${p.writePad} draft tokens. `,
  ];
  const clobbered =
    p.clobberedSlots.length > 0 ? `slot ${p.clobberedSlots.join(", ")} is clobbered (highlighted); ` : "";
  const more = p.violations.length > 1 ? ` (and ${p.violations.length - 1} more)` : "";
  if (serves)
    parts.push(
      el(
        "span",
        { class: "ok" },
        `D = ${p.draftTokens} ≤ ${p.writePad}: every position the next compression reads is in the ring.`,
      ),
    );
  else
    parts.push(
      el(
        "span",
        { class: "bad", "data-clobbered-slots": p.clobberedSlots.join(",") },
        `D = ${p.draftTokens} > ${p.writePad}: ${clobbered}the residency simulator on the same batches: ` +
          `${p.violations[0] ?? "no violation"}${more}.`,
      ),
    );
  return parts;
}
