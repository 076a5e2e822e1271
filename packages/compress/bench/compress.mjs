#!/usr/bin/env node
// CUDA-event timings of the ring compress kernels (exports.compress.bench) on the speed table's cases, beside the table's
// figures for upstream's kernels: eager (iters launches back to back) and graph (one CUDA graph of iters calls
// replayed), µs per call, median of reps; bytes per call counted from the plans (bench/compress-cases.mjs) or, for the
// online prefill rows (onlineMtp.bench op prefill), the op's own count; the copy floor (bytes at the issue's
// 4,218 GB/s), a same-run float4 copy kernel of the same bytes (onlineMtp.bench op copyKernel, same rotation) and the
// empty kernel. Method and byte model: docs/reference/compress-kernels.md §9.
//
//   node bench/compress.mjs [--out FILE.json] [--reps N] [--iters N] [--only TEXT] [--seed N] [--parts] [--dry]
//
// --parts also times each ring prefill row's compress kernel alone (its write rows dropped) and write kernel alone
// (its compress rows dropped), graph µs, to show where a call's time goes.
// --dry builds every case's plans and prints the bytes per call against the issue's, without the addon (no GPU
// needed; the online prefill rows print bench/compress-cases.mjs's mirror of the op's count). Without a usable GPU
// the full run stops with the message of kernels-cuda's requireGpu (exit 0; 1 with BENCH_REQUIRE_GPU set).
// It runs on kernels-cuda's bench build (`pnpm --filter @dsv4-kv/kernels-cuda build:native:bench`, found through
// kernels-cuda's own package root, or DSV4KV_ADDON_PATH) and lives here, not in kernels-cuda, because its cases are
// planned by the planner (docs/decisions.md D47). Through turbo (`pnpm bench`, or `node tooling/scripts/turbo.mjs run
// bench:gpu --filter=@dsv4-kv/compress`) the builds and the bench build come first.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  HEAD_DIM,
  RING,
  STATE_TYPE_FP32,
  SWA_PAGE,
  VERIFY_SEED,
  caseBytes,
  compressCases,
  rowElemsOf,
} from "./compress-cases.mjs";
import { requireBenchAddon, requireGpu, runMeta } from "@dsv4-kv/kernels-cuda/testing";

/** The issue's measured device-to-device copy rate (read + write), the floor's denominator. */
const COPY_GBPS = 4218;
/** H200 L2: 60 MiB (docs/benchmarks.md, the issue-13 L2-cold section; device notes: 60 MB through PyTorch). */
const L2_BYTES = 60 * 1024 * 1024;
/** An L2-cold case rotates through enough buffer sets that a set is evicted before its next use. */
const L2_COLD_FACTOR = 4;
/** Most device memory the rotated buffer sets of one case may take. */
const ROTATE_MEM_CAP = 8 * 1024 ** 3;

function parseCommandLine() {
  try {
    return parseArgs({
      options: {
        out: { type: "string" },
        dry: { type: "boolean", default: false },
        reps: { type: "string", default: "25" },
        iters: { type: "string", default: "100" },
        only: { type: "string" },
        seed: { type: "string" },
        parts: { type: "boolean", default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    console.error(
      `${e.message}\nusage: node bench/compress.mjs [--out FILE.json] [--reps N] [--iters N] [--only TEXT] ` +
        "[--seed N] [--parts] [--dry]",
    );
    process.exit(2);
  }
}
const args = parseCommandLine();
const intArg = (name, min, max) => {
  const raw = args[name];
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    console.error(`--${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return Number(raw);
};
const opts = { reps: intArg("reps", 5, 1000), iters: intArg("iters", 1, 10000) };
const verifySeed = args.seed === undefined ? VERIFY_SEED : intArg("seed", 0, 2 ** 32 - 1);
const cases = compressCases({ verifySeed }).filter((c) => args.only === undefined || c.name.includes(args.only));

const MB = (b) => (b / 1e6).toFixed(2);
const f2 = (x) => (x === undefined || x === null ? "–" : x >= 100 ? x.toFixed(1) : x.toFixed(2));
const ringLabel = (cr) => (cr === 4 ? `c4 paged ${RING[4]} / SPS ${SWA_PAGE}` : `c128 request ${RING[128]}`);
const floorUs = (bytes) => (bytes / (COPY_GBPS * 1e9)) * 1e6;
const isOnline = (c) => c.kind === "online" || c.kind === "onlinePrefill";
/** Where a row's bytes per call come from (the JSON's `bytesSource`). */
const BYTES_SOURCE = {
  prefill: "plans (bench/compress-cases.mjs prefillBytes)",
  decode: "plans (bench/compress-cases.mjs decodeBytes)",
  online: "model of onlineMtp.bench op decode (bench/compress-cases.mjs onlineDecodeBytes)",
  onlinePrefill:
    "the op's count (onlineMtp.bench op prefill `bytes`: only the bank-0 reads that happen and the ape rows touched)",
};
const BYTES_SOURCE_DRY =
  "bench/compress-cases.mjs onlinePrefillBytes, the mirror of onlineMtp.bench op prefill's count " +
  "(the GPU run uses the op's)";

function rotateFor(l2Cold, bytesPerCall, setBytes) {
  if (!l2Cold) return { rotate: 1, l2ColdMet: false };
  const wanted = Math.max(2, Math.ceil((L2_COLD_FACTOR * L2_BYTES) / bytesPerCall));
  const rotate = Math.min(wanted, Math.max(1, Math.floor(ROTATE_MEM_CAP / setBytes)), 4096);
  return { rotate, l2ColdMet: rotate * bytesPerCall >= L2_COLD_FACTOR * L2_BYTES };
}

function writeJson(doc) {
  const path = args.out ?? new URL("./compress-results.json", import.meta.url);
  writeFileSync(path, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`\nJSON written to ${path}`);
}

// ---- --dry: the plans and the byte model only ------------------------------------------------------------------
if (args.dry) {
  const rows = [];
  console.log(
    "| case | ring | valid compress / write rows (table rows) | ring / input elements | bytes/call | issue " +
      "| ours − issue |",
  );
  console.log("|---|---|---|---|---:|---:|---:|");
  for (const c of cases) {
    const built = c.build ? c.build() : null;
    const b = caseBytes(c, built);
    const r = b.rows;
    const tableRows = r.planD !== undefined ? `${r.planD}` : `${r.planC} / ${r.planW}`;
    const valid =
      c.kind === "onlinePrefill"
        ? `${r.segments} segments (${r.numSegments} records)`
        : c.onlineBatch
          ? `${c.onlineBatch} requests`
          : `${r.compress} / ${r.write} (${tableRows})`;
    const elems = isOnline(c) ? "–" : `${r.ringElems} / ${r.inputElems}`;
    const fromOp = c.kind === "onlinePrefill" ? " (op's count, mirrored)" : "";
    const issue = c.upstream ? `${c.upstream.bytesMB} MB` : "– (extra row)";
    const diff = c.upstream ? `${((b.total - c.upstream.bytesMB * 1e6) / 1e6).toFixed(3)} MB` : "–";
    console.log(
      `| ${c.name} | ${isOnline(c) ? "c128 online" : ringLabel(c.cr)} | ${valid} | ${elems} | ${b.total} B = ` +
        `${MB(b.total)} MB${fromOp} | ${issue} | ${diff} |`,
    );
    rows.push({
      name: c.name,
      cr: c.cr,
      bytes: b.total,
      bytesSource: c.kind === "onlinePrefill" ? BYTES_SOURCE_DRY : BYTES_SOURCE[c.kind],
      parts: b.parts,
      rows: b.rows,
      upstream: c.upstream,
      ...(c.extra ? { extra: c.extra } : {}),
    });
  }
  if (cases.some((c) => c.kind === "onlinePrefill"))
    console.log(
      "\nonline prefill rows: the GPU run takes the bytes from the op (onlineMtp.bench op prefill counts only the " +
        "bank-0 reads that happen and the ape rows touched); the figures above are bench/compress-cases.mjs's mirror " +
        "of that count.",
    );
  if (args.out) writeJson({ meta: { date: new Date().toISOString(), dry: true, verifySeed }, rows });
  process.exit(0);
}

// ---- the GPU run -----------------------------------------------------------------------------------------------
const kc = await import("@dsv4-kv/kernels-cuda");
const addon = requireBenchAddon();
requireGpu(kc.probe());
const probeResult = kc.probe();
const ctx = kc.getDefaultContext();
const online = addon.onlineMtp;

/** Deterministic fill in [-2, 2): the kernels' time does not depend on the values, only that they are finite. */
function randomFloats(n, seed) {
  const a = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    a[i] = ((s >>> 0) / 4294967296) * 4 - 2;
  }
  return a;
}
function deviceBuffer(byteLength) {
  return kc.createDeviceBuffer(Math.max(byteLength, 16), ctx);
}
function uploaded(view) {
  return deviceBuffer(view.byteLength).upload(view);
}

/** The compress call's buffers and args for one built case (random state and input, fp32). */
function compressArgs(c, built) {
  const rowElems = rowElemsOf(c.cr);
  const W = c.cr === 4 ? 8 : 128;
  const bufs = {
    state: uploaded(randomFloats(built.stateRows * rowElems, 11)),
    input: uploaded(randomFloats(built.inputRows * rowElems, 13)),
    ape: uploaded(randomFloats(W * HEAD_DIM, 7)),
    err: deviceBuffer(16).fill(0),
  };
  const common = { stateRows: built.stateRows, inputRows: built.inputRows, cr: c.cr, headDim: HEAD_DIM };
  if (c.kind === "prefill") {
    const numPlanC = built.plan.planC.rowCount;
    Object.assign(bufs, {
      planC: uploaded(built.plan.planC.bytes),
      planW: uploaded(built.plan.planW.bytes),
      out: deviceBuffer(numPlanC * HEAD_DIM * 4),
    });
    const setBytes = (built.stateRows + built.inputRows) * rowElems * 4 + numPlanC * HEAD_DIM * 4;
    return {
      op: "prefill",
      bufs,
      setBytes,
      args: { ...bufs, ...common, numPlanC, numPlanW: built.plan.planW.rowCount, stateType: STATE_TYPE_FP32 },
    };
  }
  const batch = built.planD.rowCount;
  Object.assign(bufs, { planD: uploaded(built.planD.bytes), out: deviceBuffer(batch * HEAD_DIM * 4) });
  const setBytes = (built.stateRows + built.inputRows) * rowElems * 4 + batch * HEAD_DIM * 4;
  return { op: "decode", bufs, setBytes, args: { ...bufs, ...common, batch, stateType: STATE_TYPE_FP32 } };
}

function checkErrWord(err, name) {
  const word = err.download(new Int32Array(4));
  if (word[0] !== 0)
    throw new Error(
      `${name}: the kernels reported error word [${word.join(", ")}]; the timing would be of the error path`,
    );
}

/** Eager and graph timings of one ring case, then the copy kernel of its bytes at the same rotation. */
function timeRingCase(c, built, bytes) {
  const call = compressArgs(c, built);
  const { rotate, l2ColdMet } = rotateFor(c.l2Cold, bytes, call.setBytes);
  const timing = { op: call.op, rotate, iters: opts.iters, reps: opts.reps };
  const eager = addon.compress.bench(ctx, { ...call.args, ...timing, graph: 0 });
  const graph = addon.compress.bench(ctx, { ...call.args, ...timing, graph: 1 });
  // --parts: the compress kernel alone (no write rows) and the write kernel alone (no compress rows), graph µs.
  const parts =
    args.parts && call.op === "prefill"
      ? {
          compressOnly: addon.compress.bench(ctx, { ...call.args, ...timing, graph: 1, numPlanW: 0 }),
          writeOnly: addon.compress.bench(ctx, { ...call.args, ...timing, graph: 1, numPlanC: 0 }),
        }
      : undefined;
  checkErrWord(call.bufs.err, c.name);
  for (const b of Object.values(call.bufs)) b.free();
  return { rotate, l2ColdMet, footprintBytes: rotate * call.setBytes, eager, graph, parts };
}

/** onlineMtp.bench op decode at numVerify 1 (the seq-len pattern onlineDecodeBytes counts). */
function timeOnlineDecode(c, bytes) {
  const batch = c.onlineBatch;
  const setBytes = (batch + 3) * 2 * 3 * HEAD_DIM * 4 + batch * 2 * HEAD_DIM * 4 + batch * HEAD_DIM * 4;
  const { rotate, l2ColdMet } = rotateFor(c.l2Cold, bytes, setBytes);
  const a = { op: "decode", batch, numVerify: 1, stateType: 0, rotate, iters: opts.iters, reps: opts.reps };
  const eager = online.bench(ctx, { ...a, graph: 0 });
  const graph = online.bench(ctx, { ...a, graph: 1 });
  return { rotate, l2ColdMet, footprintBytes: rotate * setBytes, eager, graph };
}

/** Device bytes of one buffer set of onlineMtp.bench op prefill (RunBench's allocations per rotated set). */
function onlinePrefillSetBytes(p, rows) {
  const slots = p.batch + 1;
  const bankStride = slots + 2;
  return (
    p.batch * p.numVerify * 2 * HEAD_DIM * 4 + // decode-op input rows (allocated for every op)
    bankStride * (p.numVerify + 1) * 3 * HEAD_DIM * 4 + // state banks
    p.batch * HEAD_DIM * 4 + // decode-op entries
    2 * slots * 4 + // pending markers
    rows.kvRows * 2 * HEAD_DIM * 4 + // the prefill's input rows
    rows.numSegments * HEAD_DIM * 4 // the prefill's entries
  );
}

/**
 * onlineMtp.bench op prefill: the op builds the case's segment table and reports the bytes one call moves, which the
 * row uses; the mirror in bench/compress-cases.mjs (`model`) sizes the rotation and is checked against it.
 */
function timeOnlinePrefill(c, model) {
  const setBytes = onlinePrefillSetBytes(c.prefill, model.rows);
  const { rotate } = rotateFor(c.l2Cold, model.total, setBytes);
  const a = { op: "prefill", ...c.prefill, stateType: STATE_TYPE_FP32, rotate, iters: opts.iters, reps: opts.reps };
  const eager = online.bench(ctx, { ...a, graph: 0 });
  const graph = online.bench(ctx, { ...a, graph: 1 });
  if (typeof graph.bytes !== "number" || typeof graph.numSegments !== "number")
    throw new Error(`${c.name}: onlineMtp.bench op prefill reported no bytes / numSegments (rebuild the addon)`);
  if (graph.bytes !== model.total || graph.numSegments !== model.rows.numSegments)
    console.error(
      `${c.name}: the op counts ${graph.bytes} B in ${graph.numSegments} records, bench/compress-cases.mjs ` +
        `${model.total} B in ${model.rows.numSegments}: the row uses the op's figure (update onlinePrefillBytes)`,
    );
  return {
    rotate,
    l2ColdMet: c.l2Cold && rotate * graph.bytes >= L2_COLD_FACTOR * L2_BYTES,
    footprintBytes: rotate * setBytes,
    eager,
    graph,
    bytes: graph.bytes,
    numSegments: graph.numSegments,
  };
}

function copyKernel(bytes, rotate) {
  // copyBytes are read and as many written: half the call's bytes each way, so the copy moves the same total.
  const copyBytes = Math.max(16, Math.floor(bytes / 2 / 16) * 16);
  const r = online.bench(ctx, {
    op: "copyKernel",
    batch: 1,
    numVerify: 1,
    stateType: 0,
    graph: 1,
    rotate,
    iters: opts.iters,
    reps: opts.reps,
    copyBytes,
  });
  return { copyBytes, ...r };
}

function emptyKernel() {
  const a = { op: "empty", batch: 1, numVerify: 1, stateType: 0, rotate: 1, iters: opts.iters, reps: opts.reps };
  return { eager: online.bench(ctx, { ...a, graph: 0 }), graph: online.bench(ctx, { ...a, graph: 1 }) };
}

/** The row's targets: ≤ target × floor (where it has one) and ≤ upstream (where the issue has a figure). */
function verdict(c, graphUs, floor) {
  const up = c.upstream?.graphUs;
  const metUpstream = up === undefined ? null : graphUs <= up;
  const metFloor = c.target === null ? null : graphUs <= c.target * floor;
  const limits = [up, c.target === null ? undefined : c.target * floor].filter((x) => x !== undefined);
  return {
    floorFactor: c.target,
    maxUs: Math.min(...limits),
    metFloor,
    metUpstream,
    met: metUpstream !== false && metFloor !== false,
  };
}

function timeCase(c, built, model) {
  if (c.kind === "online") return timeOnlineDecode(c, model.total);
  if (c.kind === "onlinePrefill") return timeOnlinePrefill(c, model);
  return timeRingCase(c, built, model.total);
}

const empty = emptyKernel();
const rows = [];
for (const c of cases) {
  const built = c.build ? c.build() : null;
  const b = caseBytes(c, built);
  const t = timeCase(c, built, b);
  const bytes = t.bytes ?? b.total;
  const copy = copyKernel(bytes, t.rotate);
  const floor = floorUs(bytes);
  const g = t.graph.usPerCall;
  rows.push({
    name: c.name,
    kind: c.kind,
    cr: c.cr,
    ring: isOnline(c) ? "c128 online (banks)" : ringLabel(c.cr),
    ...(c.extra ? { extra: c.extra } : {}),
    l2Cold: c.l2Cold,
    rotate: t.rotate,
    l2ColdMet: t.l2ColdMet,
    footprintBytes: t.footprintBytes,
    bytes,
    bytesSource: BYTES_SOURCE[c.kind],
    // the parts of bench/compress-cases.mjs's count (for online prefill: the mirror of the op's, `bytesModel`)
    parts: b.parts,
    ...(t.bytes === undefined ? {} : { bytesModel: b.total }),
    planRows: t.numSegments === undefined ? b.rows : { ...b.rows, numSegments: t.numSegments },
    detail: built?.detail ?? c.prefill,
    eager: t.eager,
    graph: t.graph,
    ...(t.parts ? { partsGraph: t.parts } : {}),
    gbps: bytes / (g * 1e3),
    floorUs: floor,
    xFloor: g / floor,
    copyKernel: copy,
    xCopy: g / copy.usPerCall,
    upstream: c.upstream ? { ...c.upstream, xFloor: c.upstream.graphUs / c.upstream.floorUs } : null,
    target: verdict(c, g, floor),
  });
  const partsText = t.parts
    ? ` (compress alone ${f2(t.parts.compressOnly.usPerCall)}, write alone ${f2(t.parts.writeOnly.usPerCall)})`
    : "";
  console.error(`${c.name}: graph ${f2(g)} µs${partsText}, eager ${f2(t.eager.usPerCall)} µs, rotate ${t.rotate}`);
}

const meta = {
  ...runMeta(probeResult),
  method: {
    ...opts,
    stateType: "fp32",
    headDim: HEAD_DIM,
    copyFloorGBps: COPY_GBPS,
    l2BytesAssumed: L2_BYTES,
    l2ColdFactor: L2_COLD_FACTOR,
    rotateMemCapBytes: ROTATE_MEM_CAP,
    verifySeed,
  },
};
writeJson({ meta, empty, rows });

console.log(
  "\n| case | ring | valid rows (compress / write) | bytes/call | rotate | eager µs | graph µs | GB/s " +
    "| copy floor µs " +
    "| × floor | copy kernel µs | × copy | upstream graph µs | upstream × floor | target µs | met |",
);
console.log("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
console.log(
  `| empty kernel | – | – | – | 1 | ${f2(empty.eager.usPerCall)} | ${f2(empty.graph.usPerCall)} ` +
    "| – | – | – | – | – | " +
    "0.52 | – | – | – |",
);
function validText(pr) {
  if (pr.numSegments !== undefined) return `${pr.segments} segments (${pr.numSegments} records)`;
  return pr.batch !== undefined ? `${pr.batch} requests` : `${pr.compress} / ${pr.write}`;
}
function targetText(t) {
  const by = [t.floorFactor ? `${t.floorFactor}× floor` : null, t.metUpstream === null ? null : "upstream"];
  return `≤ ${f2(t.maxUs)} (${by.filter((x) => x !== null).join(", ")})`;
}
for (const r of rows) {
  const cold = r.l2Cold ? (r.l2ColdMet ? "" : " (not L2-cold: memory cap)") : "";
  const t = r.target;
  const met = t.met
    ? "yes"
    : `**no**${t.metFloor === false ? " (floor)" : ""}${t.metUpstream === false ? " (upstream)" : ""}`;
  const up = r.upstream ? `${f2(r.upstream.graphUs)} | ${r.upstream.xFloor.toFixed(1)}` : "– (extra row) | –";
  const fromOp = r.bytesModel === undefined ? "" : " (op)";
  console.log(
    `| ${r.name} | ${r.ring} | ${validText(r.planRows)} | ${MB(r.bytes)} MB${fromOp} ` +
      `| ${r.rotate}${cold} | ${f2(r.eager.usPerCall)} | ` +
      `**${f2(r.graph.usPerCall)}** | ${r.gbps.toFixed(0)} | ${f2(r.floorUs)} | ${r.xFloor.toFixed(2)} | ` +
      `${f2(r.copyKernel.usPerCall)} | ${r.xCopy.toFixed(2)} | ${up} | ${targetText(t)} | ${met} |`,
  );
}
if (rows.some((r) => r.bytesModel !== undefined))
  console.log(
    "\n(op): bytes per call as onlineMtp.bench op prefill counts them (only the bank-0 reads that happen and the ape " +
      "rows touched). (extra): not in the issue's table, no upstream figure.",
  );
console.log(`\n${JSON.stringify(meta)}`);
