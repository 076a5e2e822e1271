import { describe, expect, it } from "vitest";
import {
  checkServerConfig,
  parseCustomModel,
  parseServerArgs,
  resolveServerConfig,
  type ServerArgsInput,
} from "../src/index.js";
import { args, EAGLE, F0731, FLASH, PRO } from "./fixtures.js";

const resolve = (input: ServerArgsInput = {}, model = FLASH) => resolveServerConfig(args(input), model);
const rules = (input: ServerArgsInput = {}, model = FLASH) =>
  resolve(input, model).issues.map((i) => `${i.severity}:${i.rule}`);
const message = (input: ServerArgsInput, rule: string, model = FLASH) =>
  resolve(input, model).issues.find((i) => i.rule === rule)?.message ?? "";

describe("presets (pools-and-sizing §2.2)", () => {
  it("Flash 2/21/20, Pro 0/30/31, 0731 = Flash with three trailing entries and γ 5", () => {
    expect(FLASH.compressRatios).toHaveLength(44);
    expect(PRO.compressRatios).toHaveLength(62);
    expect(F0731.compressRatios).toHaveLength(46);
    expect(resolve({}, FLASH).derived.layers).toEqual({ total: 43, ratio0: 2, ratio4: 21, ratio128: 20 });
    expect(resolve({}, PRO).derived.layers).toEqual({ total: 61, ratio0: 0, ratio4: 30, ratio128: 31 });
    expect(F0731.compressRatios.slice(0, 43)).toEqual(FLASH.compressRatios.slice(0, 43));
    expect(F0731.dsparkBlockSize).toBe(5);
    expect(FLASH.qkNopeHeadDim).toBe(448);
    expect(FLASH.checkpointGiB).toBeCloseTo(138.45, 2);
  });
  it("custom model: camelCase or HF keys; short ratio lists are refused", () => {
    const hf = parseCustomModel({
      num_hidden_layers: 2,
      head_dim: 512,
      qk_rope_head_dim: 64,
      index_head_dim: 128,
      sliding_window: 128,
      compress_ratios: [4, 128, 0],
      max_position_embeddings: 4096,
    });
    expect(hf.ok && hf.model.qkNopeHeadDim).toBe(448);
    const short = parseCustomModel({
      numHiddenLayers: 3,
      headDim: 512,
      qkRopeHeadDim: 64,
      indexHeadDim: 128,
      slidingWindow: 128,
      compressRatios: [4],
      maxPositionEmbeddings: 1,
    });
    expect(short.ok).toBe(false);
    expect(!short.ok && short.issues[0]).toMatch(/compressRatios: has 1 entries, fewer than numHiddenLayers = 3/);
    expect(parseCustomModel([]).ok).toBe(false);
  });
});

describe("schema", () => {
  it("accepts kebab-case and snake_case; names the field and value of a bad one; rejects unknown keys", () => {
    expect(parseServerArgs({ "page-size": 256, swa_full_tokens_ratio: 0.2 })).toMatchObject({
      ok: true,
      args: { pageSize: 256, swaFullTokensRatio: 0.2 },
    });
    const bad = parseServerArgs({ "max-running-requests": -3, pageSizze: 1 });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.issues.join("\n")).toMatch(/maxRunningRequests = -3/);
    expect(!bad.ok && bad.errors.find((e) => e.code === "UNKNOWN_KEY")).toMatchObject({
      field: "pageSizze",
      params: { suggestion: "pageSize" },
    });
  });
});

describe("DSV4 defaults and overrides (startup-rules §2.1, §3)", () => {
  it("page 256 always (64 corrected), r 0.1, mrr 256, fp8_e4m3 only when unset", () => {
    const r = resolve({ pageSize: 64 });
    expect(r.derived).toMatchObject({
      effectivePageSize: 256,
      swaRatio: 0.1,
      mrrPerWorker: 256,
      numReqSlots: 257,
      kvCacheDtype: "fp8_e4m3",
      stateDtypeBytes: 4,
    });
    expect(r.notes.find((n) => n.field === "pageSize")).toMatchObject({ kind: "corrected", from: 64, to: 256 });
    expect(resolve({ swaFullTokensRatio: 0.3, maxRunningRequests: 64 }).derived).toMatchObject({
      swaRatio: 0.3,
      mrrPerWorker: 64,
    });
    expect(resolve({ platform: "npu" }).derived.effectivePageSize).toBe(128);
  });
  it("attention DP divides mrr; PD decode adds extra slots", () => {
    expect(resolve({ maxRunningRequests: 256, enableDpAttention: true, dpSize: 8 }).derived).toMatchObject({
      attnDpSize: 8,
      mrrPerWorker: 32,
      numReqSlots: 33,
    });
    expect(resolve({ disaggregationMode: "decode", disaggregationDecodeExtraSlots: 4 }).derived.numReqSlots).toBe(261);
  });
});

describe("speculative derivations (startup-rules §3)", () => {
  it("EAGLE steps 3 ⇒ 4 draft tokens regardless of the given value (V-S2 warning + correction)", () => {
    const r = resolve({ ...EAGLE, speculativeNumDraftTokens: 7 });
    expect(r.derived).toMatchObject({
      draftTokens: 4,
      maxDraftTokens: 4,
      allocLenPerDecode: 4,
      ringSizes: { c4: 16, c128: 256 },
      writePads: { c4: 10, c128: 130 },
      maxDraftTokensServed: 10,
    });
    expect(rules({ ...EAGLE, speculativeNumDraftTokens: 7 })).toEqual(["warning:V-S2"]);
    expect(message({ ...EAGLE, speculativeNumDraftTokens: 7 }, "V-S2")).toMatch(
      /corrected to 4 = --speculative-num-steps 3 \+ 1/,
    );
  });
  it("DSpark γ = 5 ⇒ 6; explicit γ; mismatching width and missing γ are V-S1 errors", () => {
    expect(resolve({ speculativeAlgorithm: "DSPARK" }, F0731).derived.draftTokens).toBe(6);
    expect(resolve({ speculativeAlgorithm: "DSPARK", speculativeDsparkBlockSize: 3 }).derived.draftTokens).toBe(4);
    expect(message({ speculativeAlgorithm: "DSPARK", speculativeNumDraftTokens: 4 }, "V-S1", F0731)).toMatch(
      /must equal gamma \+ 1 \(= 6 for gamma=5\)/,
    );
    expect(message({ speculativeAlgorithm: "DSPARK" }, "V-S1")).toMatch(/--speculative-dspark-block-size/);
    expect(message({ speculativeAlgorithm: "DSPARK", speculativeDsparkBlockSize: 0 }, "V-S1")).toMatch(/γ must be ≥ 1/);
  });
  it("adaptive: max draft = max(candidates) + 1, steps must be a candidate (V-S3)", () => {
    const r = resolve({ speculativeAlgorithm: "EAGLE", speculativeEagleTopk: 1, speculativeAdaptive: true });
    expect(r.derived).toMatchObject({ speculativeNumSteps: 5, draftTokens: 6, maxDraftTokens: 8 });
    expect(
      message(
        { speculativeAlgorithm: "EAGLE", speculativeEagleTopk: 1, speculativeAdaptive: true, speculativeNumSteps: 4 },
        "V-S3",
      ),
    ).toMatch(/4 is not one of the candidate steps \[1, 3, 5, 7\]/);
    // the ring check uses the largest adaptive count
    expect(
      message(
        {
          speculativeAlgorithm: "EAGLE",
          speculativeEagleTopk: 1,
          speculativeAdaptive: true,
          speculativeAdaptiveCandidates: [2, 10],
          speculativeNumSteps: 2,
        },
        "V-S8",
      ),
    ).toMatch(/speculative_num_draft_tokens=11 .*serves at most 10.*largest adaptive draft count, 11/);
  });
  it("V-S5: declared max below the configured count", () => {
    expect(message({ ...EAGLE, maxSpeculativeNumDraftTokens: 2 }, "V-S5")).toMatch(
      /declared max_speculative_num_draft_tokens=2, below the configured speculative_num_draft_tokens=4/,
    );
  });
});

describe("validation rules (startup-rules §5, §6, §7, §8), each with its message", () => {
  it("V-A1: only EAGLE and DSPARK (NEXTN and lower case refused before aliasing)", () => {
    expect(message({ speculativeAlgorithm: "NEXTN" }, "V-A1")).toMatch(
      /Only EAGLE \(and DSPARK\) speculative algorithms are supported for DeepseekV4ForCausalLM \(got --speculative-algorithm NEXTN\); use --speculative-algorithm EAGLE/,
    );
    expect(rules({ speculativeAlgorithm: "EAGLE3" })).toContain("error:V-A1");
  });
  it("V-A2: topk != 1 or unset", () => {
    expect(message({ ...EAGLE, speculativeEagleTopk: 4 }, "V-A2")).toMatch(
      /Only EAGLE with topk == 1 is supported .* is 4: set --speculative-eagle-topk 1/,
    );
    expect(message({ speculativeAlgorithm: "EAGLE", speculativeNumSteps: 3 }, "V-A2")).toMatch(/is unset/);
  });
  it("V-A3: kv dtype other than fp8_e4m3", () => {
    expect(message({ kvCacheDtype: "bfloat16" }, "V-A3")).toMatch(
      /--kv-cache-dtype bfloat16 is not supported for DeepseekV4ForCausalLM.*use --kv-cache-dtype fp8_e4m3/,
    );
  });
  it("V-A4: trtllm needs Blackwell, fp8, no HiSparse, no PD", () => {
    const r = resolve({ dsv4AttnBackend: "trtllm", enableHisparse: true, disaggregationMode: "prefill" });
    expect(r.issues.filter((i) => i.rule === "V-A4").map((i) => i.field)).toEqual([
      "gpuArch",
      "enableHisparse",
      "disaggregationMode",
    ]);
    expect(rules({ dsv4AttnBackend: "trtllm", gpuArch: "sm100" })).toEqual([]);
  });
  it("V-S6 / V-S9: online compress with speculation needs the experimental EAGLE switch", () => {
    expect(message({ ...EAGLE, onlineCompress: true }, "V-S6")).toMatch(
      /SGLANG_OPT_USE_ONLINE_COMPRESS does not support speculative decode \(MTP\) yet.*online c128 does not support MTP/,
    );
    expect(
      rules({
        speculativeAlgorithm: "DSPARK",
        speculativeDsparkBlockSize: 3,
        onlineCompress: true,
        onlineC128Mtp: true,
      }),
    ).toContain("error:V-S6");
    const ok = resolve({ ...EAGLE, onlineCompress: true, onlineC128Mtp: true });
    expect(ok.issues.map((i) => `${i.severity}:${i.rule}`)).toEqual(["warning:V-S7"]);
    expect(ok.derived).toMatchObject({ ringSizes: { c4: 16, c128: 1 }, maxDraftTokensServed: 10 });
    expect(rules({ onlineCompress: true, platform: "hip" })).toEqual([]);
    expect(resolve({ onlineCompress: true, platform: "hip" }).derived.onlineC128).toBe(false);
  });
  it("V-S8: ring/draft check names the limit; c128 only beyond 130; skipped for online c128", () => {
    expect(
      message({ speculativeAlgorithm: "EAGLE", speculativeEagleTopk: 1, speculativeNumSteps: 10 }, "V-S8"),
    ).toMatch(
      /speculative_num_draft_tokens=11 exceeds what the c4 compress state ring can keep resident \(ring_size=16 serves at most 10 draft tokens\)/,
    );
    expect(rules({ speculativeAlgorithm: "EAGLE", speculativeEagleTopk: 1, speculativeNumSteps: 9 })).toEqual([]);
  });
  it("V-D1: bad state dtype; bf16 with online compress", () => {
    expect(message({ compressStateDtype: "fp16" }, "V-D1")).toBe(
      "Unsupported SGLANG_DSV4_COMPRESS_STATE_DTYPE=fp16. Expected one of: float32, fp32, bfloat16, bf16.",
    );
    expect(resolve({ compressStateDtype: "bf16" }).derived.stateDtypeBytes).toBe(2);
    expect(message({ compressStateDtype: "bf16", onlineCompress: true }, "V-D1")).toMatch(
      /bf16 is not supported when SGLANG_OPT_USE_ONLINE_COMPRESS=1; online c128 state must stay float32/,
    );
  });
  it("V-H1: HiSparse ratio below 1", () => {
    expect(message({ enableHisparse: true, hisparseHostToDeviceRatio: 0.5 }, "V-H1")).toMatch(
      /host_to_device_ratio = 0.5 must be ≥ 1/,
    );
    expect(resolve({ enableHisparse: true }).derived.hisparseRatio).toBe(2);
  });
  it("all errors are collected in one resolution", () => {
    expect(
      rules({
        speculativeAlgorithm: "EAGLE",
        speculativeEagleTopk: 2,
        speculativeNumSteps: 3,
        kvCacheDtype: "auto2",
        compressStateDtype: "x",
      }).sort(),
    ).toEqual(["error:V-A2", "error:V-A3", "error:V-D1"]);
  });
});

describe("checkServerConfig: budget, sizing and capacity rules", () => {
  const gpu = (weightsGiB: number) => ({ kind: "gpu" as const, gpuMemoryGiB: 139, weightsGiB });
  it("V-M1 with the minimum viable fraction for the full Flash checkpoint on one H200 (pools-and-sizing §12.2)", () => {
    const r = checkServerConfig(args(EAGLE), FLASH, gpu(FLASH.checkpointGiB));
    expect(r.ok).toBe(false);
    expect(r.sizing).toBeNull();
    expect(r.errors.map((e) => e.rule)).toEqual(["V-M1"]);
    expect(r.errors[0]!.message).toMatch(/Raise --mem-fraction-static above 0.997/);
    expect(r.budget.minimumViableMemFraction).toBeCloseTo(0.996, 3);
  });
  it("at 0.997 the budget is below the c128 fixed bytes: V-P4 and V-M2 ('Not enough memory')", () => {
    const r = checkServerConfig(args({ ...EAGLE, memFractionStatic: 0.997 }), FLASH, gpu(FLASH.checkpointGiB));
    expect(r.errors.map((e) => e.rule)).toEqual(["V-P4", "V-M2"]);
    expect(r.errors[1]!.message).toMatch(
      /Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.997/,
    );
  });
  it("scenario B budget: both modes size, Gen B over-allocates vs its estimate only through padding and the draft layer", () => {
    const budget = { kind: "bytes" as const, kvBudgetBytes: 104_314_018_201 };
    const genB = checkServerConfig(args(EAGLE), FLASH, budget, { sizing: "sglang-gen-b" });
    expect(genB.ok).toBe(true);
    expect(genB.sizing!.sizes.maxTotalNumTokens).toBe(10_679_552);
    const exact = checkServerConfig(args(EAGLE), FLASH, budget);
    expect(exact.sizing!.sizes.maxTotalNumTokens).toBe(12_648_960);
    expect(exact.residency.map((c) => c.violations)).toEqual([0, 0]);
  });
  it("draft 11: V-S8 with the advisor's ring and cost, plus the residency failure", () => {
    const r = checkServerConfig(
      args({ speculativeAlgorithm: "EAGLE", speculativeEagleTopk: 1, speculativeNumSteps: 10 }),
      FLASH,
      { kind: "bytes", kvBudgetBytes: 104_314_018_201 },
    );
    expect(r.ok).toBe(false);
    const s8 = r.errors.find((e) => e.rule === "V-S8")!;
    expect(s8.message).toMatch(
      /serves at most 10 draft tokens.*Advisor: a c4 ring of 32 \(write pad 26\) would serve 11 draft tokens: c4 state .* capacity 12,648,960 → /,
    );
    expect(r.errors.some((e) => e.rule === "R1")).toBe(true);
    expect(r.advice.find((a) => a.ratio === 4)).toMatchObject({ ringSize: 32, currentServes: false });
  });
  it("V-W1: --max-total-tokens above the capacity warns; Gen B over-allocation warns", () => {
    const r = checkServerConfig(
      args({ ...EAGLE, maxTotalTokens: 50_000_000 }),
      FLASH,
      { kind: "bytes", kvBudgetBytes: 104_314_018_201 },
      { sizing: "sglang-gen-b" },
    );
    expect(r.warnings.map((w) => w.rule)).toContain("V-W1");
  });
  it("non-speculative: residency skipped, rings 8/128, no draft pool", () => {
    const r = checkServerConfig(args({}), FLASH, { kind: "bytes", kvBudgetBytes: 50e9 });
    expect(r.ok).toBe(true);
    expect(r.derived.ringSizes).toEqual({ c4: 8, c128: 128 });
    expect(r.residency.every((c) => c.skipped)).toBe(true);
    expect(r.sizing!.stages[0]!.pools.some((p) => p.name === "draft SWA KV")).toBe(false);
  });
});
