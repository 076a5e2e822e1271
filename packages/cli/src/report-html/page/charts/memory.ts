/** Memory per pool: each pool's bytes (stage 0) and its share of the KV budget, with the unused bytes. */
import * as Plot from "@observablehq/plot";
import type { CheckReport } from "@dsv4-kv/server-config";
import { GIB, emptyFigure, figure, fmtGiB, fmtInt } from "../dom.js";

interface Bar {
  name: string;
  gib: number;
  label: string;
  kind: "pool" | "unused" | "over budget";
}

export function memoryChart(report: CheckReport): HTMLElement {
  const s = report.sizing;
  const title = "Memory per pool";
  if (!s) return emptyFigure("chart-memory", title, "No pools: the budget sizes none (see the errors).");
  const budget = s.availableBytes;
  const share = (bytes: number) => `${((100 * bytes) / budget).toFixed(1)}%`;
  const bars: Bar[] = s.stages[0]!.pools.map((p) => ({
    name: p.name,
    gib: p.totalBytes / GIB,
    label: `${fmtGiB(p.totalBytes)} · ${share(p.totalBytes)}`,
    kind: "pool",
  }));
  const unused = s.unusedBytes;
  bars.push({
    name: unused < 0 ? "over the budget" : "unused",
    gib: Math.abs(unused) / GIB,
    label: `${fmtInt(Math.abs(unused))} B · ${share(Math.abs(unused))}`,
    kind: unused < 0 ? "over budget" : "unused",
  });
  const plot = Plot.plot({
    marginLeft: 170,
    marginRight: 190,
    height: 36 + bars.length * 30,
    width: 900,
    x: { label: "GiB per worker →", grid: true },
    y: { label: null, domain: bars.map((b) => b.name) },
    color: { domain: ["pool", "unused", "over budget"], range: ["#4c78a8", "#bab0ac", "#e45756"], legend: false },
    marks: [
      Plot.barX(bars, { x: "gib", y: "name", fill: "kind", title: (b: Bar) => `${b.name}: ${b.label}` }),
      Plot.text(bars, { x: "gib", y: "name", text: "label", textAnchor: "start", dx: 6, fill: "currentColor" }),
      Plot.ruleX([0]),
    ],
  });
  return figure("chart-memory", title, plot, [
    `Allocated bytes of each KV pool per worker${s.stages.length > 1 ? " (pipeline stage 0)" : ""}, sizing ` +
      `${s.mode}, and each one's share of the KV budget of ${fmtInt(budget)} B (${fmtGiB(budget)}). `,
    unused < 0
      ? `The pools allocate ${fmtInt(-unused)} B more than the budget.`
      : `Unused: ${fmtInt(unused)} B (the budget less what the pools allocate).`,
  ]);
}
