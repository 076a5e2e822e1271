#!/usr/bin/env node
// Turns the timing.csv files of the same-run harness that times upstream SGLang's compress kernels beside ours
// (the bench-vs-sglang harness every checkout gets beside it, kept outside the repository; run on the GPU machine) into the markdown tables of docs/benchmarks.md: per
// row the bytes per call, upstream, ours and the copy kernel (graph and eager, the median of the runs given), the
// two ratios, each run's graph figures, and the row's target (compress rows: ours <= upstream; verify rows also
// ours <= 1.5 x the same-run copy).
//   node bench/vs-upstream-table.mjs run1/timing.csv run2/timing.csv [--variant NAME=DIR ...]
// With --variant, prints one more table: ours in each variant's run against the baseline's, row by row.
import { readFileSync } from "node:fs";

const COPY_FACTOR = 1.5;

/** One CSV line into fields (the harness quotes fields that hold commas). */
function splitCsv(line) {
  const out = [];
  let cur = "";
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === "," && !quoted) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Rows of one timing.csv as { key, kernel, case, impl, bytes, graphUs, eagerUs }. */
function readRun(file) {
  const [head, ...lines] = readFileSync(file, "utf8").trim().split("\n");
  const cols = splitCsv(head);
  const at = (f, name) => f[cols.indexOf(name)];
  return lines.map((line) => {
    const f = splitCsv(line);
    return {
      key: `${at(f, "kernel")}|${at(f, "case")}`,
      kernel: at(f, "kernel"),
      case: at(f, "case"),
      impl: at(f, "impl"),
      bytes: Number(at(f, "bytes_per_call")),
      graphUs: Number(at(f, "graph_us")),
      eagerUs: Number(at(f, "eager_us")),
    };
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Per row key: { kernel, case, bytes, byImpl: { impl: { graph: [per run], eager: [per run] } } }, in CSV order. */
function collect(files) {
  const rows = new Map();
  for (const file of files) {
    for (const r of readRun(file)) {
      if (!rows.has(r.key)) rows.set(r.key, { kernel: r.kernel, case: r.case, bytes: r.bytes, byImpl: {} });
      const byImpl = rows.get(r.key).byImpl;
      if (!byImpl[r.impl]) byImpl[r.impl] = { graph: [], eager: [] };
      const slot = byImpl[r.impl];
      slot.graph.push(r.graphUs);
      slot.eager.push(r.eagerUs);
    }
  }
  return rows;
}

const fmt = (x, digits = 2) => (x === undefined || Number.isNaN(x) ? "–" : x.toFixed(digits));
const isVerify = (row) => row.case.startsWith("verify");
const isL2Cold = (row) => row.case.includes("L2-cold");
const isPart = (row) => /only/.test(row.kernel);

/** The row's figures, or null when ours did not run (upstream-only kernels). */
function figures(row) {
  const { upstream, ours } = row.byImpl;
  const copy = row.byImpl["copy kernel"];
  if (!upstream || !ours || !copy) return null;
  const up = median(upstream.graph);
  const our = median(ours.graph);
  const cp = median(copy.graph);
  const ratioUp = our / up;
  const ratioCopy = our / cp;
  const meetsUp = our <= up;
  const meetsCopy = !isVerify(row) || ratioCopy <= COPY_FACTOR;
  return { up, our, cp, ratioUp, ratioCopy, meetsUp, meetsCopy, upstream, ours };
}

function mainTable(rows, onlyCold) {
  const out = [
    "| kernel | case | MB/call | upstream graph | ours graph | copy graph | ours / upstream | ours / copy | " +
      "upstream eager | ours eager | ours graph, run 1 / 2 | upstream graph, run 1 / 2 | target met |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
  ];
  for (const row of rows.values()) {
    if (isL2Cold(row) !== onlyCold || isPart(row)) continue;
    const f = figures(row);
    if (f === null) continue;
    const missed = [f.meetsUp ? null : "> upstream", f.meetsCopy ? null : `> ${COPY_FACTOR} × copy`].filter(Boolean);
    const met = missed.length === 0 ? "yes" : `no: ${missed.join(", ")}`;
    out.push(
      `| ${row.kernel} | ${row.case} | ${fmt(row.bytes / 1e6)} | ${fmt(f.up)} | ${fmt(f.our)} | ${fmt(f.cp)} | ` +
        `${fmt(f.ratioUp)} | ${fmt(f.ratioCopy)} | ${fmt(median(f.upstream.eager))} | ${fmt(median(f.ours.eager))} | ` +
        `${f.ours.graph.map((x) => fmt(x)).join(" / ")} | ${f.upstream.graph.map((x) => fmt(x)).join(" / ")} | ${met} |`,
    );
  }
  return out.join("\n");
}

function partsTable(rows) {
  const out = [
    "| part | case | MB/call | upstream graph | ours graph | copy graph | ours / upstream |",
    "|---|---|---:|---:|---:|---:|---:|",
  ];
  for (const row of rows.values()) {
    if (!isPart(row)) continue;
    const f = figures(row);
    if (f === null) continue;
    out.push(
      `| ${row.kernel} | ${row.case} | ${fmt(row.bytes / 1e6)} | ${fmt(f.up)} | ${fmt(f.our)} | ${fmt(f.cp)} | ` +
        `${fmt(f.ratioUp)} |`,
    );
  }
  return out.join("\n");
}

/** Ours per variant against the baseline, each from its own runs (the harness's own upstream column beside it). */
function variantTable(base, variants) {
  const names = Object.keys(variants);
  const out = [
    `| kernel | case | upstream | ours, baseline | ${names.map((n) => `ours, ${n}`).join(" | ")} |`,
    `|---|---|---:|---:|${names.map(() => "---:").join("|")}|`,
  ];
  for (const [key, row] of base) {
    const f = figures(row);
    if (f === null) continue;
    const cells = names.map((n) => {
      const v = variants[n].get(key);
      return v?.byImpl.ours ? fmt(median(v.byImpl.ours.graph)) : "–";
    });
    out.push(`| ${row.kernel} | ${row.case} | ${fmt(f.up)} | ${fmt(f.our)} | ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

function main(argv) {
  const files = [];
  const variants = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--variant") {
      const [name, ...dirs] = argv[++i].split("=");
      variants[name] = collect(
        dirs
          .join("=")
          .split(":")
          .map((d) => `${d}/timing.csv`),
      );
    } else files.push(argv[i]);
  }
  if (files.length === 0) {
    console.error("usage: vs-upstream-table.mjs RUN/timing.csv [...] [--variant NAME=DIR[:DIR] ...]");
    process.exit(2);
  }
  const rows = collect(files);
  console.log(`### L2-resident rows\n\n${mainTable(rows, false)}\n`);
  console.log(`### L2-cold rows\n\n${mainTable(rows, true)}\n`);
  console.log(`### Each kernel of a prefill call alone\n\n${partsTable(rows)}\n`);
  if (Object.keys(variants).length > 0) console.log(`### Variants\n\n${variantTable(rows, variants)}\n`);
}

main(process.argv.slice(2));
