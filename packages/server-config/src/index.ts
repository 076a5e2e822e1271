export {
  type ModelPreset,
  MODEL_PRESETS,
  DEFAULT_MODEL,
  CustomModelSchema,
  parseCustomModel,
  type CustomModelResult,
} from "./presets.js";
export {
  type ModelConfigLayout,
  type ModelConfigRead,
  type ModelConfigOptions,
  DSV4_ARCHITECTURE,
  modelFromConfigJson,
} from "./model-config.js";
export {
  type ModelNameMatch,
  QUANTISATION_SUFFIXES,
  VARIANT_SUFFIXES,
  resolveModelName,
} from "./model-names.js";
export {
  ServerArgsSchema,
  SPECULATIVE_ALGORITHMS_ACCEPTED,
  type ServerArgsInput,
  type ServerArgs,
  camelCaseKey,
  normalizeArgKeys,
  parseServerArgs,
  flagName,
  type ParseArgsResult,
  type ParseServerArgsOptions,
} from "./schema.js";
export { ServerConfigError } from "./errors.js";
export {
  type SglangFlag,
  type SglangFlagEffect,
  type SglangValueKind,
  SGLANG_FLAGS,
  SGLANG_FLAGS_SOURCE,
  SGLANG_FLAG_NAMES,
  sglangFlag,
} from "./sglang-flags.js";
export {
  type DeploymentDefault,
  type DeploymentPreset,
  DEFAULT_DEPLOYMENT,
  H200_TP8_EAGLE,
} from "./deployments.js";
export { type RuleId, type RuleInfo, type Severity, type ConfigIssue, RULES } from "./rules.js";
export {
  type ConfigNote,
  type DerivedValues,
  type ResolvedServerConfig,
  DEFAULT_ADAPTIVE_CANDIDATES,
  DSV4_DEFAULTS,
  resolveServerConfig,
} from "./resolve.js";
export {
  type BudgetInput,
  type BudgetReport,
  type ResidencyCheck,
  type CheckOptions,
  type CheckReport,
  DEFAULT_MEM_FRACTION_STATIC,
  checkServerConfig,
  fmtBytes,
} from "./check.js";
export {
  CHECK_REPORT_SCHEMA_VERSION,
  CheckReportJsonSchema,
  CheckReportSchema,
  type CheckReportJson,
  checkReportJson,
  checkReportJsonSchema,
} from "./report-schema.js";
export type {
  ConfiguratorGeneration,
  FigureComparison,
  LogComparison,
  LogRank,
  LoggedNumber,
  LoggedSizingLine,
  ParsedSglangLog,
  ParsedSglangLogFile,
  SkippedLine,
  FigureCause,
  FigureRole,
  TruncatedFigure,
  SectionStart,
} from "./sglang-log/types.js";
export { detectPlatform, type DetectedPlatform, type LogPlatform } from "./sglang-log/platform.js";
export { MAX_LOG_CHARS, parseSglangLog } from "./sglang-log/parse.js";
export { reconcileSglangLog, type ReconcileOptions } from "./sglang-log/reconcile.js";
