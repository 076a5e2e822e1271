export {
  type ModelPreset,
  type ModelRopeScaling,
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
  CheckOutputJsonSchema,
  V41CheckReportJsonSchema,
  type V41CheckReportJson,
  VllmCheckReportJsonSchema,
  type VllmCheckReportJson,
  type CheckReportJson,
  checkReportJson,
  checkReportJsonSchema,
  VllmLogCheckJsonSchema,
  VllmLogComparisonSchema,
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
export {
  type VllmKvInput,
  type VllmKvPlan,
  planVllmKvCache,
  type VllmCheckBudget,
  type VllmCheckInput,
  type VllmCheckReport,
  type VllmIssue,
  type VllmRuleId,
  type VllmVersionBehaviour,
  DEFAULT_VLLM_VERSION,
  VLLM_RULES,
  VLLM_VERSION_BEHAVIOURS,
  checkVllmDeployment,
  type VllmDerivedMaxLen,
  vllmDerivedMaxModelLen,
} from "./vllm/index.js";
export {
  type VllmReportExtras,
  type VllmReportPart,
  VllmReportPartSchema,
  vllmReportJson,
} from "./vllm/report-schema.js";
export {
  type ParsedVllmLog,
  type ParseVllmLogOptions,
  type VllmFigureCause,
  type VllmFigureComparison,
  type VllmInputSource,
  type VllmLogComparison,
  type VllmLogOverrides,
  type VllmLoggedLine,
  type VllmReconcileOptions,
  type VllmVerdict,
  type VllmVersionUsed,
  MAX_VLLM_LOG_CHARS,
  MODELLED_FROM_VERSION,
  inputsFromArgs,
  launchArgs,
  parseVllmLog,
  readLogInputs,
  reconcileVllmLog,
} from "./vllm-log/index.js";
export {
  ENV_SWITCHES,
  FLAG_HELP_GROUPS,
  type FlagHelpGroup,
  type FlagTouches,
  type FlagValue,
  SERVER_ARG_ENTRIES,
  SERVER_ARG_HELP_ORDER,
  SGLANG_SERVER_ARGS,
  type ServerArgField,
  type ServerFlag,
  serverFlagName,
} from "./server-flags.js";
export {
  type VllmArgField,
  type VllmFlagEffect,
  type VllmFlagLookup,
  type VllmOtherFlag,
  type VllmServerFlag,
  type VllmValueForm,
  VLLM_ARG_ENTRIES,
  VLLM_ENV_SWITCHES,
  VLLM_FLAG_SPELLINGS,
  VLLM_OTHER_FLAGS,
  VLLM_SERVER_ARGS,
  vllmFlag,
  vllmFlagByPrefix,
} from "./vllm-flags.js";
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
export {
  type V41Env,
  type V41ReconcileOptions,
  type V41LoggedArgument,
  reconcileV41Log,
  v41LoggedArguments,
  v41CapsPrintingSwaFixed,
  v41FullTokenRange,
} from "./v41/reconcile.js";
export type { V41Rule, V41RuleContext } from "./v41/rules.js";
export { type V41RingGroup, v41RingGroups } from "./v41/ring-geometry.js";
export {
  type V41PairRingFacts,
  type V41PairRingStatus,
  sglangPairRingSize,
  v41PairRingStatus,
  v41PairRingRule,
} from "./v41/pair-ring-rule.js";
