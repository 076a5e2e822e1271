/**
 * DeepSeek-V4.1's start-up rules (docs/reference/startup-rules.md §13): each as SGLang's V4.1 feature gate
 * (`validate_deepseek_v41_features`) and DSpark's argument handling raise them, through `checkV41Deployment`.
 */
import { describe, expect, it } from "vitest";
import {
  CHECK_REPORT_SCHEMA_VERSION,
  RULES,
  V41_MODEL_PRESETS,
  type V41CheckInput,
  V41CheckReportJsonSchema,
  checkV41Deployment,
} from "../src/index.js";

const flash = V41_MODEL_PRESETS["DeepSeek-V4.1-Flash"]!;
const BUDGET = { kind: "bytes", kvBudgetBytes: 58_143_119_769 } as const;

function check(over: Partial<V41CheckInput> = {}) {
  return checkV41Deployment({ model: flash, resolvedAs: "test", budget: BUDGET, maxRunningRequests: 256, ...over });
}
const rulesOf = (over: Partial<V41CheckInput> = {}) => check(over).errors.map((e) => `${e.rule}:${e.field}`);

describe("the V4.1 rules in the RULES table", () => {
  it("are evaluated by the V4.1 check only, in table order, and the default DSpark deployment raises none", () => {
    const ids = Object.entries(RULES)
      .filter(([, r]) => r.stage === "v41")
      .map(([id]) => id);
    expect(ids).toEqual(["V41-S1", "V41-S2", "V41-F1", "V41-D1"]);
    const report = check();
    expect(report.ok).toBe(true);
    expect(report.errors).toEqual([]);
    expect(
      V41CheckReportJsonSchema.safeParse({
        schemaVersion: CHECK_REPORT_SCHEMA_VERSION,
        ...JSON.parse(JSON.stringify(report)),
      }).success,
    ).toBe(true);
  });
});

describe("V41-S1: DSpark is V4.1's only speculative algorithm", () => {
  it("refuses EAGLE (no EAGLE or MTP weights) with the fix; DSPARK in any case and no speculation pass", () => {
    const report = check({ speculativeAlgorithm: "EAGLE" });
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({
      rule: "V41-S1",
      code: "UNSUPPORTED_ARGUMENT",
      field: "speculativeAlgorithm",
      value: "EAGLE",
    });
    expect(report.errors[0]!.message).toMatch(/only with DSpark.*use --speculative-algorithm DSPARK/);
    expect(rulesOf({ speculativeAlgorithm: "NEXTN" })).toEqual(["V41-S1:speculativeAlgorithm"]);
    expect(rulesOf({ speculativeAlgorithm: "dspark" })).toEqual([]);
    expect(rulesOf({ speculativeAlgorithm: "none" })).toEqual([]);
    expect(rulesOf({ speculativeAlgorithm: null })).toEqual([]);
  });
});

describe("V41-S2: DSpark's block size γ >= 1 and verify width γ + 1", () => {
  it("refuses draft tokens other than γ + 1, naming the width; γ + 1 itself passes", () => {
    const report = check({
      speculativeAlgorithm: "DSPARK",
      speculativeDsparkBlockSize: 5,
      speculativeNumDraftTokens: 4,
    });
    expect(report.errors[0]).toMatchObject({ rule: "V41-S2", field: "speculativeNumDraftTokens", value: 4 });
    expect(report.errors[0]!.message).toMatch(/must equal γ \+ 1 \(= 6 for γ = 5\)/);
    // A draft count is still sized, so V41-R1 can say what a ring sized from it would lose.
    expect(report.sizing).not.toBeNull();
    expect(rulesOf({ speculativeDsparkBlockSize: 5, speculativeNumDraftTokens: 2 })).toEqual([
      "V41-S2:speculativeNumDraftTokens",
      "V41-R1:speculativeNumDraftTokens",
    ]);
    expect(rulesOf({ speculativeDsparkBlockSize: 5, speculativeNumDraftTokens: 6 })).toEqual([]);
    // γ from the checkpoint (5) when the flag is absent.
    expect(rulesOf({ speculativeNumDraftTokens: 8 })).toEqual(["V41-S2:speculativeNumDraftTokens"]);
  });
  it("refuses γ = 0 and a config without γ or draft tokens", () => {
    expect(rulesOf({ speculativeDsparkBlockSize: 0 })).toEqual(["V41-S2:speculativeDsparkBlockSize"]);
    const noGamma = { ...flash, name: "no-gamma", dsparkBlockSize: Number.NaN };
    expect(rulesOf({ model: noGamma })).toEqual(["V41-S2:speculativeDsparkBlockSize"]);
    expect(rulesOf({ model: noGamma, speculativeNumDraftTokens: 4 })).toEqual([]);
  });
});

describe("V41-F1: HiSparse, the trtllm DSv4 backend and pipeline parallelism are refused for V4.1", () => {
  it("names each feature and its flag value; other backends and one stage pass", () => {
    expect(rulesOf({ rules: { enableHisparse: true } })).toEqual(["V41-F1:enableHisparse"]);
    expect(rulesOf({ rules: { dsv4AttnBackend: "trtllm" } })).toEqual(["V41-F1:dsv4AttnBackend"]);
    expect(rulesOf({ rules: { dsv4AttnBackend: "flashmla" } })).toEqual([]);
    const pp = check({ rules: { ppSize: 2 } });
    expect(pp.errors.map((e) => e.rule)).toEqual(["V41-F1"]);
    expect(pp.errors[0]!.message).toMatch(/does not support pipeline parallelism yet: use --pp-size 1/);
  });
});

describe("V41-D1: DSpark under PD disaggregation needs DP 1, no attention DP, no context parallelism", () => {
  it("refuses each conflicting setting on a PD node with DSpark; PD without speculation is not judged", () => {
    const pd = { disaggregationMode: "decode" as const };
    expect(rulesOf({ rules: pd })).toEqual([]);
    expect(rulesOf({ rules: { ...pd, dpSize: 2, enableDpAttention: true } })).toEqual([
      "V41-D1:dpSize",
      "V41-D1:enableDpAttention",
    ]);
    expect(rulesOf({ rules: { disaggregationMode: "prefill", prefillContextParallel: true } })).toEqual([
      "V41-D1:prefillContextParallel",
    ]);
    expect(rulesOf({ speculativeAlgorithm: null, rules: { ...pd, dpSize: 2 } })).toEqual([]);
  });
});
