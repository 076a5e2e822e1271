/**
 * The `dsv4-kv check --json` contract: the check report as a zod schema. The JSON Schema published as
 * `@dsv4-kv/server-config/check-report.schema.json` is generated from it (`pnpm build`; a test fails when the
 * committed file drifts), and `checkReportJson` builds the output from this schema's type.
 *
 * Every object is strict, so a field the schema does not document fails the tests that validate real outputs.
 * To add a field: add it to the part's schema below (with a `describe`), rebuild, and say in the changeset.
 * Adding a field, a rule id, an error code or a note kind keeps `schemaVersion`; removing or renaming a field,
 * or changing its type or meaning, raises it.
 */
import { ERROR_CODES, type ErrorCode } from "@dsv4-kv/errors";
import { z } from "zod";
import { POOL_NAMES, type PoolId } from "@dsv4-kv/memory-pool";
import { EnginesComparisonSchema } from "./engines-comparison-schema.js";
import { RULES, type RuleId } from "./rules.js";
import { v41ReportShape } from "./v41/report-schema.js";
import { ServerArgsSchema } from "./schema.js";
import { VllmBehaviourSchema, VllmReportPartSchema } from "./vllm/report-schema.js";

/** The JSON contract's version: an integer, raised only on a breaking change of the report's shape. */
export const CHECK_REPORT_SCHEMA_VERSION = 3;

const int = z.int();
const count = z.int().nonnegative();
const bytes = z.number().describe("bytes");
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();
const ratio = z.literal([4, 128]);
const perRing = (schema: z.ZodType<number | null>) => z.strictObject({ c4: schema, c128: schema });

export const RuleIdSchema = z.enum(Object.keys(RULES) as [RuleId, ...RuleId[]]).describe("start-up rule id");
export const ErrorCodeSchema = z
  .enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]])
  .describe("error code (docs/errors.md)");

export const ConfigIssueSchema = z.strictObject({
  rule: RuleIdSchema,
  code: ErrorCodeSchema,
  severity: z.enum(["error", "warning"]),
  field: z.string().describe("the argument or value at fault (camelCase)"),
  value: z.unknown().describe("the value at fault, null when the issue has no single value"),
  params: z.record(z.string(), z.unknown()).describe("structured facts behind the message (numbers as numbers)"),
  message: z.string().describe("what is wrong, the values, and what to change"),
});

export const ConfigNoteSchema = z.strictObject({
  field: z.string(),
  kind: z.enum(["defaulted", "corrected", "forced"]),
  from: z.unknown(),
  to: z.unknown(),
  reason: z.string(),
});

const LayersSchema = z.strictObject({ total: count, ratio0: count, ratio4: count, ratio128: count });

export const DerivedValuesSchema = z.strictObject({
  effectivePageSize: int,
  isSpeculative: z.boolean(),
  speculativeAlgorithm: z.enum(["EAGLE", "DSPARK"]).nullable(),
  speculativeNumSteps: nullable(int),
  speculativeEagleTopk: nullable(int),
  draftTokens: int.describe("--speculative-num-draft-tokens as resolved: tokens one verify writes (1 without)"),
  maxDraftTokens: int.describe("the most draft tokens a verify writes: adaptive top or declared maximum (0 without)"),
  adaptiveCandidates: z.array(int).nullable(),
  allocLenPerDecode: int.describe("tokens allocated per request per decode step"),
  ringSizes: perRing(nullable(int)).describe("compress-state ring size per ratio, null when no layer has it"),
  writePads: perRing(nullable(int)).describe("draft tokens each ring's write pad serves"),
  maxDraftTokensServed: nullable(int).describe("min write pad over the rings in use (c128 excluded when online)"),
  attnDpSize: int,
  mrrPerWorker: int,
  numReqSlots: int,
  swaRatio: z.number(),
  stateDtypeBytes: z.literal([4, 2]),
  onlineC128: z.boolean(),
  onlineC128Mtp: z.boolean(),
  hisparseRatio: z.number(),
  kvCacheDtype: z.string(),
  contextLen: int,
  layers: LayersSchema,
});

export const ModelSummarySchema = z.strictObject({
  name: z.string(),
  resolvedAs: z.string().describe("how the model was named and read (preset, Hugging Face id, checkpoint config.json)"),
  layers: LayersSchema,
  compressRatios: z.array(count),
});

export const BudgetReportSchema = z.strictObject({
  kind: z.enum(["bytes", "gpu"]),
  memFractionStatic: z.number().nullable(),
  preFreeGiB: z.number().nullable(),
  postFreeGiB: z.number().nullable(),
  restGiB: z.number().nullable(),
  availableBytes: nullable(bytes).describe("the KV budget per worker"),
  minimumViableMemFraction: z.number().nullable(),
  assumption: z.string().nullable(),
});

export const ResidencyProofStatusSchema = z.strictObject({
  status: z.enum(["proved", "fails", "not proved"]),
  source: z.enum(["shipped table", "live"]).nullable(),
  draftTokens: int,
  states: nullable(int),
  detail: z.string().nullable(),
  command: z.string().describe("the command that proves (or refutes) it"),
});

export const ResidencyCheckSchema = z.strictObject({
  ratio,
  ringSize: int,
  swaPageSize: int,
  draftTokens: int,
  adaptive: z.boolean(),
  steps: count,
  verifies: count,
  violations: count,
  firstViolation: z.string().nullable(),
  skipped: z.string().nullable().describe("why the ring was not simulated, null when it was"),
  proof: ResidencyProofStatusSchema.optional().describe("the proof covering every schedule (simulated rings only)"),
});

const PoolIdSchema = z.enum(Object.keys(POOL_NAMES) as [PoolId, ...PoolId[]]);

export const PoolReportSchema = z.strictObject({
  id: PoolIdSchema.describe("what the pool is (decide on this, not on name)"),
  name: z.string().describe("display name"),
  dtype: z.enum(["uint8", "float32", "bfloat16"]),
  layers: count,
  shapePerLayer: z.array(count),
  bytesPerLayer: bytes,
  totalBytes: bytes,
  unitBytes: bytes.describe("bytes one more page or padded row group costs across the layers"),
  estimatedBytes: bytes.describe("what the sizing priced for this pool"),
  unaccountedBytes: bytes.describe("allocated − estimated"),
});

const StageFactsSchema = z.strictObject({
  stage: count,
  startLayer: count,
  endLayer: count,
  ratios: z.array(count),
  layers: count,
  layersC4: count,
  layersC128: count,
  ringSizeC4: int,
  ringSizeC128: int,
});

const StageSizingSchema = z.strictObject({
  stage: StageFactsSchema,
  stageCapacityTokens: int,
  pools: z.array(PoolReportSchema),
  allocatedBytes: bytes,
  estimatedBytes: bytes,
  unusedBytes: bytes,
});

const BytesPerFullTokenSchema = z.strictObject({
  swaKv: z.number(),
  c4Kv: z.number(),
  c128Kv: z.number(),
  c4Indexer: z.number(),
  c4AttentionState: z.number(),
  c128State: z.number(),
  c4IndexerState: z.number(),
  raw: z.number(),
  draftFactor: z.number(),
  total: z.number(),
});

const PoolSizesSchema = z.strictObject({
  maxTotalNumTokens: count.describe("full tokens (max_total_num_tokens)"),
  swaTokens: count,
  c4Size: count,
  c128Size: count,
  c4LogicalSize: count,
  c4StatePoolSize: count,
  c128StatePoolSize: count,
});

export const SizingModeSchema = z.enum(["sglang-gen-b", "exact"]);

export const SizingResultSchema = z.strictObject({
  mode: SizingModeSchema,
  availableBytes: bytes,
  pageSize: int,
  bytesPerFullToken: BytesPerFullTokenSchema,
  fixedBytes: bytes,
  sizes: PoolSizesSchema.describe("the capacity"),
  maxRunningRequests: count,
  numReqSlots: count,
  stages: z.array(StageSizingSchema),
  allocatedBytes: bytes,
  estimatedBytes: bytes,
  unusedBytes: bytes.describe("negative when the pools allocate more than the budget"),
  warnings: z.array(z.string()),
});

export const RingAdviceSchema = z.strictObject({
  ratio,
  draftTokens: int,
  ringSize: nullable(int),
  writePad: nullable(int),
  nextSmallerRingSize: nullable(int),
  reason: z.string().nullable(),
  currentRingSize: int,
  currentWritePad: int,
  currentServes: z.boolean(),
  stateBytesCurrent: nullable(bytes),
  stateBytesAdvised: nullable(bytes),
  capacityTokensCurrent: nullable(count),
  capacityTokensAdvised: nullable(count),
});

export const IgnoredSettingSchema = z.strictObject({
  name: z.string().describe("as typed: a flag (`--host`), a config key, or an environment name"),
  value: z.unknown(),
  effect: z
    .enum(["ignored", "unmodelled"])
    .describe("ignored: no effect on KV state; unmodelled: SGLang may change KV state with it, the check does not"),
});

const SettingSourceSchema = z.strictObject({
  source: z.enum(["config", "flag"]).describe("a key of the --config file, or a command-line flag"),
  name: z.string().describe("as typed: the config key (`tp-size`) or the flag (`--tp-size`)"),
  value: z.unknown(),
  line: z.int().positive().nullable().describe("the config file's 1-based line; null for a flag"),
});

export const OverriddenSettingSchema = z.strictObject({
  flag: z.string().describe("the setting, as the check's flag (`--tp-size`)"),
  won: SettingSourceSchema.describe("the one SGLang's loader takes"),
  lost: z.array(SettingSourceSchema).min(1).describe("the ones it replaces, in the order given"),
  rule: z
    .enum(["yaml-repeated-key", "later-spelling", "flag-over-config"])
    .describe(
      "yaml-repeated-key: a YAML key given twice keeps its last value; later-spelling: two of SGLang's spellings " +
        "of one flag, the later in the file wins; flag-over-config: a command-line flag wins over the config file",
    ),
});

/** The report's fields, in the order `checkServerConfig` returns them. */
const reportShape = {
  ok: z.boolean().describe("true when there is no error"),
  model: ModelSummarySchema,
  args: ServerArgsSchema.describe("the server arguments as parsed (every field, defaults filled)"),
  derived: DerivedValuesSchema,
  notes: z.array(ConfigNoteSchema).describe("what was defaulted, corrected or forced, and why"),
  budget: BudgetReportSchema,
  sizingMode: SizingModeSchema,
  sizing: SizingResultSchema.nullable().describe("the pools and the capacity; null when there is no KV budget"),
  residency: z.array(ResidencyCheckSchema),
  advice: z.array(RingAdviceSchema).describe("ring-sizing advice when the draft tokens exceed a ring's pad"),
  errors: z.array(ConfigIssueSchema),
  warnings: z.array(ConfigIssueSchema),
  ignored: z.array(IgnoredSettingSchema).describe("settings accepted and not read (the caller's, e.g. the CLI's)"),
  overridden: z
    .array(OverriddenSettingSchema)
    .optional()
    .describe("settings given more than once that SGLang's loader accepts: which one won (absent when none)"),
};

/** The report `checkServerConfig` returns. */
export const CheckReportSchema = z.strictObject(reportShape);

const FigureCauseSchema = z.strictObject({
  explained: z.boolean().describe("true when an alternative arithmetic SGLang used reproduces the logged value"),
  alternatives: z.array(z.string()).describe("the alternatives' ids (one or two); empty when unexplained"),
  text: z.string().describe("the term that differs and its value, in words"),
  value: z.string().nullable().describe("what the alternative computes at the log's precision; null if unexplained"),
  residual: z.string().nullable().describe("logged minus ours at the log's precision"),
});

const FigureComparisonSchema = z.strictObject({
  name: z.string().describe("the figure (bytes per full token, a pool's size, request slots, …)"),
  rank: z.string().nullable().describe("the rank label of its line (`TP0`, `DP1 TP1 EP1`), null when logged once"),
  line: z.int().positive().optional().describe("the 1-based log line it was read from"),
  logged: z.string().describe("as the log printed it"),
  computed: z.string().nullable().describe("ours at the log's precision; null when not computed (input, cut, unknown)"),
  match: z.boolean().nullable().describe("compared: true only when equal at the log's precision; null: not compared"),
  role: z
    .enum(["compared", "input", "truncated", "not-computed"])
    .describe("compared with ours, taken from the log as an input, cut in the log, or not computed"),
  derivedFrom: z.array(z.string()).describe("the logged figures it is computed from (`name@line`)"),
  why: z.string().optional().describe("how it is computed, or why it is an input, cut or not computed"),
  cause: FigureCauseSchema.optional().describe("for a figure that differs: the alternative that explains it, or none"),
});

const SkippedLineSchema = z.strictObject({
  line: z.int().positive().describe("1-based line number"),
  text: z.string().describe("the line's first 80 characters"),
  reason: z.string().describe("why it was not read"),
});

const TruncatedFigureSchema = z.strictObject({
  line: z.int().positive(),
  name: z.string().describe("the figure (or `KIND line` for a cut line)"),
  logged: z.string().describe("what the log shows (for a cut line: the keys missing)"),
  reason: z.string(),
});

const SectionStartSchema = z.enum(["file-start", "server_args", "launch-command", "restart"]);

/** `check --against-log FILE`: the log's figures against ours (shape of LogComparison in sglang-log/types.ts). */
export const LogComparisonSchema = z.strictObject({
  section: z.int().positive().describe("the section of the file (one server start), 1-based"),
  firstLine: z.int().positive(),
  lastLine: z.int().positive(),
  startedBy: SectionStartSchema.describe("what started the section"),
  generation: z
    .enum(["gen-a", "gen-a-pools", "gen-b", "gen-b-cap", "npu", "dev-dsv41", "unknown"])
    .describe("SGLang's configurator generation (dev-dsv41: a DeepSeek-V4.1 server)"),
  evidence: z.array(z.string()).describe("what in the log decided the generation"),
  platform: z.enum(["cuda", "hip", "npu"]).describe("the platform whose start-up rules and pools apply"),
  platformEvidence: z.array(z.string()).describe("what in the log decided the platform"),
  figures: z.array(FigureComparisonSchema),
  skipped: z.array(SkippedLineSchema).describe("lines not read, with why"),
  truncated: z.array(TruncatedFigureSchema).describe("figures and lines the log cut off: not compared"),
  nothingToReconcile: z.string().optional().describe("a section without sizing lines: checked as a launch only"),
  rulesNotApplied: z
    .array(z.strictObject({ rule: RuleIdSchema, reason: z.string() }))
    .optional()
    .describe("rules raised by Gen B's sizing that do not describe this log's earlier configurator"),
});

/** `check --engine vllm --against-log FILE`: a vLLM log's figures against ours (VllmLogComparison, vllm-log/types.ts). */
const VllmLineSourceSchema = z
  .enum(["log", "quoted"])
  .describe(
    "log: vLLM wrote the line (a prefix, or the message starts it); quoted: prose, a table or a note quotes it",
  );

export const VllmLogComparisonSchema = z.strictObject({
  engine: z.literal("vllm"),
  version: z.string().nullable().describe("the vLLM version the log printed (banner or engine line), null if none"),
  model: z.string().describe("the model the figures were computed for, and how it was chosen"),
  evidence: z.array(z.string()).describe("what made the file a vLLM DeepSeek-V4 start-up log"),
  inputs: z
    .array(
      z.strictObject({
        name: z.string().describe("vLLM's dest key (max_num_batched_tokens)"),
        field: z.string().describe("the model's input it sets (maxNumBatchedTokens)"),
        value: z.string(),
        from: z
          .enum(["log-args", "log-line", "flag", "default", "not-modelled"])
          .describe("non-default args or launch command, a log line that echoes it, a flag, or vLLM's default"),
        line: z.int().positive().nullable().describe("the log line it was read from"),
      }),
    )
    .describe("every input of the recomputation and where it came from"),
  figures: z.array(
    z.strictObject({
      name: z.string().describe("the figure (kvCacheTokens, maxConcurrency, refusal.neededGiB, block_size, …)"),
      line: z.int().positive().describe("the 1-based log line it was read from"),
      source: VllmLineSourceSchema,
      logged: z.string().describe("as the log printed it"),
      computed: z
        .string()
        .nullable()
        .describe("ours at the log's precision; `a…b` when the budget's rounding allows several; null: an input"),
      role: z
        .enum(["input", "compared", "not-computed"])
        .describe("taken from the log as an input (the budget), compared with ours, or not computed"),
      verdict: z
        .enum(["equal", "within-rounding", "different"])
        .nullable()
        .describe("compared: equal, inside the range the print's rounding allows, or different; null otherwise"),
      why: z.string().describe("how it is computed, or why it is an input or not computed"),
      cause: z
        .strictObject({
          id: z.string().describe("the cause's stable id (unlogged-batched-tokens, version-sizing, …)"),
          explained: z.boolean().describe("true when recomputing under the cause gives every logged figure"),
          text: z.string(),
        })
        .optional()
        .describe("for a figure that differs or is not computed: its named cause"),
    }),
  ),
  versionUsed: z
    .strictObject({
      version: z.string().describe("the vLLM version whose sizing the figures were computed with"),
      from: z.enum(["flag", "log", "default"]).describe("--vllm-version, the version the log printed, or the default"),
      logVersion: z.string().nullable().describe("the version the log printed, null if none"),
      behaviour: VllmBehaviourSchema,
      warning: z
        .strictObject({ id: z.enum(["version-flag-differs", "version-not-modelled"]), text: z.string() })
        .optional()
        .describe("the flag selects another sizing than the log's version, or the log's version is not modelled"),
    })
    .optional()
    .describe("which vLLM's sizing the figures were computed with, and why (reports before it lack it)"),
  skipped: z.array(SkippedLineSchema).describe("lines not read, with why"),
  nothingCompared: z.string().optional().describe("set when no figure could be compared, with why"),
});

/** What `dsv4-kv check --engine vllm --against-log FILE --json` prints. */
export const VllmLogCheckJsonSchema = z
  .strictObject({
    schemaVersion: z.literal(CHECK_REPORT_SCHEMA_VERSION),
    engine: z.literal("vllm"),
    ok: z.boolean().describe("no compared figure differs and every figure was computed"),
    vllmLogComparison: VllmLogComparisonSchema,
  })
  .meta({ title: "dsv4-kv check --engine vllm --against-log --json report" });

/** One section of a log with several servers: its own check and reconciliation. */
const LogSectionSchema = z.strictObject({
  section: z.int().positive(),
  ok: z.boolean().describe("every compared figure matches and no start-up rule of its platform fails"),
  report: z.strictObject(reportShape).describe("the check of this section's arguments"),
  logComparison: LogComparisonSchema,
  enginesComparison: EnginesComparisonSchema.optional().describe(
    "with --compare-engines: this section on both engines",
  ),
});

/** What `dsv4-kv check --json` prints. */
export const CheckReportJsonSchema = z
  .strictObject({
    schemaVersion: z.literal(CHECK_REPORT_SCHEMA_VERSION).describe("raised only on a breaking change"),
    ...reportShape,
    logComparison: LogComparisonSchema.optional().describe(
      "with --against-log: the reconciled section (the first with sizing lines, or --section N)",
    ),
    vllmLogComparison: VllmLogComparisonSchema.optional().describe(
      "with --engine vllm --against-log: the vLLM log's figures against ours",
    ),
    sections: z
      .array(LogSectionSchema)
      .optional()
      .describe("with --against-log: every section of the log (one per server start), each checked and reconciled"),
    vllm: VllmReportPartSchema.optional().describe(
      "check --engine vllm: vLLM's KV cache (its --json prints schemaVersion, engine, ok and this part alone)",
    ),
    enginesComparison: EnginesComparisonSchema.optional().describe(
      "with --compare-engines: the deployment on SGLang and on vLLM, memory per kind, each difference's cause",
    ),
  })
  .meta({ title: "dsv4-kv check --json report" });

export type CheckReportJson = z.output<typeof CheckReportJsonSchema>;

/**
 * What `dsv4-kv check --engine vllm --json` prints: the version, the engine, the verdict and the vLLM part (the root
 * schema's `vllm` property).
 */
export const VllmCheckReportJsonSchema = z
  .strictObject({
    schemaVersion: z.literal(CHECK_REPORT_SCHEMA_VERSION).describe("raised only on a breaking change"),
    engine: z.literal("vllm"),
    ok: z.boolean().describe("no vLLM rule fails (warnings allowed)"),
    vllm: VllmReportPartSchema,
  })
  .meta({ title: "dsv4-kv check --engine vllm --json report" });

export type VllmCheckReportJson = z.output<typeof VllmCheckReportJsonSchema>;

/** A DeepSeek-V4.1 section of a log: its V4.1 check and reconciliation. */
const V41LogSectionSchema = z.strictObject({
  section: z.int().positive(),
  ok: z.boolean().describe("every compared figure matches and no V4.1 start-up rule fails"),
  report: z.strictObject(v41ReportShape).describe("the V4.1 check of this section's arguments"),
  logComparison: LogComparisonSchema,
});

/** What `dsv4-kv check --json` prints for a DeepSeek-V4.1 model (`generation: "V4.1"`). */
export const V41CheckReportJsonSchema = z
  .strictObject({
    schemaVersion: z.literal(CHECK_REPORT_SCHEMA_VERSION).describe("raised only on a breaking change"),
    ...v41ReportShape,
    logComparison: LogComparisonSchema.optional().describe("with --against-log: the first section with sizing lines"),
    sections: z.array(V41LogSectionSchema).optional().describe("with --against-log: every section, checked"),
  })
  .meta({ title: "dsv4-kv check --json report (DeepSeek-V4.1)" });

export type V41CheckReportJson = z.output<typeof V41CheckReportJsonSchema>;

/**
 * Everything `dsv4-kv check --json` prints: a V4 report, a V4.1 one (it carries `generation: "V4.1"`), or a vLLM one
 * (`engine: "vllm"`).
 */
export const CheckOutputJsonSchema = z
  .union([CheckReportJsonSchema, V41CheckReportJsonSchema, VllmCheckReportJsonSchema])
  .meta({ title: "dsv4-kv check --json output" });

/** The report as its JSON contract: `schemaVersion` first, an issue without a value carries null. */
export function checkReportJson(report: z.output<typeof CheckReportSchema>): CheckReportJson {
  const issue = (i: z.output<typeof ConfigIssueSchema>) => ({ ...i, value: i.value === undefined ? null : i.value });
  return {
    schemaVersion: CHECK_REPORT_SCHEMA_VERSION,
    ...report,
    errors: report.errors.map(issue),
    warnings: report.warnings.map(issue),
  };
}

/** The JSON Schema (draft 2020-12) of `dsv4-kv check --json`, generated from `CheckOutputJsonSchema`. */
export function checkReportJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(CheckOutputJsonSchema, { io: "output", target: "draft-2020-12" }) as Record<string, unknown>;
}
