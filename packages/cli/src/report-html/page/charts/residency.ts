/** The report's residency run per ring (batches, verifies, violations) and the proof's verdict. */
import * as Plot from "@observablehq/plot";
import type { CheckReport } from "@dsv4-kv/server-config";
import { el, figure, fmtInt } from "../dom.js";

interface Bar {
  ring: string;
  measure: "batches" | "verifies" | "violations";
  count: number;
}

export function residencyChart(report: CheckReport): HTMLElement {
  const title = "Residency run and proof";
  const ran = report.residency.filter((c) => !c.skipped);
  const bars: Bar[] = ran.flatMap((c) => {
    const ring = `c${c.ratio} ring ${c.ringSize}`;
    return [
      { ring, measure: "batches", count: c.steps },
      { ring, measure: "verifies", count: c.verifies },
      { ring, measure: "violations", count: c.violations },
    ] as Bar[];
  });
  const drawing =
    bars.length === 0
      ? el("p", { class: "empty" }, "No residency run (no speculative verify, or no ring to run).")
      : Plot.plot({
          width: 900,
          height: 60 + ran.length * 90,
          marginLeft: 90,
          marginRight: 60,
          x: { label: "count →", grid: true },
          y: { label: null, domain: ["batches", "verifies", "violations"] },
          fy: { label: null, domain: ran.map((c) => `c${c.ratio} ring ${c.ringSize}`) },
          color: { domain: ["batches", "verifies", "violations"], range: ["#4c78a8", "#72b7b2", "#e45756"] },
          marks: [
            Plot.barX(bars, { x: "count", y: "measure", fy: "ring", fill: "measure" }),
            Plot.text(bars, {
              x: "count",
              y: "measure",
              fy: "ring",
              text: (b: Bar) => fmtInt(b.count),
              textAnchor: "start",
              dx: 4,
            }),
            Plot.ruleX([0]),
          ],
        });
  const list = el("ul", { class: "proofs" });
  for (const c of report.residency) {
    const ring = `c${c.ratio} ring ${c.ringSize}`;
    if (c.skipped) {
      list.append(el("li", {}, `${ring}: skipped (${c.skipped})`));
      continue;
    }
    const run =
      `${c.draftTokens} draft tokens${c.adaptive ? " (adaptive)" : ""}: ${fmtInt(c.steps)} batches, ` +
      `${fmtInt(c.verifies)} verifies, ${fmtInt(c.violations)} violations` +
      (c.violations ? ` — ${c.firstViolation}` : "");
    const p = c.proof;
    const proof = !p
      ? "no proof"
      : p.status === "proved"
        ? `proof: every schedule of at most ${p.draftTokens} draft tokens is safe (${p.source}, ` +
          `${p.states} canonical states)`
        : `proof: ${p.status === "fails" ? `FAILS — ${p.detail}` : `not proved (${p.detail})`}; run \`${p.command}\``;
    const good = c.violations === 0 && p?.status === "proved";
    list.append(
      el(
        "li",
        { class: good ? "ok" : c.violations > 0 || p?.status === "fails" ? "bad" : "" },
        `${ring}, ${run}. `,
        el("strong", {}, proof),
      ),
    );
  }
  return figure("chart-residency", title, el("div", {}, drawing, list), [
    "The planner's ring simulator on the resolved rings (seeded random prefills, decodes, radix resumes and " +
      "verifies; every ring read must return the committed value) and the residency proof for every schedule (the " +
      "shipped proof table, or a proof run now for small rings).",
  ]);
}
