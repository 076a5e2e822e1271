/** Shared test fixtures: the presets, check's default EAGLE run, and args / reports from plain inputs. */
import {
  type CheckReport,
  MODEL_PRESETS,
  type ModelPreset,
  type ServerArgs,
  type ServerArgsInput,
  checkServerConfig,
  parseServerArgs,
} from "../src/index.js";

export const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
export const PRO = MODEL_PRESETS["DeepSeek-V4-Pro"]!;
export const F0731 = MODEL_PRESETS["DeepSeek-V4-Flash-0731"]!;

/** EAGLE 3 steps, top-k 1, 4 draft tokens. */
export const EAGLE = {
  speculativeAlgorithm: "EAGLE",
  speculativeNumSteps: 3,
  speculativeEagleTopk: 1,
  speculativeNumDraftTokens: 4,
} as const;

/** Parsed server args; a refusal fails the test with its issues. */
export function args(input: ServerArgsInput = {}): ServerArgs {
  const parsed = parseServerArgs(input as Record<string, unknown>);
  if (!parsed.ok) throw new Error(parsed.issues.join("\n"));
  return parsed.args;
}

/** The Gen B check of `input` on a byte budget. */
export function genBReport(input: ServerArgsInput = {}, budget = 100e9, model: ModelPreset = FLASH): CheckReport {
  return checkServerConfig(args(input), model, { kind: "bytes", kvBudgetBytes: budget }, { sizing: "sglang-gen-b" });
}
