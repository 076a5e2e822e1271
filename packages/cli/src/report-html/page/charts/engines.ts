/**
 * Memory per cache kind on both engines (`check --compare-engines`): SGLang's pools and vLLM's blocks at full load,
 * side by side for each kind, with vLLM's page-stride padding and each engine's unused budget.
 */
import * as Plot from "@observablehq/plot";
import type { EnginesComparison } from "@dsv4-kv/server-config";
import { GIB, emptyFigure, figure, fmtGiB, fmtInt } from "../dom.js";

const ENGINES = ["SGLang", "vLLM"] as const;

interface Bar {
  kind: string;
  engine: (typeof ENGINES)[number];
  gib: number;
  label: string;
}

/** One bar per kind and engine, then the padding and the unused budget. */
export function engineBars(c: EnginesComparison): Bar[] {
  const bar = (kind: string, engine: Bar["engine"], bytes: number, perToken: number | null): Bar => ({
    kind,
    engine,
    gib: bytes / GIB,
    label: `${engine} ${fmtGiB(bytes)}${perToken === null ? "" : ` · ${perToken.toFixed(2)} B/token`}`,
  });
  const bars = c.kinds.flatMap((k) => [
    bar(k.kind, "SGLang", k.sglang.bytes, k.sglang.bytesPerToken),
    bar(k.kind, "vLLM", k.vllm.bytes, k.vllm.bytesPerToken),
  ]);
  bars.push(bar("page stride", "SGLang", 0, null), bar("page stride", "vLLM", c.stridePaddingBytes, null));
  const unusedV = c.vllm.availableBytes - c.vllm.poolBytes;
  bars.push(bar("unused", "SGLang", Math.max(0, c.sglang.unusedBytes), null), bar("unused", "vLLM", unusedV, null));
  return bars;
}

export function enginesChart(c: EnginesComparison | null): HTMLElement {
  const title = "Memory per kind, SGLang and vLLM";
  if (!c) return emptyFigure("chart-engines", title, "No comparison for these settings: the alert above says why.");
  const bars = engineBars(c);
  const kinds = [...new Set(bars.map((b) => b.kind))];
  const plot = Plot.plot({
    marginLeft: 150,
    marginRight: 230,
    height: 40 + kinds.length * 44,
    width: 900,
    x: { label: "GiB per worker →", grid: true },
    // The kinds label the rows on the left; the colour (and each bar's text) names the engine.
    y: { axis: null, domain: ENGINES },
    fy: { label: null, domain: kinds, axis: "left" },
    color: { domain: ENGINES, range: ["#4c78a8", "#f58518"], legend: true },
    marks: [
      Plot.barX(bars, {
        x: "gib",
        y: "engine",
        fy: "kind",
        fill: "engine",
        title: (b: Bar) => `${b.engine} ${b.kind}: ${b.label}`,
      }),
      Plot.text(bars, {
        x: "gib",
        y: "engine",
        fy: "kind",
        text: "label",
        textAnchor: "start",
        dx: 6,
        fill: "currentColor",
      }),
      Plot.ruleX([0]),
    ],
  });
  const v = c.vllm;
  return figure("chart-engines", title, plot, [
    `Bytes of each cache kind per worker on SGLang (its pools: ${fmtInt(c.sglang.tokens)} tokens) and on vLLM ` +
      `(its blocks at full load: ${fmtInt(v.tokens)} tokens, concurrency ${v.maxConcurrency.toFixed(2)} at ` +
      `${fmtInt(c.mapping.contextLength)}), each with its bytes per token. `,
    `Budget: ${c.mapping.budget.text}. The causes of each difference are in the text report and the JSON.`,
  ]);
}
