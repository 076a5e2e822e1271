/**
 * The vLLM part of the `dsv4-kv check --json` contract (`check --engine vllm --json` prints it as `vllm`), as a zod
 * schema, and `vllmReportJson`, which builds it from a VllmCheckReport. Strict objects, every field described.
 */
import { ERROR_CODES, type ErrorCode } from "@dsv4-kv/errors";
import { z } from "zod";
import type { VllmCheckReport } from "./check.js";
import type { VllmLayerSpec } from "./layer-specs.js";
import { VLLM_RULES, type VllmRuleId } from "./rules.js";

const count = z.int().nonnegative();
const bytes = z.number().describe("bytes");

const VllmIssueSchema = z.strictObject({
  rule: z.enum(Object.keys(VLLM_RULES) as [VllmRuleId, ...VllmRuleId[]]).describe("vLLM rule id (VLLM_RULES)"),
  severity: z.enum(["error", "warning"]),
  code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]).describe("error code (docs/errors.md)"),
  field: z.string().describe("the argument at fault (camelCase field, or field.key of a JSON argument)"),
  value: z.unknown().describe("the value at fault"),
  params: z.record(z.string(), z.unknown()).describe("structured facts behind the message"),
  message: z.string().describe("what is wrong, with the values"),
  fix: z.string().describe("what to change"),
  enforcedBy: z.string().nullable().describe("the vLLM code that refuses it (file, function); null: vLLM starts"),
  cost: z
    .strictObject({
      blocksPerRequest: count.optional().describe("blocks one request of max_model_len takes for it"),
      kvCacheSizeTokens: z.int().optional().describe("tokens the printed GPU KV cache size would gain without it"),
      bytes: bytes.optional(),
    })
    .nullable()
    .describe("what it costs, where it has a cost"),
});

const VllmArgSchema = z.strictObject({
  field: z.string().describe("dsv4-kv's field (camelCase of vLLM's key)"),
  dest: z.string().describe("vLLM's key (EngineArgs field, as `non-default args` prints it), or the env variable"),
  value: z.unknown().describe("a string, number or boolean as read; null when unset"),
  source: z
    .enum(["given", "default", "model", "engine"])
    .describe("given, the table's default, the model, vLLM's pick"),
  note: z.string().nullable().describe("why, when vLLM picked the value"),
  typed: z.string().nullable().describe("the flag or variable as typed"),
});

const VllmSpecSchema = z.strictObject({
  kind: z
    .string()
    .describe("the cache: swa, c4-main, c4-indexer, c128-main, c4-attn-state, c4-indexer-state, c128-state"),
  type: z.enum(["full", "sliding"]),
  layers: count.describe("layers registering this spec"),
  blockSizeTokens: count,
  slidingWindowTokens: count.nullable(),
  storedEntriesPerBlock: z.number(),
  entryBytes: count,
  rawPageBytes: bytes,
  pageBytes: bytes.describe("page bytes after the alignment padding"),
});

const VllmGroupSchema = z.strictObject({
  type: z.enum(["full", "sliding"]),
  blockSizeTokens: count,
  slidingWindowTokens: count.nullable(),
  layerTuples: count,
  specs: count.describe("layer specs in the group"),
  kinds: z.array(z.string()),
  bytesPerBlock: bytes.describe("the group's sum of pages: what one of its blocks uses of the stride"),
  blocksPerRequest: count,
});

/** What changed between the vLLM versions dsv4-kv models (VllmVersionBehaviour, versions.ts). */
export const VllmBehaviourSchema = z.strictObject({
  id: z.enum(["0.23", "0.26", "0.31", "main"]),
  inFlight: z.enum(["concurrentBatches", "batchedTokens"]).describe("the tokens in flight a sliding group holds"),
  printFormat: z.enum(["two-lines", "one-line"]),
  confirmed: z.boolean().describe("a public log of this behaviour reproduces"),
  evidence: z.string(),
});

export const VllmReportPartSchema = z
  .strictObject({
    version: z.string().describe("--vllm-version as given"),
    behaviour: VllmBehaviourSchema,
    model: z.strictObject({ name: z.string(), resolvedAs: z.string() }),
    args: z.array(VllmArgSchema).describe("vLLM's arguments dsv4-kv reads, resolved"),
    ignored: z
      .array(z.strictObject({ name: z.string(), value: z.unknown(), effect: z.enum(["ignored", "unmodelled"]) }))
      .describe("flags and environment accepted and not read"),
    budget: z.strictObject({
      source: z.enum(["kvCacheMemoryBytes", "availableBytes", "gpu"]),
      totalDeviceBytes: bytes.nullable(),
      gpuMemoryUtilization: z.number().nullable(),
      weightsBytes: bytes.nullable(),
      weightsAssumption: z.string().nullable(),
      otherBytes: bytes.nullable().describe("the profile run's other terms (--runtime-gib)"),
      requestedBytes: bytes.nullable().describe("ceil(total × utilization)"),
      nonKvBytes: bytes.nullable(),
      availableBytes: bytes.describe("bytes for the KV cache per rank (negative: vLLM refuses)"),
    }),
    sizing: z
      .strictObject({
        specs: z.array(VllmSpecSchema).describe("the layer specs, one row per (kind, layout)"),
        groups: z.array(VllmGroupSchema),
        layerTuples: count.describe("the tuple count every group is padded to"),
        blockStrideBytes: bytes.describe("bytes of one block of the shared pool (the page stride)"),
        schedulerBlockSize: count.describe("the smallest group block size (vLLM's block size after start-up)"),
        draftLayers: count,
        maxModelLen: count,
        inFlightTokens: count,
        extraRetainedTokens: count,
        blocksPerRequest: count,
        numGpuBlocks: count,
        poolBytes: bytes,
        admission: z.strictObject({
          bytesPerBlock: bytes,
          bytesNeeded: bytes,
          passes: z.boolean(),
          estimatedMaxModelLen: count.nullable(),
        }),
        printed: z.strictObject({
          kvCacheSizeTokens: count.describe("GPU KV cache size: int(concurrency × max_model_len)"),
          maxConcurrency: z.number().describe("blocks / blocks per request, unrounded"),
          maxConcurrencyText: z.string().describe("as printed, two decimals"),
          lines: z.array(z.string()).describe("the lines vLLM prints, in the version's layout"),
        }),
        autoFitMaxModelLen: count.nullable().describe("--max-model-len -1: the length vLLM fits"),
      })
      .nullable()
      .describe("null when a start-up refusal leaves nothing to size"),
    errors: z.array(VllmIssueSchema),
    warnings: z.array(VllmIssueSchema),
  })
  .describe("check --engine vllm: vLLM's KV cache for DeepSeek-V4 on one rank");

export type VllmReportPart = z.output<typeof VllmReportPartSchema>;

/** Specs collapsed to one row per distinct layout, with how many layers register it. */
type SpecRow = z.output<typeof VllmSpecSchema>;

function specRows(specs: readonly VllmLayerSpec[]): SpecRow[] {
  const rows = new Map<string, SpecRow>();
  for (const s of specs) {
    const key = `${s.kind}/${s.blockSizeTokens}/${s.pageBytes}`;
    const { layer: _, ...row } = s;
    const had = rows.get(key);
    rows.set(key, had ? { ...had, layers: had.layers + 1 } : { ...row, layers: 1 });
  }
  return [...rows.values()];
}

export interface VllmReportExtras {
  modelName: string;
  modelResolvedAs: string;
  ignored: VllmReportPart["ignored"];
  typed: Readonly<Record<string, string>>;
}

export function vllmReportJson(r: VllmCheckReport, extras: VllmReportExtras): VllmReportPart {
  const b = r.budget.input;
  const gpu = b.kind === "gpu" ? b : null;
  const issue = (i: VllmCheckReport["errors"][number]) => ({
    ...i,
    value: i.value ?? null,
    enforcedBy: VLLM_RULES[i.rule].enforcedBy,
  });
  const p = r.plan;
  return {
    version: r.vllmVersion,
    behaviour: r.behaviour,
    model: { name: extras.modelName, resolvedAs: extras.modelResolvedAs },
    args: r.resolved.args.map((a) => ({ ...a, typed: extras.typed[a.field] ?? null })),
    ignored: extras.ignored,
    budget: {
      source: b.kind,
      totalDeviceBytes: gpu?.totalDeviceBytes ?? null,
      gpuMemoryUtilization: gpu?.gpuMemoryUtilization ?? null,
      weightsBytes: gpu?.weightsBytes ?? null,
      weightsAssumption: r.budget.weightsAssumption,
      otherBytes: gpu ? (gpu.nonTorchBytes ?? 0) + (gpu.activationPeakBytes ?? 0) + (gpu.cudaGraphBytes ?? 0) : null,
      requestedBytes: p?.budget.requestedBytes ?? null,
      nonKvBytes: p?.budget.nonKvBytes ?? null,
      availableBytes: p?.budget.availableBytes ?? (b.kind === "gpu" ? 0 : b.bytes),
    },
    sizing: p && {
      specs: specRows(p.specs),
      groups: p.grouping.groups.map((g, i) => ({
        type: g.type,
        blockSizeTokens: g.blockSizeTokens,
        slidingWindowTokens: g.slidingWindowTokens,
        layerTuples: g.layerTuples,
        specs: g.specs.length,
        kinds: g.kinds,
        bytesPerBlock: g.bytesPerBlock,
        blocksPerRequest: p.blocksPerRequest.perGroup[i]!,
      })),
      layerTuples: p.grouping.layerTuples,
      blockStrideBytes: p.grouping.blockStrideBytes,
      schedulerBlockSize: p.schedulerBlockSize,
      draftLayers: p.draftLayers,
      maxModelLen: p.input.maxModelLen,
      inFlightTokens: p.request.inFlightTokens,
      extraRetainedTokens: p.request.extraRetainedTokens,
      blocksPerRequest: p.blocksPerRequest.total,
      numGpuBlocks: p.numGpuBlocks,
      poolBytes: p.poolBytes,
      admission: p.admission,
      printed: {
        kvCacheSizeTokens: p.printed.kvCacheSizeTokens,
        maxConcurrency: p.printed.maxConcurrency,
        maxConcurrencyText: p.printed.maxConcurrencyText,
        lines: r.printedLines!,
      },
      autoFitMaxModelLen: r.autoFitMaxModelLen,
    },
    errors: r.errors.map(issue),
    warnings: r.warnings.map(issue),
  };
}
