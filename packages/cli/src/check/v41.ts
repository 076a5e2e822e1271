/**
 * `dsv4-kv check` for a DeepSeek-V4.1 model: the flags mapped to server-config's `checkV41Deployment` and its report
 * written as text (docs/reference/deepseek-v4.1.md §6), V4.1's start-up rules (V41-*) included. V4's rules and
 * residency check are not run for V4.1; the report says so. --against-log for V4.1 is v41-against-log.ts.
 */
import {
  CHECK_REPORT_SCHEMA_VERSION,
  type V41CheckInput,
  type V41CheckReport,
  type V41ModelPreset,
  checkV41Deployment,
  flagName,
} from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";
import type { CommandIO } from "../commands/registry.js";
import type { Values } from "./launch.js";
import { renderReportHtml, writeReportHtml } from "../report-html/render.js";
import { v41Payload } from "../report-html/v41-payload.js";
import { loadV41Model } from "./model-source.js";

/**
 * The V4.1 check when `--model` (or a config file's `model-path`) names a DeepSeek-V4.1 model: its exit code, after
 * writing the report (`--json` or text). Null for any other model, which the V4 check then reads as before.
 * `merged` are the check's values (env < config file < flags).
 */
export async function checkIfV41(
  merged: Values,
  spelling: Readonly<Record<string, string>>,
  io: CommandIO,
): Promise<number | null> {
  if (typeof merged.model !== "string" || merged["model-config"] !== undefined) return null;
  const loaded = await loadV41Model(merged.model, spelling.model ?? "--model");
  if (!loaded) return null;
  const report = runV41Check(merged, loaded.model, loaded.resolvedAs);
  if (typeof merged.html === "string")
    await writeReportHtml(merged.html, renderReportHtml(v41Payload(report, v41Json(report), loaded.model)));
  io.stdout.write(merged.json === true ? `${JSON.stringify(v41Json(report), null, 2)}\n` : formatV41Report(report));
  return report.ok ? 0 : 1;
}

/** The V4.1 report as `--json` prints it: the schema version first (server-config's V41CheckReportJsonSchema). */
export function v41Json(report: V41CheckReport, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemaVersion: CHECK_REPORT_SCHEMA_VERSION, ...report, ...extra };
}

const num = (values: Values, flag: string) => values[flag] as number | undefined;

/** The V4.1 check of the merged flag values (config file < flags) for `model`. */
export function runV41Check(
  values: Values,
  model: V41ModelPreset,
  resolvedAs: string,
  fromLog: Pick<V41CheckInput, "swaCapTokens"> = {},
): V41CheckReport {
  const unsupported = ["model-config", "sizing"].find((f) => values[f] !== undefined);
  if (unsupported)
    throw new UsageError(`--${unsupported}`, values[unsupported], "is not supported for DeepSeek-V4.1 models yet");
  const budgetBytes = num(values, "kv-budget-bytes");
  const algorithm = values["speculative-algorithm"];
  return checkV41Deployment({
    ...fromLog,
    model,
    resolvedAs,
    fieldName: flagName,
    speculativeAlgorithm: algorithm === undefined ? undefined : String(algorithm),
    speculativeDsparkBlockSize: num(values, "speculative-dspark-block-size"),
    speculativeNumDraftTokens: num(values, "speculative-num-draft-tokens"),
    maxRunningRequests: num(values, "max-running-requests") ?? null,
    swaFullTokensRatio: num(values, "swa-full-tokens-ratio"),
    pageSize: num(values, "page-size"),
    contextLength: num(values, "context-length"),
    maxTotalTokens: num(values, "max-total-tokens") ?? null,
    rules: {
      enableHisparse: values["enable-hisparse"] === true,
      dsv4AttnBackend: typeof values["dsv4-attn-backend"] === "string" ? values["dsv4-attn-backend"] : null,
      ppSize: num(values, "pp-size") ?? 1,
      disaggregationMode: (values["disaggregation-mode"] as "null" | "prefill" | "decode" | undefined) ?? "null",
      dpSize: num(values, "dp-size") ?? 1,
      enableDpAttention: values["enable-dp-attention"] === true,
      prefillContextParallel: values["prefill-context-parallel"] === true,
    },
    budget:
      budgetBytes !== undefined
        ? { kind: "bytes", kvBudgetBytes: budgetBytes }
        : {
            kind: "gpu",
            gpuMemoryGiB: num(values, "gpu-memory-gib"),
            weightsGiB: num(values, "weights-gib"),
            runtimeGiB: num(values, "runtime-gib"),
            memFractionStatic: num(values, "mem-fraction-static"),
            tpSize: num(values, "tp-size"),
            ppSize: num(values, "pp-size"),
          },
  });
}

const n = (v: number) => Math.round(v).toLocaleString("en-US");
const gib = (v: number) => `${(v / 2 ** 30).toFixed(3)} GiB`;

export function formatV41Report(r: V41CheckReport): string {
  const out = [
    `Model: ${r.model.resolvedAs}`,
    `  KV sources ${r.model.kvSourceLayerIds.join(", ")}; ${r.model.draftLayers} DSpark stages`,
    ...r.notes.map((note) => `  ${note.field} ${JSON.stringify(note.value)}: ${note.reason}`),
    `KV budget: ${n(r.availableBytes)} B (${gib(r.availableBytes)}, ${r.budget.kind})`,
  ];
  if (r.sizing) out.push(...sizingLines(r.sizing));
  if (r.pairRing) out.push(pairRingLine(r.pairRing));
  for (const e of r.errors) out.push(`ERROR ${e.rule ? `[${e.rule}] ` : ""}${e.message}`);
  for (const w of r.warnings) out.push(`warning: ${w}`);
  out.push(`Not checked for DeepSeek-V4.1 yet: ${r.notChecked.join("; ")}.`);
  return `${out.join("\n")}\n`;
}

/** V41-R1's verdict in one line: the ring, the widest block it serves (proved), the block the server verifies. */
function pairRingLine(p: NonNullable<V41CheckReport["pairRing"]>): string {
  const verdict = p.ok ? "serves" : "does NOT serve";
  if (!p.isSpeculative) return `Pair-state ring (V41-R1): R2 ${p.ringSize}, no speculation: decode and extend only`;
  return (
    `Pair-state ring (V41-R1): R2 ${p.ringSize} serves verify blocks of up to ${p.servedDraftTokens} tokens ` +
    `(proved); it ${verdict} the widest block, ${p.verifyWidth}`
  );
}

function sizingLines(s: NonNullable<V41CheckReport["sizing"]>): string[] {
  const c = s.configurator;
  const p = c.pools;
  return [
    "SGLang's configurator (as the public dev-dsv41 servers logged it):",
    `  bytes_per_full_token=${c.bytesPerFullToken.toFixed(2)}, per SWA token ${c.bytesPerSwaToken.toFixed(2)}, ` +
      `pair ring R2 ${c.pairRingSize}, c2 state fixed ${n(c.c2StateFixedBytes)} B, full_token=${c.fullToken}`,
    `  DSV4 pool sizes: full=${p.full}, swa=${p.swa}, c4=${p.c4}, c128=${p.c128}, c4_state=${p.c4State}, ` +
      `c128_state=${p.c128State}`,
    ...s.poolInitLines.map(
      (l) =>
        `  Initialize DeepSeekV4TokenToKVPool (${l.worker}): max_num_reqs=${l.maxNumReqs} swa_size=${l.swaSize} ` +
        `c4_size=${l.c4Size} c4_logical_size=${l.c4LogicalSize} c128_size=${l.c128Size} ` +
        `c4_state_pool_size=${l.c4StatePoolSize} c128_state_pool_size=${l.c128StatePoolSize}`,
    ),
    "Pools (allocated / reserved by the configurator / gap):",
    ...s.pools.map(
      (pool) =>
        `  ${pool.name}: ${pool.layers} × [${pool.shapePerLayer.join(", ")}] ${pool.dtype} = ${n(pool.totalBytes)} B ` +
        `/ ${n(pool.estimatedBytes)} B / ${n(pool.gapBytes)} B`,
    ),
    `  total ${n(s.allocatedBytes)} B (${gib(s.allocatedBytes)}); budget left ${n(s.unusedBytes)} B (${gib(s.unusedBytes)})`,
    `Capacity: ${n(p.full)} full tokens, ${n(p.swa)} SWA tokens, ${s.maxRunningRequests} running requests`,
  ];
}
