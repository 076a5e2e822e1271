// Benchmarks of the online c128 MTP kernels on a CUDA GPU (CUDA events; eager back-to-back and CUDA-graph replay of
// `iters` calls; warm-up; median of `reps`). Usage: node bench/bench.mjs [out.json] [--variants]
// Prints markdown tables: the issue's rows with each kernel's default variant, and with --variants every kernel
// variant / split side by side (graph replay), so one run on the GPU machine picks the best. It runs on the bench
// build (`pnpm --filter @dsv4-kv/kernels-cuda build:native:bench`); --variants needs the bench build with the
// benchmark-only shapes (`build:native:bench:variants`, CMake option DSV4KV_BENCH_VARIANTS=ON; docs/decisions.md D23);
// without them only the default shape's splits are swept. DSV4KV_ADDON_PATH picks the bench build, so two builds can
// be timed in one session and their JSON files compared with bench/compare.mjs.
import { writeFileSync } from "node:fs";
import { createContext, probeOnlineMtp } from "@dsv4-kv/kernels-cuda";
import { COMMIT_VARIANT, WRITE_PREFIX_VARIANT, useBenchAddon } from "@dsv4-kv/kernels-cuda/internal";
import { requireGpu } from "@dsv4-kv/kernels-cuda/testing";

const bench = useBenchAddon();
if (!bench.addon) {
  console.error(`bench: ${bench.reason}`);
  process.exit(1);
}
const nat = bench.addon.onlineMtp;
const p = probeOnlineMtp();
requireGpu(p);
const args = process.argv.slice(2);
const outPath = args.find((a) => !a.startsWith("--"));
const withVariants = args.includes("--variants");
const ctx = createContext(0);
const ITERS = 100,
  REPS = 25;
const rows = [];
const run = (op, batch, D, graph, rotate = 1, stateType = 0, extra = {}) => {
  const r = nat.bench(ctx, { op, batch, numVerify: D, stateType, graph, rotate, iters: ITERS, reps: REPS, ...extra });
  rows.push({ op, batch, D, graph, rotate, stateType, ...extra, ...r });
  return r;
};
const us = (r) => r.usPerCall.toFixed(2);
// Bytes per writePrefix call (fp32), counted as the fewest a kernel must move: per request bank 0 (6 KiB) when the
// window starts inside a chunk (6 of the 7 cycled offsets), D input rows of 4 KiB, D bank rows of 6 KiB written
// (the boundary skips are ignored: < 2%); ape (D·2 KiB per request, 256 KiB distinct, L2-resident) excluded.
const wpBytes = (batch, D) => batch * (6144 * (6 / 7) + D * 4096 + D * 6144);
const copy = run("copy", 1, 1, 0, 1, 0, { copyBytes: 1 << 30 }).usPerCall;
const copyGBs = (2 * (1 << 30)) / (copy * 1e-6) / 1e9;
const empty = run("empty", 1, 1, 1).usPerCall;
const floor = (bytes) => empty + bytes / (copyGBs * 1e3); // µs: empty kernel + bytes at the copy bandwidth
const md = [];
md.push(
  `Device: ${p.device?.name ?? "?"}; copy bandwidth (1 GiB D2D, read+write) ${copyGBs.toFixed(0)} GB/s; empty kernel (graph) ${empty.toFixed(2)} µs.`,
);

if (withVariants) {
  md.push("", "### Variants (graph µs per call; same buffers / rotating 64 sets)", "");
  md.push("| kernel | batch | D | variant | split | graph | graph, rotating |", "|---|---|---|---|---|---|---|");
  const all = nat.benchVariants === true;
  const wpv = [
    ["scalar", WRITE_PREFIX_VARIANT.scalar, [1, 2, 4, 8, 16]],
    ...(all
      ? [
          ["legacy", WRITE_PREFIX_VARIANT.legacy, [1]],
          ["vec", WRITE_PREFIX_VARIANT.vec, [1, 8]],
        ]
      : []),
  ];
  for (const D of [1, 4, 8]) {
    for (const batch of [1, 8, 16, 32, 64, 128, 256]) {
      for (const [name, variant, splits] of wpv) {
        for (const split of splits) {
          const g = run("writePrefix", batch, D, 1, 1, 0, { variant, split });
          const rot = batch >= 64 ? us(run("writePrefix", batch, D, 1, 64, 0, { variant, split })) : "";
          md.push(`| writePrefix | ${batch} | ${D} | ${name} | ${g.split} | ${us(g)} | ${rot} |`);
        }
      }
    }
  }
  for (const batch of [8, 256]) {
    for (const op of ["commit", "commitMark"]) {
      for (const [name, variant] of Object.entries(COMMIT_VARIANT).filter(([n]) => all || n === "regs")) {
        md.push(
          `| ${op} | ${batch} | 8 | ${name} | | ${us(run(op, batch, 8, 1, 1, 0, { variant }))} | ${us(run(op, batch, 8, 1, 64, 0, { variant }))} |`,
        );
      }
    }
    for (const [name, variant, splits] of [
      ["legacy", WRITE_PREFIX_VARIANT.legacy, [1]],
      ...(all
        ? [
            ["scalar", WRITE_PREFIX_VARIANT.scalar, [1, 2, 4, 8, 16]],
            ["vec", WRITE_PREFIX_VARIANT.vec, [1]],
          ]
        : []),
    ]) {
      for (const split of splits) {
        const g = run("decode", batch, 1, 1, 1, 0, { variant, split });
        md.push(
          `| decode | ${batch} | 1 | ${name} | ${g.split} | ${us(g)} | ${us(run("decode", batch, 1, 1, 64, 0, { variant, split }))} |`,
        );
      }
    }
  }
}

md.push("", "### Default variants", "");
md.push(
  "| kernel | batch | D | eager µs | graph µs | graph µs, rotating buffers (not L2-resident) | bytes/call | floor µs (empty + bytes at copy BW) | GB/s (rotating) |",
  "|---|---|---|---|---|---|---|---|---|",
);
let coldUs = 0; // writePrefix batch 256, D 8, rotating
for (const D of [1, 4, 8]) {
  for (const batch of [1, 2, 4, 8, 16, 32, 64, 128, 256]) {
    const e = run("writePrefix", batch, D, 0);
    const g = run("writePrefix", batch, D, 1);
    const rot = run("writePrefix", batch, D, 1, 64);
    if (batch === 256 && D === 8) coldUs = rot.usPerCall;
    const bytes = wpBytes(batch, D);
    md.push(
      `| writePrefix fp32 (split ${g.split}) | ${batch} | ${D} | ${us(e)} | ${us(g)} | ${us(rot)} | ${(bytes / 1024).toFixed(0)} KiB | ${floor(bytes).toFixed(2)} | ${(bytes / (rot.usPerCall * 1e-6) / 1e9).toFixed(0)} |`,
    );
  }
}
for (const batch of [8, 256]) {
  const g = run("writePrefix", batch, 8, 1, 1, 1);
  md.push(
    `| writePrefix bf16 (split ${g.split}) | ${batch} | 8 | ${us(run("writePrefix", batch, 8, 0, 1, 1))} | ${us(g)} | ${us(run("writePrefix", batch, 8, 1, 64, 1))} | | | |`,
  );
}
for (const batch of [8, 256]) {
  for (const op of ["mark", "markUpstream", "commit", "commitMark"]) {
    // commit: reads the marker, copies bank a -> bank 0 (6 KiB read + 6 KiB written per request)
    const bytes = op.startsWith("commit") ? batch * 12288 : 0;
    const rot = run(op, batch, 8, 1, 64);
    md.push(
      `| ${op} | ${batch} | 8 | ${us(run(op, batch, 8, 0))} | ${us(run(op, batch, 8, 1))} | ${us(rot)} | ${bytes ? `${(bytes / 1024).toFixed(0)} KiB` : ""} | ${bytes ? floor(bytes).toFixed(2) : ""} | ${bytes ? (bytes / (rot.usPerCall * 1e-6) / 1e9).toFixed(0) : ""} |`,
    );
  }
  // decode: 4 KiB input + 2 KiB ape + 6 KiB state read + 6 KiB state written per request (ape counted: distinct rows)
  const bytes = batch * (4096 + 12288);
  const rot = run("decode", batch, 1, 1, 64);
  const g = run("decode", batch, 1, 1);
  md.push(
    `| online decode fp32 (split ${g.split}) | ${batch} | 1 | ${us(run("decode", batch, 1, 0))} | ${us(g)} | ${us(rot)} | ${(bytes / 1024).toFixed(0)} KiB | ${floor(bytes).toFixed(2)} | ${(bytes / (rot.usPerCall * 1e-6) / 1e9).toFixed(0)} |`,
  );
}
// The L2-cold floor measured: a copy of half of writePrefix batch 256, D 8's bytes moves as many bytes in total,
// timed the same way (graph, 64 rotating source / destination pairs). An addon without the op skips the line.
const coldCopy = {};
try {
  for (const op of ["copyKernel", "copy"])
    coldCopy[op] = run(op, 1, 1, 1, 64, 0, { copyBytes: 16 * Math.floor(wpBytes(256, 8) / 32) }).usPerCall;
} catch (e) {
  if (e?.field !== "op") throw e;
}
if (coldCopy.copyKernel !== undefined)
  md.push(
    "",
    `L2-cold floor of writePrefix batch 256, D 8 (${(wpBytes(256, 8) / 1e6).toFixed(2)} MB read + written, graph, 64 rotating pairs): float4 copy kernel ${coldCopy.copyKernel.toFixed(2)} µs, cudaMemcpyAsync ${coldCopy.copy.toFixed(2)} µs; writePrefix ${coldUs.toFixed(2)} µs = ${(coldUs / coldCopy.copyKernel).toFixed(2)}x the copy kernel, ${(coldUs / (wpBytes(256, 8) / (copyGBs * 1e3))).toFixed(2)}x bytes / copy bandwidth.`,
    "",
  );
const text = md.join("\n");
console.log(text);
if (outPath)
  writeFileSync(
    outPath,
    JSON.stringify(
      { device: p.device, addon: process.env.DSV4KV_ADDON_PATH ?? null, copyGBs, emptyUs: empty, rows, markdown: text },
      null,
      1,
    ),
  );
