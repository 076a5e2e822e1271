// Host-loop planning benchmark (not a test): stage 0 of the TypeScript planner vs the same loop in C++ -O2,
// for 65,535 tokens on c4 ring 16. Builds the C++ baseline with g++ (or $CXX), runs both, prints a markdown
// table and writes bench/results.json. Run: pnpm --filter @dsv4-kv/planner bench
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { CompressPlanTable, WritePlanTable, planPrefill, writePad } from "../dist/index.js";
import { stage0Into } from "../dist/internal.js";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", ".cache");
mkdirSync(out, { recursive: true });
const exe = join(out, "host_loop_baseline");
const cxx = process.env.CXX ?? "g++";
execFileSync(cxx, ["-O2", "-std=c++17", "-o", exe, join(here, "host_loop_baseline.cpp")], { stdio: "inherit" });

function makeCase(name) {
  const seq = [];
  if (name === "c4-16x4095") {
    for (let i = 0; i < 16; i++) seq.push(4095);
    seq.push(15);
  } else {
    for (let i = 0; i < 1023; i++) seq.push(64);
    seq.push(63);
  }
  return { seqLens: Int32Array.from(seq), extendLens: Int32Array.from(seq), numQ: seq.reduce((a, b) => a + b, 0) };
}

function medianNsPerCall(fn, warm, samples, reps) {
  for (let i = 0; i < warm; i++) fn();
  const t = [];
  for (let s = 0; s < samples; s++) {
    const a = performance.now();
    for (let r = 0; r < reps; r++) fn();
    t.push(((performance.now() - a) * 1e6) / reps);
  }
  t.sort((x, y) => x - y);
  return t[t.length >> 1];
}

const pad = writePad(4, 16);
const rows = [];
for (const name of ["c4-16x4095", "c4-1024req"]) {
  const c = makeCase(name);
  const planC = CompressPlanTable.allocate(c.numQ);
  const planW = WritePlanTable.allocate(c.numQ);
  let sink = 0;
  const tsStage0 = medianNsPerCall(
    () => {
      const [nc, nw] = stage0Into(4, 256, pad, true, c.seqLens, c.extendLens, planC.signedWords, planW.signedWords);
      sink += nc + nw;
    },
    200,
    31,
    100,
  );
  const options = {
    compressRatio: 4,
    ringSize: 16,
    swaPageSize: 256,
    seqLens: c.seqLens,
    extendLens: c.extendLens,
    reqToToken: { identity: { tokensPerReq: 8192 } },
  };
  const tsFull = medianNsPerCall(() => (sink += planPrefill(options).numWrite), 50, 15, 20);
  const cpp = JSON.parse(execFileSync(exe, [name], { encoding: "utf8" }));
  rows.push({
    case: name,
    tokens: c.numQ,
    cppRows: cpp.rows,
    tsStage0NsPerToken: tsStage0 / c.numQ,
    cppSameLoopNsPerToken: cpp.rangesNsPerCall / c.numQ,
    cppPerTokenLoopNsPerToken: cpp.perTokenNsPerCall / c.numQ,
    ratioTsToCpp: tsStage0 / cpp.rangesNsPerCall,
    tsFullPlanNsPerToken: tsFull / c.numQ,
  });
  if (sink < 0) console.log(sink);
}
const meta = {
  date: new Date().toISOString().slice(0, 10),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  cxx,
  flags: "-O2 -std=c++17",
};
writeFileSync(join(out, "host-loop-results.json"), JSON.stringify({ meta, rows }, null, 2));
console.log(
  `host-loop planning, c4 ring 16, SWA page 256, pad ${pad}; ${meta.date}, ${meta.cpu} (${meta.cores} cores), node ${meta.node}, ${cxx} ${meta.flags}`,
);
console.log(
  "| case | tokens | TS stage 0 (ns/token) | C++ same loop (ns/token) | TS / C++ | C++ upstream per-token loop (ns/token) | TS full plan, stage 0+1 (ns/token) |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.case} | ${r.tokens} | ${r.tsStage0NsPerToken.toFixed(3)} | ${r.cppSameLoopNsPerToken.toFixed(3)} | ${r.ratioTsToCpp.toFixed(2)}x | ${r.cppPerTokenLoopNsPerToken.toFixed(3)} | ${r.tsFullPlanNsPerToken.toFixed(2)} |`,
  );
}
