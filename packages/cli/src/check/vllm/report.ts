/** The text report of `check --engine vllm`, from the JSON part (one source for both renderings). */
import type { VllmReportPart } from "@dsv4-kv/server-config";
import { NO_PAINT, type Paint } from "../../colour.js";

const n = (v: number) => v.toLocaleString("en-US", { maximumFractionDigits: 0 });
const gib = (v: number) => `${(v / 2 ** 30).toFixed(2)} GiB`;

function header(r: VllmReportPart, ok: boolean, paint: Paint): string[] {
  const b = r.behaviour;
  const inFlight = b.inFlight === "batchedTokens" ? "the batched tokens alone" : "concurrent batches × batched tokens";
  const errors = r.errors.length;
  return [
    `dsv4-kv check --engine vllm: ${r.model.name} (${r.model.resolvedAs}), vLLM ${r.version}`,
    `  sizing of vLLM ${b.id}: tokens in flight = ${inFlight}; figures on ${b.printFormat === "one-line" ? "one line" : "two lines"}` +
      (b.confirmed ? "" : " (not confirmed by a public log)"),
    ok ? paint.ok("Result: VALID") : paint.bad(`Result: INVALID (${errors} error${errors === 1 ? "" : "s"})`),
  ];
}

function argLines(r: VllmReportPart): string[] {
  const shown = r.args.filter((a) => a.value !== null);
  return [
    "",
    "Arguments (vLLM's keys; per rank):",
    ...shown.map((a) => {
      const why = a.source === "given" ? `given as ${a.typed ?? a.dest}` : (a.note ?? "default");
      return `  ${a.dest} = ${JSON.stringify(a.value)} (${why})`;
    }),
  ];
}

function sizingLines(s: NonNullable<VllmReportPart["sizing"]>): string[] {
  const specs = s.specs.map(
    (x) =>
      `  ${x.kind.padEnd(17)}${x.type.padEnd(8)} block ${String(x.blockSizeTokens).padStart(3)}` +
      `${x.slidingWindowTokens === null ? "" : `, window ${x.slidingWindowTokens}`}: ${x.storedEntriesPerBlock} × ` +
      `${x.entryBytes} B = ${n(x.rawPageBytes)} → ${n(x.pageBytes)} B per page, ${x.layers} layers`,
  );
  const groups = s.groups.map(
    (g, i) =>
      `  ${i}: ${g.type.padEnd(8)}block ${String(g.blockSizeTokens).padStart(3)}` +
      `${g.slidingWindowTokens === null ? "" : `, window ${g.slidingWindowTokens}`}, ${g.specs} specs ` +
      `(${g.kinds.join(", ")}), ${n(g.bytesPerBlock)} B per block, ${n(g.blocksPerRequest)} blocks per request`,
  );
  const a = s.admission;
  return [
    "",
    "Layer specs:",
    ...specs,
    "",
    `KV cache groups (${s.layerTuples} layer tuples each; one block pool):`,
    ...groups,
    `  page stride ${n(s.blockStrideBytes)} B (the largest group's block); scheduler block size ${s.schedulerBlockSize}`,
    "",
    `One request of ${n(s.maxModelLen)} tokens: ${n(s.inFlightTokens)} tokens in flight, ` +
      `${s.extraRetainedTokens} extra retained; ${n(s.blocksPerRequest)} blocks per request`,
    `Blocks: ${n(s.numGpuBlocks)} of ${n(s.blockStrideBytes)} B (pool ${n(s.poolBytes)} B)`,
    `Start-up check: ${n(a.bytesPerBlock)} B per block × ${n(s.blocksPerRequest)} = ${n(a.bytesNeeded)} B ` +
      (a.passes ? "fits" : `does not fit (longest max_model_len that fits: ${n(a.estimatedMaxModelLen ?? 0)})`) +
      (s.autoFitMaxModelLen === null ? "" : `; --max-model-len -1 fits ${n(s.autoFitMaxModelLen)}`),
    "",
    "vLLM prints:",
    ...s.printed.lines.map((l) => `  ${l}`),
  ];
}

function budgetLines(b: VllmReportPart["budget"]): string[] {
  if (b.source !== "gpu") {
    const what = b.source === "kvCacheMemoryBytes" ? "--kv-cache-memory-bytes" : "--kv-budget-bytes";
    return ["", `Budget: ${n(b.availableBytes)} B (${gib(b.availableBytes)}) for the KV cache, from ${what}`];
  }
  return [
    "",
    `Budget: ceil(${n(b.totalDeviceBytes!)} B × ${b.gpuMemoryUtilization}) = ${n(b.requestedBytes ?? 0)} B requested; ` +
      `weights ${n(b.weightsBytes!)} B (${b.weightsAssumption}), other ${n(b.otherBytes ?? 0)} B`,
    `  available for the KV cache: ${n(b.availableBytes)} B (${gib(b.availableBytes)})`,
  ];
}

function issueLines(title: string, issues: VllmReportPart["errors"], paint: (t: string) => string): string[] {
  if (issues.length === 0) return [];
  const out = ["", title];
  for (const i of issues) {
    out.push(paint(`  ${i.rule}: ${i.message}`));
    const cost = i.cost;
    if (cost) {
      const parts = [
        cost.blocksPerRequest === undefined ? null : `${n(cost.blocksPerRequest)} blocks per request`,
        cost.kvCacheSizeTokens === undefined ? null : `${n(cost.kvCacheSizeTokens)} tokens of GPU KV cache size`,
        cost.bytes === undefined ? null : `${n(cost.bytes)} B`,
      ].filter((p) => p !== null);
      if (parts.length > 0) out.push(`    cost: ${parts.join(", ")}`);
    }
    out.push(`    fix: ${i.fix}`);
    if (i.enforcedBy) out.push(`    vLLM refuses it in ${i.enforcedBy}`);
  }
  return out;
}

function ignoredLines(ignored: VllmReportPart["ignored"]): string[] {
  const line = (i: VllmReportPart["ignored"][number]) =>
    `  ${i.name}${i.value === true ? "" : ` ${JSON.stringify(i.value)}`}`;
  const plain = ignored.filter((i) => i.effect === "ignored");
  const unmodelled = ignored.filter((i) => i.effect === "unmodelled");
  const out: string[] = [];
  if (plain.length > 0) out.push("", "Ignored (no effect on the KV cache):", ...plain.map(line));
  if (unmodelled.length > 0)
    out.push(
      "",
      "Ignored, NOT MODELLED (vLLM may change the KV cache with these; the figures leave them out):",
      ...unmodelled.map(line),
    );
  return out;
}

export function formatVllmReport(r: VllmReportPart, ok: boolean, paint: Paint = NO_PAINT): string {
  const lines = [
    ...header(r, ok, paint),
    ...argLines(r),
    ...budgetLines(r.budget),
    ...(r.sizing
      ? sizingLines(r.sizing)
      : ["", "Not sized: vLLM refuses this configuration before it sizes the cache."]),
    ...issueLines("Errors (vLLM refuses to start):", r.errors, paint.bad),
    ...issueLines("Warnings:", r.warnings, paint.warn),
    ...ignoredLines(r.ignored),
  ];
  return `${lines.join("\n")}\n`;
}
