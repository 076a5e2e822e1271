// The bf16 campaign of docs/reference/online-mtp.md §5.4: `simulate online-mtp` (CPU backend, bf16 state, 16
// requests, 200 steps) over D = 1..8 and seeds 8940..8968 (232 runs), every bank-0 row checked against the derived
// bound. Prints one line per run that fails, then a table per D and chunk position (measured max error vs bound).
// Usage (after `npx tsup`): node bench/bf16-campaign.mjs [firstD lastD [firstSeed lastSeed]]; ~20 min on one core.
import { CpuBackend, runSimulation } from "../dist/index.js";

const arg = (i, d) => (process.argv.length > i ? Number(process.argv[i]) : d);
const [firstD, lastD, firstSeed, lastSeed] = [arg(2, 1), arg(3, 8), arg(4, 8940), arg(5, 8968)];
const fmt = (x) => x.toExponential(2);
const ELEMENTS = ["max", "sum", "acc"];

function emptyCell() {
  return { rows: 0, err: {}, bound: {}, ratio: 0, relSum: 0, relSumBound: 0 };
}

function fold(cell, b) {
  cell.rows += b.rows;
  for (const e of ELEMENTS) {
    cell.err[e] = Math.max(cell.err[e] ?? 0, b.maxError[e]);
    cell.bound[e] = Math.max(cell.bound[e] ?? 0, b.maxBound[e]);
    cell.ratio = Math.max(cell.ratio, b.maxRatio[e]);
  }
  cell.relSum = Math.max(cell.relSum, b.maxRelSumError);
  cell.relSumBound = Math.max(cell.relSumBound, b.maxRelSumBound);
}

let runs = 0;
let failed = 0;
const table = [];
const perD = [];
for (let D = firstD; D <= lastD; D++) {
  const cells = new Map();
  let maxRoundings = 0;
  let maxUlps = 0;
  for (let seed = firstSeed; seed <= lastSeed; seed++) {
    const r = runSimulation({
      backend: new CpuBackend(),
      requests: 16,
      steps: 200,
      draftTokens: D,
      seed,
      stateDtype: "bf16",
    });
    runs++;
    if (!r.ok) {
      failed++;
      console.log(`FAIL D ${D} seed ${seed}: ${r.reason}`);
    }
    maxRoundings = Math.max(maxRoundings, r.bf16.maxRoundings);
    maxUlps = Math.max(maxUlps, r.bf16.maxRoundedUlps);
    for (const b of r.bf16.byPosition) {
      const key = `${b.firstPosition}-${b.lastPosition}`;
      if (!cells.has(key)) cells.set(key, emptyCell());
      fold(cells.get(key), b);
    }
  }
  for (const [key, c] of cells) table.push({ D, key, ...c });
  perD.push({ D, maxRoundings, maxUlps });
}
console.log(`${runs} runs, ${failed} failed`);
console.log(
  "| D | positions | rows | max: err | bound | sum: err | bound | sum rel: err | bound | acc: err | bound | err/bound |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of table) {
  const e = r.err;
  const b = r.bound;
  const cols = [e.max, b.max, e.sum, b.sum, r.relSum, r.relSumBound, e.acc, b.acc].map(fmt);
  console.log(`| ${r.D} | ${r.key} | ${r.rows} | ${cols.join(" | ")} | ${r.ratio.toFixed(3)} |`);
}
for (const r of perD) {
  console.log(
    `D ${r.D}: at most ${r.maxRoundings} stores per row; bank 0 within ${r.maxUlps} bf16 ulps of the rounded reference`,
  );
}
