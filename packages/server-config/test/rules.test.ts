import { describe, expect, it } from "vitest";
import {
  MODEL_PRESETS,
  RULES,
  type RuleId,
  type ServerArgsInput,
  checkServerConfig,
  parseServerArgs,
  resolveServerConfig,
} from "../src/index.js";
import type { ModelPreset } from "../src/presets.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const F0731 = MODEL_PRESETS["DeepSeek-V4-Flash-0731"]!;
const NO_MTP: ModelPreset = {
  ...FLASH,
  name: "no-mtp",
  compressRatios: FLASH.compressRatios.slice(0, 43),
  mtpLayers: 0,
};
const EAGLE = { speculativeAlgorithm: "EAGLE", speculativeNumSteps: 3, speculativeEagleTopk: 1 } as const;
const H200 = { kind: "gpu", gpuMemoryGiB: 139.8, weightsGiB: 40 } as const;

function args(input: ServerArgsInput = {}) {
  const parsed = parseServerArgs(input as Record<string, unknown>);
  if (!parsed.ok) throw new Error(parsed.issues.join("\n"));
  return parsed.args;
}
const issues = (input: ServerArgsInput = {}, model = FLASH) => resolveServerConfig(args(input), model).issues;
const ids = (input: ServerArgsInput = {}, model = FLASH) => issues(input, model).map((i) => `${i.severity}:${i.rule}`);
const find = (rule: RuleId, input: ServerArgsInput, model = FLASH) => issues(input, model).find((i) => i.rule === rule);
const check = (input: ServerArgsInput, budget: Parameters<typeof checkServerConfig>[2] = H200, model = FLASH) =>
  checkServerConfig(args(input), model, budget, { residencySteps: 20 });

describe("the RULES table", () => {
  it("gives every rule a stage, and a check function to every rule evaluated outside checkServerConfig", () => {
    for (const [id, info] of Object.entries(RULES)) {
      expect(["resolve", "sized", "check", "v41"], id).toContain(info.stage);
      if (info.stage !== "check") expect(typeof info.check, id).toBe("function");
    }
  });
  it("evaluates in table order: issues of one resolution come out in the order of their rules", () => {
    const order = Object.keys(RULES);
    const raised = issues({
      kvCacheDtype: "bf16",
      contextLength: 2_000_000,
      speculativeAlgorithm: "EAGLE",
      speculativeNumSteps: 12,
      enableDpAttention: true,
      dpSize: 8,
      maxRunningRequests: 7,
    }).map((i) => order.indexOf(i.rule));
    expect(raised.length).toBeGreaterThan(3);
    expect(raised).toEqual([...raised].sort((a, b) => a - b));
  });
  it("the default configuration raises nothing", () => {
    expect(ids()).toEqual([]);
    expect(check({}).errors).toEqual([]);
  });
});

describe("V-C1: context length within the model's positions", () => {
  it("refuses --context-length 2000000 on a 1,048,576-position model, naming both", () => {
    const issue = find("V-C1", { contextLength: 2_000_000 });
    expect(issue).toMatchObject({
      severity: "error",
      code: "CONTEXT_LENGTH",
      field: "contextLength",
      value: 2_000_000,
      params: { maxPositionEmbeddings: 1_048_576 },
    });
    expect(issue?.message).toMatch(/2000000 exceeds the 1,048,576 positions/);
    expect(check({ contextLength: 2_000_000 }).ok).toBe(false);
  });
  it("accepts the model's own length and anything below it", () => {
    expect(find("V-C1", { contextLength: 1_048_576 })).toBeUndefined();
    expect(find("V-C1", { contextLength: 4096 })).toBeUndefined();
  });
});

describe("V-DP1: attention DP gives every rank a request", () => {
  const dp = { enableDpAttention: true, dpSize: 8, tpSize: 8 } as const;
  it("refuses 7 running requests over 8 ranks (0 per rank)", () => {
    const issue = find("V-DP1", { ...dp, maxRunningRequests: 7 });
    expect(issue).toMatchObject({
      severity: "error",
      code: "DP_ATTENTION_REQUESTS",
      field: "maxRunningRequests",
      params: { maxRunningRequests: 7, dpSize: 8, perRank: 0 },
    });
    expect(check({ ...dp, maxRunningRequests: 7 }).ok).toBe(false);
  });
  it("warns on a remainder, and says nothing for a multiple or without attention DP", () => {
    expect(find("V-DP1", { ...dp, maxRunningRequests: 10 })).toMatchObject({
      severity: "warning",
      params: { perRank: 1 },
    });
    expect(find("V-DP1", { ...dp, maxRunningRequests: 16 })).toBeUndefined();
    expect(find("V-DP1", { dpSize: 8, maxRunningRequests: 7 })).toBeUndefined();
  });
});

describe("V-S10: the checkpoint has the algorithm's draft weights", () => {
  it("refuses EAGLE on a checkpoint without MTP layers", () => {
    expect(find("V-S10", EAGLE, NO_MTP)).toMatchObject({
      severity: "error",
      code: "NO_DRAFT_WEIGHTS",
      params: { mtpLayers: 0 },
    });
    expect(find("V-S10", EAGLE, FLASH)).toBeUndefined();
  });
  it("a separate draft model brings its own weights", () => {
    expect(find("V-S10", { ...EAGLE, speculativeDraftModelPath: "/models/draft" }, NO_MTP)).toBeUndefined();
  });
  it("refuses DSPARK with a block size on a checkpoint that has no DSpark stages; 0731 has them", () => {
    const dspark = { speculativeAlgorithm: "DSPARK", speculativeDsparkBlockSize: 5 } as const;
    expect(find("V-S10", dspark, FLASH)).toMatchObject({ severity: "error", code: "NO_DRAFT_WEIGHTS" });
    expect(find("V-S10", dspark, F0731)).toBeUndefined();
    // Without a block size V-S1 already says the checkpoint declares none; V-S10 does not repeat it.
    expect(ids({ speculativeAlgorithm: "DSPARK" }, FLASH)).toEqual(["error:V-S1"]);
  });
});

describe("V-E1: the DeepEP low-latency dispatch bound", () => {
  const deepep = { moeA2aBackend: "deepep", maxRunningRequests: 64 } as const;
  it("refuses running requests × verify tokens above SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (128)", () => {
    const issue = find("V-E1", { ...deepep, ...EAGLE });
    expect(issue).toMatchObject({
      severity: "error",
      code: "DEEPEP_DISPATCH",
      field: "deepepNumMaxDispatchTokensPerRank",
      params: { tokens: 256, cap: 128, requestsPerRank: 64, tokensPerRequest: 4 },
    });
    expect(issue?.message).toMatch(/SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=256 or more/);
  });
  it("counts per attention DP rank, honours a raised bound, and skips normal mode and other backends", () => {
    expect(find("V-E1", { ...deepep, ...EAGLE, enableDpAttention: true, dpSize: 2, tpSize: 2 })).toBeUndefined();
    expect(find("V-E1", { ...deepep, ...EAGLE, deepepNumMaxDispatchTokensPerRank: 256 })).toBeUndefined();
    expect(find("V-E1", { ...deepep, ...EAGLE, deepepMode: "normal" })).toBeUndefined();
    expect(find("V-E1", { maxRunningRequests: 64, ...EAGLE })).toBeUndefined();
  });
  it("without speculation a request dispatches one token (the DSV4 default of 256 requests is over 128)", () => {
    expect(find("V-E1", { moeA2aBackend: "deepep" })).toMatchObject({ params: { tokens: 256, tokensPerRequest: 1 } });
    expect(find("V-E1", { moeA2aBackend: "deepep", maxRunningRequests: 128 })).toBeUndefined();
  });
});

describe("V-S11: online c128 MTP within its kernels' 8 verify tokens", () => {
  const online = {
    onlineCompress: true,
    onlineC128Mtp: true,
    speculativeAlgorithm: "EAGLE",
    speculativeEagleTopk: 1,
  } as const;
  it("refuses EAGLE with 9 steps (10 verify tokens) that used to pass with a V-S7 warning only", () => {
    const issue = find("V-S11", { ...online, speculativeNumSteps: 9 });
    expect(issue).toMatchObject({
      severity: "error",
      code: "ONLINE_MTP_VERIFY_TOKENS",
      params: { maxDraftTokens: 10, max: 8 },
    });
    expect(ids({ ...online, speculativeNumSteps: 9 })).toEqual(["warning:V-S7", "error:V-S11"]);
  });
  it("accepts 7 steps (8 tokens); adaptive checks its largest candidate", () => {
    expect(find("V-S11", { ...online, speculativeNumSteps: 7 })).toBeUndefined();
    const adaptive = { ...online, speculativeAdaptive: true, speculativeAdaptiveCandidates: [1, 3, 8] };
    expect(find("V-S11", adaptive)).toMatchObject({ params: { maxDraftTokens: 9, adaptive: true } });
  });
});

describe("V-C2, V-C3: a request of the context length fits the sized pools", () => {
  it("warns when the full pool per worker is below the context length", () => {
    const report = check({}, { kind: "bytes", kvBudgetBytes: 4 * 2 ** 30 });
    const pool = report.sizing!.sizes.maxTotalNumTokens;
    expect(pool).toBeLessThan(1_048_576);
    expect(report.warnings.find((w) => w.rule === "V-C2")).toMatchObject({
      code: "CONTEXT_EXCEEDS_POOL",
      params: { contextLen: 1_048_576, poolTokens: pool },
    });
    expect(check({ contextLength: 4096 }, { kind: "bytes", kvBudgetBytes: 4 * 2 ** 30 }).warnings).toEqual([]);
  });
  it("on a PD prefill node warns when the SWA pool caps prompts below the context length (sglang#24523)", () => {
    const budget = { kind: "bytes", kvBudgetBytes: 16 * 2 ** 30 } as const;
    const prefill = check({ disaggregationMode: "prefill", contextLength: 262_144 }, budget);
    const { swaTokens, maxTotalNumTokens } = prefill.sizing!.sizes;
    expect(swaTokens).toBeLessThan(262_144);
    expect(maxTotalNumTokens).toBeGreaterThan(262_144);
    expect(prefill.warnings.map((w) => w.rule)).toEqual(["V-C3"]);
    expect(check({ contextLength: 262_144 }, budget).warnings.map((w) => w.rule)).toEqual([]);
  });
});

describe("budgets: nonsensical values are refused before anything is sized", () => {
  const refuse = (budget: unknown) => () =>
    checkServerConfig(args({}), FLASH, budget as Parameters<typeof checkServerConfig>[2]);
  it("negative, zero or non-finite device memory, weights and runtime", () => {
    expect(refuse({ kind: "gpu", gpuMemoryGiB: -1, weightsGiB: 1 })).toThrow(/gpuMemoryGiB/);
    expect(refuse({ kind: "gpu", gpuMemoryGiB: 0, weightsGiB: 1 })).toThrow(/gpuMemoryGiB/);
    expect(refuse({ kind: "gpu", gpuMemoryGiB: 80, weightsGiB: -100 })).toThrow(/weightsGiB/);
    expect(refuse({ kind: "gpu", gpuMemoryGiB: 80, weightsGiB: 1, runtimeGiB: Number.NaN })).toThrow(/runtimeGiB/);
    expect(refuse({ kind: "bytes", kvBudgetBytes: -1 })).toThrow(/kvBudgetBytes/);
    expect(refuse({ kind: "bytes", kvBudgetBytes: 1.5 })).toThrow(/kvBudgetBytes/);
  });
  it("an assumption that is not a string", () => {
    expect(refuse({ kind: "gpu", gpuMemoryGiB: 80, weightsGiB: 1, assumption: 7 })).toThrow(/assumption/);
    expect(refuse({ kind: "gpu", gpuMemoryGiB: 80, weightsGiB: 1, assumption: "measured" })).not.toThrow();
  });
});
