// Same-run A/B of two bench.mjs JSON files (the same rows timed with two addons, DSV4KV_ADDON_PATH): one markdown
// row per benchmark row with both timings and after / before. Several files per side (interleaved runs A B A B)
// are reduced to the per-row median. Usage: node bench/compare.mjs before.json[,before2.json] after.json[,after2.json]
import { readFileSync } from "node:fs";

const [beforeArg, afterArg] = process.argv.slice(2);
if (!beforeArg || !afterArg) {
  console.error("usage: node bench/compare.mjs before.json[,more.json] after.json[,more.json]");
  process.exit(2);
}
// Files from runs without --variants: every row is a kernel's default launch, one per key.
const keyOf = (r) =>
  [r.op, `batch ${r.batch}`, `D ${r.D}`, r.graph ? "graph" : "eager", r.rotate > 1 ? "rotating" : "resident"]
    .concat(r.stateType ? ["bf16"] : [])
    .join(", ");
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Row key -> { us: one timing per file, split } for one side. */
function load(arg) {
  const runs = arg.split(",").map((f) => JSON.parse(readFileSync(f, "utf8")));
  const byKey = new Map();
  for (const run of runs) {
    const seen = new Map();
    for (const r of run.rows) {
      const k = keyOf(r);
      if (!seen.has(k)) seen.set(k, r);
    }
    for (const [k, r] of seen) {
      const e = byKey.get(k) ?? { us: [], split: r.split };
      e.us.push(r.usPerCall);
      byKey.set(k, e);
    }
  }
  return { runs, byKey };
}
const before = load(beforeArg),
  after = load(afterArg);
console.log(
  `Before: ${before.runs.map((r) => r.addon ?? "default addon").join(", ")}; after: ${after.runs.map((r) => r.addon ?? "default addon").join(", ")}.`,
);
console.log(
  `Copy bandwidth ${median(before.runs.map((r) => r.copyGBs)).toFixed(0)} / ${median(after.runs.map((r) => r.copyGBs)).toFixed(0)} GB/s; empty kernel ${median(before.runs.map((r) => r.emptyUs)).toFixed(2)} / ${median(after.runs.map((r) => r.emptyUs)).toFixed(2)} µs (before / after).`,
);
console.log("", "| row | before µs (split) | after µs (split) | after / before |", "|---|---|---|---|");
let worst = { ratio: 0, key: "" };
for (const [k, a] of after.byKey) {
  const b = before.byKey.get(k);
  if (!b) continue;
  const ub = median(b.us),
    ua = median(a.us);
  const ratio = ua / ub;
  if (ratio > worst.ratio) worst = { ratio, key: k };
  console.log(`| ${k} | ${ub.toFixed(2)} (${b.split}) | ${ua.toFixed(2)} (${a.split}) | ${ratio.toFixed(3)} |`);
}
console.log("", `Largest after / before: ${worst.ratio.toFixed(3)} (${worst.key}).`);
