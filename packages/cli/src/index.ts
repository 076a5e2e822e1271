export { main, topLevelHelp } from "./main.js";
export {
  COMMANDS,
  DEFAULT_COMMAND,
  type CommandIO,
  type CommandModule,
  type CommandEntry,
} from "./commands/registry.js";
export { runPlanCases, renderTables, type PlanCaseResult, type PlanEngineName } from "./commands/plan.js";
export { VERSION } from "./version.js";
