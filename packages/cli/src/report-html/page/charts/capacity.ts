/**
 * Capacity against the draft-token count, from one pipeline run per count: full tokens with the current rings and
 * with the advisor's c4 ring, the requests that fit at full context, and where the current rings stop serving.
 */
import * as Plot from "@observablehq/plot";
import type { CheckReport } from "@dsv4-kv/server-config";
import type { CapacityPoint } from "../capacity-model.js";
import { el, emptyFigure, figure, fmtInt } from "../dom.js";

interface Series {
  draftTokens: number;
  millions: number;
  series: string;
}

export function capacityChart(report: CheckReport, points: readonly CapacityPoint[]): HTMLElement {
  const title = "Capacity against the draft-token count";
  const d = report.derived;
  if (!d.isSpeculative)
    return emptyFigure(
      "chart-capacity",
      title,
      "No speculative algorithm: no draft tokens to vary (choose EAGLE or DSPARK above).",
    );
  const sized = points.filter((p) => p.tokens !== null);
  if (sized.length === 0)
    return emptyFigure("chart-capacity", title, "No draft-token count sizes any pools at this budget.");
  const limit = d.maxDraftTokensServed;
  const current = d.maxDraftTokens;
  const series: Series[] = [];
  for (const p of sized) {
    series.push({ draftTokens: p.draftTokens, millions: p.tokens! / 1e6, series: "current rings" });
    if (p.tokensAdvised !== null)
      series.push({ draftTokens: p.draftTokens, millions: p.tokensAdvised / 1e6, series: "advisor's c4 ring" });
  }
  const xDomain = [0.5, points[points.length - 1]!.draftTokens + 0.5];
  const markers = [
    ...(limit != null && limit < xDomain[1]!
      ? [
          Plot.ruleX([limit + 0.5], { stroke: "#e45756", strokeDasharray: "4,3" }),
          Plot.text([limit + 0.5], {
            x: (v: number) => v,
            frameAnchor: "top",
            text: () => `current rings serve ≤ ${limit}`,
            textAnchor: "start",
            dx: 4,
            dy: 4,
            fill: "#e45756",
          }),
        ]
      : []),
    Plot.ruleX([current], { stroke: "#222", strokeOpacity: 0.35, strokeWidth: 6 }),
  ];
  const tokens = Plot.plot({
    width: 900,
    height: 300,
    marginLeft: 60,
    marginTop: 40,
    x: { label: "draft tokens per verify (D) →", domain: xDomain, ticks: sized.map((p) => p.draftTokens) },
    y: { label: "↑ full tokens (millions)", grid: true, zero: true },
    color: { domain: ["current rings", "advisor's c4 ring"], range: ["#4c78a8", "#f58518"], legend: true },
    marks: [
      ...markers,
      Plot.line(series, { x: "draftTokens", y: "millions", stroke: "series", strokeWidth: 2 }),
      Plot.dot(series, {
        x: "draftTokens",
        y: "millions",
        fill: "series",
        r: 3.5,
        title: (s: Series) => `D=${s.draftTokens}: ${fmtInt(Math.round(s.millions * 1e6))} tokens (${s.series})`,
      }),
      Plot.text(sized, {
        x: "draftTokens",
        y: (p: CapacityPoint) => Math.max(p.tokens!, p.tokensAdvised ?? 0) / 1e6,
        text: (p: CapacityPoint) => (p.ringC4 == null ? "none" : String(p.ringC4)),
        dy: -12,
        fontSize: 10,
        fill: (p: CapacityPoint) => (p.currentServes ? "#555" : "#c0392b"),
      }),
    ],
  });
  const requests = Plot.plot({
    width: 900,
    height: 170,
    marginLeft: 60,
    x: { label: "draft tokens per verify (D) →", domain: xDomain, ticks: sized.map((p) => p.draftTokens) },
    y: { label: "↑ requests at full context", grid: true, zero: true },
    marks: [
      ...markers.slice(0, 1),
      Plot.rectY(sized, {
        x1: (p: CapacityPoint) => p.draftTokens - 0.35,
        x2: (p: CapacityPoint) => p.draftTokens + 0.35,
        y: "requestsAtFullContext",
        fill: (p: CapacityPoint) => (p.ok ? "#54a24b" : "#e45756"),
      }),
      Plot.ruleY([0]),
    ],
  });
  const c128 =
    d.ringSizes.c128 != null && !d.onlineC128
      ? ` The c128 ring ${d.ringSizes.c128} serves at most ${d.writePads.c128}.`
      : "";
  return figure("chart-capacity", title, el("div", {}, tokens, requests), [
    `The check rerun for D = 1 … ${points[points.length - 1]!.draftTokens}: full tokens (max_total_num_tokens, ` +
      "millions) with the current rings and with the ring the advisor names once they stop serving (numbers above " +
      "the points: the c4 ring each count needs; red: the current ring does not serve it). ",
    `Below: requests that fit with every request at the full context of ${fmtInt(d.contextLen)} tokens (capped by ` +
      "max running requests); green: the check is valid at that count. ",
    `The dashed line marks where the current rings stop serving (write pad: c4 ring ${d.ringSizes.c4 ?? "-"} ` +
      `serves at most ${d.writePads.c4 ?? "-"}).${c128} The grey band is this check's count (${current}).`,
  ]);
}
