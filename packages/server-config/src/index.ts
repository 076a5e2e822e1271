export {
  type ModelPreset,
  MODEL_PRESETS,
  DEFAULT_MODEL,
  CustomModelSchema,
  parseCustomModel,
  type CustomModelResult,
} from "./presets.js";
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
