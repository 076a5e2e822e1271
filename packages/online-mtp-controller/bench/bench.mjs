// Benchmarks of the online c128 MTP kernels on a CUDA GPU (CUDA events; eager back-to-back and CUDA-graph replay of
// `iters` calls; warm-up; median of `reps`). Usage: node bench/bench.mjs [out.json]. Prints a markdown table.
import { writeFileSync } from "node:fs";
import { createContext, onlineMtpNative, probeOnlineMtp } from "@dsv4-kv/kernels-cuda";

const p = probeOnlineMtp();
if (!p.ok) {
  console.error(`bench skipped: ${p.reason}`);
  process.exit(0);
}
const nat = onlineMtpNative();
const ctx = createContext(0);
const ITERS = 100, REPS = 25;
const rows = [];
const run = (op, batch, D, graph, rotate = 1, stateType = 0, extra = {}) => {
  const r = nat.bench(ctx, { op, batch, numVerify: D, stateType, graph, rotate, iters: ITERS, reps: REPS, ...extra });
  rows.push({ op, batch, D, graph, rotate, stateType, ...r });
  return r.usPerCall;
};
// bytes per writePrefix call (fp32): per request reads bank 0 (6 KiB when partial; ~6/7 of the cycled offsets),
// D·4 KiB inputs, D·2 KiB ape (shared, L2); writes D·6 KiB minus skipped boundary banks.
const wpBytes = (batch, D) => batch * (6144 * (6 / 7) + D * 4096 + D * 6144);
const copy = run("copy", 1, 1, 0, 1, 0, { copyBytes: 1 << 30 });
const copyGBs = (2 * (1 << 30)) / (copy * 1e-6) / 1e9;
const empty = run("empty", 1, 1, 1);
const md = [];
md.push(`Device: ${p.device?.name ?? "?"}; copy bandwidth (1 GiB D2D, read+write) ${copyGBs.toFixed(0)} GB/s; empty kernel (graph) ${empty.toFixed(2)} µs.`);
md.push("", "| kernel | batch | D | eager µs | graph µs | graph µs, rotating buffers (not L2-resident) | bytes/call | GB/s (rotating) |", "|---|---|---|---|---|---|---|---|");
for (const D of [1, 4, 8]) {
  for (const batch of [1, 2, 4, 8, 16, 32, 64, 128, 256]) {
    const e = run("writePrefix", batch, D, 0);
    const g = run("writePrefix", batch, D, 1);
    const rot = run("writePrefix", batch, D, 1, 64);
    const bytes = wpBytes(batch, D);
    md.push(`| writePrefix fp32 | ${batch} | ${D} | ${e.toFixed(2)} | ${g.toFixed(2)} | ${rot.toFixed(2)} | ${(bytes / 1024).toFixed(0)} KiB | ${(bytes / (rot * 1e-6) / 1e9).toFixed(0)} |`);
  }
}
for (const batch of [8, 256]) {
  const g = run("writePrefix", batch, 8, 1, 1, 1);
  md.push(`| writePrefix bf16 | ${batch} | 8 | ${run("writePrefix", batch, 8, 0, 1, 1).toFixed(2)} | ${g.toFixed(2)} | ${run("writePrefix", batch, 8, 1, 64, 1).toFixed(2)} | | |`);
}
for (const batch of [8, 256]) {
  for (const op of ["mark", "markUpstream", "commit", "commitMark"]) {
    md.push(`| ${op} | ${batch} | 8 | ${run(op, batch, 8, 0).toFixed(2)} | ${run(op, batch, 8, 1).toFixed(2)} | ${run(op, batch, 8, 1, 64).toFixed(2)} | ${op.startsWith("commit") ? ((batch * 12288) / 1024).toFixed(0) + " KiB" : ""} | |`);
  }
  md.push(`| online decode fp32 | ${batch} | 1 | ${run("decode", batch, 1, 0).toFixed(2)} | ${run("decode", batch, 1, 1).toFixed(2)} | ${run("decode", batch, 1, 1, 64).toFixed(2)} | ${((batch * (4096 + 12288)) / 1024).toFixed(0)} KiB | |`);
}
const text = md.join("\n");
console.log(text);
if (process.argv[2]) writeFileSync(process.argv[2], JSON.stringify({ rows, markdown: text }, null, 1));
