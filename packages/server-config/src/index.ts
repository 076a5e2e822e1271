export {
  type ModelPreset,
  MODEL_PRESETS,
  parseCustomModel,
  type CustomModelResult,
} from "./presets.js";
export {
  type ModelConfigLayout,
  type ModelConfigRead,
  type ModelConfigOptions,
  modelFromConfigJson,
} from "./model-config.js";
export {
  type ModelNameMatch,
  resolveModelName,
} from "./model-names.js";
export {
  ServerArgsSchema,
  SPECULATIVE_ALGORITHMS_ACCEPTED,
  type ServerArgsInput,
  type ServerArgs,
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
  DSV4_DEFAULTS,
  resolveServerConfig,
} from "./resolve.js";
export {
  type BudgetInput,
  type BudgetReport,
  type ResidencyCheck,
  type CheckOptions,
  type CheckReport,
  type OverriddenSetting,
  checkServerConfig,
} from "./check.js";
export {
  CHECK_REPORT_SCHEMA_VERSION,
  CheckReportJsonSchema,
  type CheckReportJson,
  checkReportJson,
  checkReportJsonSchema,
} from "./report-schema.js";
export {
  ENGINE_CACHE_KINDS,
  ENGINE_CAUSE_IDS,
  type EngineCacheKind,
  type EngineCauseId,
  type EnginesComparison,
  EnginesComparisonSchema,
} from "./engines-comparison-schema.js";
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
export { type VllmKvInput, type VllmKvPlan, planVllmKvCache } from "./vllm/index.js";
export {
  ENV_SWITCHES,
  type FlagTouches,
  type FlagValue,
  SERVER_ARG_ENTRIES,
  SGLANG_SERVER_ARGS,
  type ServerArgField,
  type ServerFlag,
  serverFlagName,
} from "./server-flags.js";
export { type ShellWordsResult, shellWords } from "./shell-words.js";
// DeepSeek-V4.1 (docs/reference/deepseek-v4.1.md): presets, names and config reading, apart from the V4 registry.
export { type V41ModelPreset, V41_MODEL_PRESETS } from "./v41/presets.js";
export { type V41ModelNameMatch, resolveV41ModelName } from "./v41/model-names.js";
export {
  type V41ConfigLayout,
  type V41ConfigRead,
  V41_ARCHITECTURES,
  V41_MODEL_TYPES,
  isV41Config,
  modelV41FromConfigJson,
} from "./v41/model-config.js";
export {
  type V41CheckInput,
  type V41BudgetInput,
  type V41CheckNote,
  type V41CheckReport,
  V41_NOT_CHECKED,
  checkV41Deployment,
} from "./v41/check.js";
