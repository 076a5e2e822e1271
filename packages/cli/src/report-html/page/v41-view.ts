/**
 * The DeepSeek-V4.1 check page: the verdict, the V4.1 rules' errors and the warnings, every pool a rank allocates
 * against what SGLang's configurator reserved for it, and the ratio-2 ring geometry per layer group (from the
 * config). The CLI computed it all (the payload); the page only draws, so it shows exactly the CLI's report.
 */
import * as Plot from "@observablehq/plot";
import type { V41Payload } from "../v41-payload.js";
import { GIB, el, emptyFigure, figure, fmtGiB, fmtInt } from "./dom.js";
import { logSection } from "./log-view.js";

interface PoolBar {
  pool: string;
  what: "allocated" | "reserved";
  gib: number;
  bytes: number;
}

function poolsChart(payload: V41Payload): HTMLElement {
  const s = payload.report.sizing;
  const title = "Memory per pool (DeepSeek-V4.1)";
  if (!s)
    return emptyFigure("chart-v41-pools", title, "No pools: the arguments or the budget size none (see the errors).");
  const bars: PoolBar[] = s.pools.flatMap((p) => [
    { pool: p.name, what: "allocated" as const, gib: p.totalBytes / GIB, bytes: p.totalBytes },
    { pool: p.name, what: "reserved" as const, gib: p.estimatedBytes / GIB, bytes: p.estimatedBytes },
  ]);
  const plot = Plot.plot({
    marginLeft: 190,
    height: 40 + s.pools.length * 2 * 24,
    width: 900,
    x: { label: "GiB per rank →", grid: true },
    y: { label: null, domain: s.pools.flatMap((p) => [`${p.name} (allocated)`, `${p.name} (reserved)`]) },
    color: { domain: ["allocated", "reserved"], range: ["#4c78a8", "#f58518"], legend: true },
    marks: [
      Plot.barX(bars, {
        x: "gib",
        y: (b: PoolBar) => `${b.pool} (${b.what})`,
        fill: "what",
        insetTop: 4,
        insetBottom: 4,
        title: (b: PoolBar) => `${b.pool}, ${b.what}: ${fmtInt(b.bytes)} B (${fmtGiB(b.bytes)})`,
      }),
      Plot.ruleX([0]),
    ],
  });
  const left = s.unusedBytes;
  return figure("chart-v41-pools", title, plot, [
    `Each pool a rank allocates (blue) against what SGLang's configurator reserved for it (orange), in GiB; ` +
      `${fmtInt(s.allocatedBytes)} B allocated in all. `,
    left < 0
      ? `The rank takes ${fmtInt(-left)} B more than the budget: it comes out of the memory outside the static pool.`
      : `Budget left: ${fmtInt(left)} B.`,
  ]);
}

function ringTable(payload: V41Payload): HTMLElement {
  const title = "Ring geometry per layer group (from the config)";
  const rows = payload.ringGroups.map((g) =>
    el(
      "tr",
      { "data-ratio": g.ratio },
      el("td", {}, `${g.firstLayer}–${g.lastLayer}`),
      el("td", {}, g.ratio),
      el("td", {}, g.source),
      el("td", {}, g.ratio === 2 ? g.ringSize : "— (no state)"),
      el("td", {}, g.ratio === 2 ? fmtInt(g.stateRows) : "—"),
    ),
  );
  const table = el(
    "table",
    { id: "v41-rings" },
    el(
      "thead",
      {},
      el("tr", {}, ...["layers", "ratio", "KV source", "ring R₂", "pair-state rows"].map((h) => el("th", {}, h))),
    ),
    el("tbody", {}, ...rows),
  );
  return figure("chart-v41-rings", title, table, [
    "Layers of one group read the compressed KV, index keys and pair state of their KV source. A ratio-2 source ",
    "keeps each request's pending (kv, score) pairs in a ring of R₂ rows: 2 without speculation, with DSpark the ",
    "smallest power of two at least 2 + the draft tokens. Ratio 1 keeps no state.",
  ]);
}

export function mountV41View(root: HTMLElement, payload: V41Payload): void {
  const r = payload.report;
  const verdict = r.ok ? "VALID" : "INVALID";
  root.replaceChildren(
    el(
      "header",
      { class: "verdict-bar" },
      el("h1", {}, `dsv4-kv check: ${r.model.name}`),
      el("p", { id: "verdict", class: r.ok ? "ok" : "bad" }, `Result: ${verdict} (${r.errors.length} errors)`),
    ),
    el(
      "section",
      { id: "issues" },
      ...r.errors.map((e) => el("p", { class: "error" }, e.rule ? `[${e.rule}] ${e.message}` : e.message)),
      ...r.warnings.map((w) => el("p", { class: "warning" }, w)),
    ),
    poolsChart(payload),
    ringTable(payload),
    logSection(payload, false),
  );
}
