/**
 * The residency page's two charts (Observable Plot): the window's batches along the token positions, and the ring's
 * slots over those batches with the position each held. Both mark the fault: the lost committed position, the slot
 * the compression read it from, and the write that clobbered it.
 */
import * as Plot from "@observablehq/plot";
import type { ResidencyFault, ResidencyRingView, RingCell, WindowBatch } from "../residency-payload.js";

export const STATE_LABEL = {
  committed: "committed (a later window reads it)",
  retired: "committed, read by no later window",
  "rejected-draft": "rejected draft",
} as const;

const STATE_COLOUR = { committed: "#2e8b57", retired: "#c9d6cf", "rejected-draft": "#f0a030" } as const;
const FAULT = "#d7191c";
const READ = "#2b6cb0";

/** A batch's row or column name: its step and what it was. */
export function batchLabel(b: WindowBatch): string {
  if (b.kind === "verify") return `step ${b.step}: verify D=${b.tokens}, accept ${b.accept}`;
  if (b.kind === "prefill") return `step ${b.step}: prefill of ${b.tokens}`;
  if (b.kind === "decode") return `step ${b.step}: decode`;
  return `after step ${b.step}: radix resume to ${b.prefixAfter}`;
}

function shortLabel(b: WindowBatch): string {
  return b.kind === "radixResume" ? `${b.step} resume` : String(b.step);
}

/** The token positions worth drawing: what the ring held and what the batches wrote or committed. */
function positionDomain(view: ResidencyRingView): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = 0;
  for (const b of view.batches) {
    for (const c of b.cells) lo = Math.min(lo, c.position);
    for (const p of b.written) lo = Math.min(lo, p);
    hi = Math.max(hi, b.prefixBefore + b.tokens, b.prefixAfter);
  }
  if (view.fault !== null) lo = Math.min(lo, view.fault.position, view.fault.held?.position ?? lo);
  if (!Number.isFinite(lo)) lo = Math.max(0, hi - 32);
  return [lo, hi + 1];
}

const TICKS_AT_MOST = 32;

/** Contiguous runs of written positions, as [x1, x2) intervals. */
function writtenRuns(written: readonly number[]): Array<{ x1: number; x2: number }> {
  const runs: Array<{ x1: number; x2: number }> = [];
  for (const p of written) {
    const last = runs.at(-1);
    if (last !== undefined && last.x2 === p) last.x2 = p + 1;
    else runs.push({ x1: p, x2: p + 1 });
  }
  return runs;
}

/** Chart 1: each batch's tokens, what it committed, its rejected drafts and what it wrote to the ring. */
export function batchesChart(view: ResidencyRingView, width: number): HTMLElement | SVGSVGElement {
  const rows = view.batches.map(batchLabel);
  const bars = view.batches.flatMap((b) => {
    const row = batchLabel(b);
    const out = [{ row, x1: b.prefixBefore, x2: b.prefixBefore + b.accept, part: "committed by this batch" }];
    if (b.tokens > b.accept) {
      out.push({ row, x1: b.prefixBefore + b.accept, x2: b.prefixBefore + b.tokens, part: "rejected drafts" });
    }
    return b.kind === "radixResume" ? [] : out;
  });
  // ticks per written position while they can be told apart, else only the written runs (the line under a bar)
  const writes = view.batches.flatMap((b) =>
    b.written.length > TICKS_AT_MOST ? [] : b.written.map((p) => ({ row: batchLabel(b), x: p + 0.5 })),
  );
  const runs = view.batches.flatMap((b) => writtenRuns(b.written).map((r) => ({ row: batchLabel(b), ...r })));
  const resumes = view.batches
    .filter((b) => b.kind === "radixResume")
    .map((b) => ({ row: batchLabel(b), x: b.prefixAfter }));
  const fault = view.fault;
  const rowOf = (step: number) => {
    const b = view.batches.find((x) => x.step === step && x.kind !== "radixResume");
    return b === undefined ? null : batchLabel(b);
  };
  const faultRow = fault === null ? null : rowOf(fault.step);
  const lost = fault !== null && faultRow !== null ? [{ row: faultRow, x: fault.position + 0.5 }] : [];
  const reads = faultRow === null ? [] : fault!.reads.map((r) => ({ row: faultRow, x: r.position + 0.5 }));
  const causes = fault === null ? [] : causeMarks(fault, rowOf);
  const [lo, hi] = positionDomain(view);
  return Plot.plot({
    title: fault !== null ? "The batches before the fault" : "The run's last batches",
    subtitle: `${view.label}: one row per batch, oldest at the top`,
    caption:
      "Each bar is a batch's tokens at their positions: green the tokens it committed, orange the drafts it wrote " +
      "and lost. Black line under a bar (and ticks, for short batches): the positions its write plan put into the " +
      "ring. " +
      (fault !== null
        ? `Blue dots: the positions step ${fault.step}'s compression at position ${fault.compressAt} read from the ` +
          `ring; red circle: committed position ${fault.position}, whose value it did not find in slot ` +
          `${fault.slot}; red cross: ` +
          (fault.clobberedBy !== null
            ? "the write that clobbered it."
            : "where the committing batch left it unwritten.")
        : "No compression read a wrong value in these batches."),
    width,
    marginLeft: 260,
    height: 60 + rows.length * 34,
    x: { label: "token position →", domain: [lo, hi], grid: true },
    y: { label: null, domain: rows },
    color: {
      legend: true,
      domain: ["committed by this batch", "rejected drafts"],
      range: [STATE_COLOUR.committed, STATE_COLOUR["rejected-draft"]],
    },
    marks: [
      Plot.barX(bars, { x1: "x1", x2: "x2", y: "row", fill: "part", inset: 4, clip: true }),
      Plot.ruleY(runs, { x1: "x1", x2: "x2", y: "row", dy: 13, stroke: "black", strokeWidth: 2, clip: true }),
      Plot.tickX(writes, { x: "x", y: "row", stroke: "black", strokeWidth: 1.5, clip: true, inset: 2 }),
      Plot.dot(resumes, { x: "x", y: "row", symbol: "triangle", r: 6, fill: "#555", clip: true }),
      Plot.dot(reads, {
        x: "x",
        y: "row",
        r: 3,
        fill: READ,
        ariaLabel: () => "read from the ring",
        className: "rz-read-from-the-ring",
      }),
      Plot.dot(lost, {
        x: "x",
        y: "row",
        r: 7,
        stroke: FAULT,
        strokeWidth: 3,
        ariaLabel: () => "lost position",
        className: "rz-lost-position",
      }),
      Plot.text(lost, { x: "x", y: "row", text: () => `needs ${fault?.position}`, dy: -16, fill: FAULT }),
      Plot.dot(causes, {
        x: "x",
        y: "row",
        r: 7,
        symbol: "times",
        stroke: FAULT,
        strokeWidth: 3,
        ariaLabel: () => "cause",
        className: "rz-cause",
      }),
      Plot.text(causes, { x: "x", y: "row", text: "text", dy: -16, fill: FAULT }),
    ],
  });
}

/** Where the lost value went: the clobbering write's position, or the committed position its batch left unwritten. */
function causeMarks(fault: ResidencyFault, rowOf: (step: number) => string | null) {
  const c = fault.clobberedBy;
  const row = rowOf(c?.step ?? fault.committedAtStep);
  if (row === null) return [];
  if (c !== null) return [{ row, x: c.position + 0.5, text: `writes ${c.position} into slot ${c.slot}` }];
  return [{ row, x: fault.position + 0.5, text: `${fault.position} not written` }];
}

interface CellDatum extends RingCell {
  column: string;
  title: string;
}

/** Chart 2: what every drawn slot held after each batch, coloured by whether it is the committed value. */
export function ringChart(view: ResidencyRingView, width: number): HTMLElement | SVGSVGElement {
  const columns = view.batches.map(shortLabel);
  const cells: CellDatum[] = view.batches.flatMap((b) =>
    b.cells.map((c) => ({
      ...c,
      column: shortLabel(b),
      title:
        `slot ${c.slot} after ${batchLabel(b)}: position ${c.position} (${STATE_LABEL[c.state]}), ` +
        `written by step ${c.writtenAtStep}`,
    })),
  );
  const fault = view.fault;
  const marks: Plot.Markish[] = [
    Plot.cell(cells, {
      x: "column",
      y: "slot",
      fill: (d: CellDatum) => STATE_LABEL[d.state],
      inset: 1,
      title: "title",
    }),
    Plot.cell(
      cells.filter((c) => c.writtenNow),
      {
        x: "column",
        y: "slot",
        stroke: "black",
        strokeWidth: 1.5,
        inset: 2,
        ariaLabel: () => "written by this batch",
        className: "rz-written-by-this-batch",
      },
    ),
    Plot.text(cells, { x: "column", y: "slot", text: "position", fontSize: 10 }),
  ];
  if (fault !== null) marks.push(...faultMarks(view, columns));
  const heightPerSlot = view.slots.length > 32 ? 16 : 20;
  return Plot.plot({
    title: "The ring's slots over those batches",
    subtitle: `${view.label}: the position each slot holds after each batch`,
    caption:
      "A column is the ring after that batch (its compressions read the ring before its writes, so a batch reads " +
      "the column to its left). Outlined black: written by that batch. " +
      (fault === null
        ? "Every committed position a later window needs is in its slot."
        : `Blue: the slots step ${fault.step}'s compression read; red: slot ${fault.slot}, where it needed ` +
          `committed position ${fault.position}; ` +
          (fault.clobberedBy !== null
            ? `dashed: the write of position ${fault.clobberedBy.position} by step ${fault.clobberedBy.step} that ` +
              "clobbered it."
            : `dashed: step ${fault.committedAtStep}, which committed it without writing it to the ring.`)),
    width: Math.min(width, 140 + columns.length * 64),
    marginLeft: 70,
    height: 70 + view.slots.length * heightPerSlot,
    x: { label: "ring after batch (step) →", domain: columns, axis: "top" },
    y: { label: "ring slot ↓", domain: view.slots, tickFormat: (s: number) => `slot ${s}` },
    color: {
      legend: true,
      domain: Object.values(STATE_LABEL),
      range: [STATE_COLOUR.committed, STATE_COLOUR.retired, STATE_COLOUR["rejected-draft"]],
    },
    marks,
  });
}

/** The fault on the ring: the slot read (the column before the violating batch) and the write that caused it. */
function faultMarks(view: ResidencyRingView, columns: string[]): Plot.Markish[] {
  const fault = view.fault!;
  const at = view.batches.findIndex((b) => b.step === fault.step && b.kind !== "radixResume");
  const readColumn = columns[Math.max(at - 1, 0)]!;
  const causeStep = fault.clobberedBy?.step ?? fault.committedAtStep;
  const cause = view.batches.findIndex((b) => b.step === causeStep && b.kind !== "radixResume");
  const read = [{ column: readColumn, slot: fault.slot }];
  const reads = fault.reads.filter((r) => r.slot !== fault.slot).map((r) => ({ column: readColumn, slot: r.slot }));
  const marks: Plot.Markish[] = [
    Plot.cell(reads, {
      x: "column",
      y: "slot",
      stroke: READ,
      strokeWidth: 2,
      fill: "none",
      ariaLabel: () => "read",
      className: "rz-read",
    }),
    Plot.cell(read, {
      x: "column",
      y: "slot",
      stroke: FAULT,
      strokeWidth: 4,
      fill: "none",
      ariaLabel: () => "fault slot",
      className: "rz-fault-slot",
    }),
  ];
  if (cause >= 0) {
    marks.push(
      Plot.cell([{ column: columns[cause]!, slot: fault.slot }], {
        x: "column",
        y: "slot",
        stroke: FAULT,
        strokeWidth: 3,
        strokeDasharray: "4,3",
        fill: "none",
        inset: -3,
        ariaLabel: () => (fault.clobberedBy !== null ? "clobbering write" : "missed write"),
        className: fault.clobberedBy !== null ? "rz-clobbering-write" : "rz-missed-write",
      }),
    );
  }
  return marks;
}
