/** The vLLM model refuses bad inputs with a ServerConfigError naming the field, the value and the rule. */
import { thrownError } from "@dsv4-kv/errors/testing";
import { describe, expect, test } from "vitest";
import { MODEL_PRESETS, ServerConfigError } from "../src/index.js";
import { planVllmKvCache, resolveVllmKvInput, VLLM_DEFAULTS, type VllmKvInput } from "../src/vllm/index.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const OK: VllmKvInput = { model: FLASH, maxModelLen: 4096, budget: { kind: "availableBytes", bytes: 1e10 } };

function refusal(over: Record<string, unknown>) {
  const e = thrownError(() => resolveVllmKvInput({ ...OK, ...over }), ServerConfigError);
  return { code: e.code, field: e.field, value: e.value };
}

describe("defaults", () => {
  test("stated once and filled in; an explicit undefined takes the default", () => {
    const v = resolveVllmKvInput({ ...OK, blockSize: undefined, speculative: undefined });
    expect(v).toMatchObject({ ...VLLM_DEFAULTS, speculative: null, numGpuBlocksOverride: null });
    expect(VLLM_DEFAULTS).toEqual({
      blockSize: 256,
      kvCacheDtype: "fp8",
      fp4IndexerCache: false,
      maxNumBatchedTokens: 8192,
      asyncScheduling: true,
      pipelineParallelSize: 1,
      modelRunnerV2: false,
    });
    expect(
      planVllmKvCache({ ...OK, budget: { kind: "gpu", totalDeviceBytes: 100, weightsBytes: 0 } }).budget,
    ).toMatchObject({ requestedBytes: 92 });
  });
});

describe("refusals", () => {
  const cases: [Record<string, unknown>, string, string, unknown][] = [
    [{ maxModelLen: 0 }, "INVALID_ARGUMENT", "maxModelLen", 0],
    [{ maxModelLen: "4096" }, "INVALID_TYPE", "maxModelLen", "4096"],
    [{ maxModelLen: 1.5 }, "INVALID_ARGUMENT", "maxModelLen", 1.5],
    [{ blockSize: 64 }, "INVALID_ARGUMENT", "blockSize", 64],
    [{ blockSize: 320 }, "INVALID_ARGUMENT", "blockSize", 320],
    [{ kvCacheDtype: "auto" }, "INVALID_ARGUMENT", "kvCacheDtype", "auto"],
    [{ kvCacheDtype: "nvfp4_ds_mla" }, "INVALID_ARGUMENT", "kvCacheDtype", "nvfp4_ds_mla"],
    [{ fp4IndexerCache: "yes" }, "INVALID_TYPE", "fp4IndexerCache", "yes"],
    [{ maxNumBatchedTokens: -1 }, "INVALID_ARGUMENT", "maxNumBatchedTokens", -1],
    [{ asyncScheduling: 1 }, "INVALID_TYPE", "asyncScheduling", 1],
    [{ pipelineParallelSize: 0 }, "INVALID_ARGUMENT", "pipelineParallelSize", 0],
    [{ numGpuBlocksOverride: 0 }, "INVALID_ARGUMENT", "numGpuBlocksOverride", 0],
    [{ maxModelLenn: 4096 }, "UNKNOWN_KEY", "maxModelLenn", "maxModelLenn"],
    [{ speculative: { method: "eagle", numSpeculativeTokens: 3 } }, "INVALID_ARGUMENT", "speculative.method", "eagle"],
    [
      { speculative: { method: "mtp", numSpeculativeTokens: 0 } },
      "INVALID_ARGUMENT",
      "speculative.numSpeculativeTokens",
      0,
    ],
    [{ speculative: { method: "mtp", k: 3 } }, "UNKNOWN_KEY", "speculative.k", "k"],
    [{ budget: { kind: "free", bytes: 1 } }, "INVALID_ARGUMENT", "budget.kind", "free"],
    [{ budget: { kind: "availableBytes", bytes: -1 } }, "INVALID_ARGUMENT", "budget.bytes", -1],
    [{ budget: { kind: "availableBytes", bytes: 1, extra: 2 } }, "UNKNOWN_KEY", "budget.extra", "extra"],
    [
      { budget: { kind: "gpu", totalDeviceBytes: 0, weightsBytes: 0 } },
      "INVALID_ARGUMENT",
      "budget.totalDeviceBytes",
      0,
    ],
    [
      { budget: { kind: "gpu", totalDeviceBytes: 10, weightsBytes: 0, gpuMemoryUtilization: 1.2 } },
      "INVALID_ARGUMENT",
      "budget.gpuMemoryUtilization",
      1.2,
    ],
    [
      { budget: { kind: "gpu", totalDeviceBytes: 10, weightsBytes: 0, gpuMemoryUtilization: "0.9" } },
      "INVALID_TYPE",
      "budget.gpuMemoryUtilization",
      "0.9",
    ],
    [
      { budget: { kind: "gpu", totalDeviceBytes: 10, weightsBytes: 0, cudaGraphBytes: -5 } },
      "INVALID_ARGUMENT",
      "budget.cudaGraphBytes",
      -5,
    ],
    [{ model: null }, "INVALID_TYPE", "model", null],
    [{ model: { ...FLASH, compressRatios: [4, 8] } }, "INVALID_ARGUMENT", "model.compressRatios", 2],
    [
      {
        model: { ...FLASH, compressRatios: [...FLASH.compressRatios.slice(0, 5), 8, ...FLASH.compressRatios.slice(6)] },
      },
      "INVALID_ARGUMENT",
      "model.compressRatios[5]",
      8,
    ],
    [{ model: { ...FLASH, qkNopeHeadDim: 0 } }, "INVALID_ARGUMENT", "model.qkNopeHeadDim", 0],
  ];
  test.each(cases.map(([over, code, field, value]) => ({ over, code, field, value })))(
    "$code at $field",
    ({ over, code, field, value }) => {
      expect(refusal(over)).toEqual({ code, field, value });
    },
  );

  test("MTP needs MTP layers in the checkpoint", () => {
    const model = { ...FLASH, mtpLayers: 0 };
    expect(refusal({ model, speculative: { method: "mtp", numSpeculativeTokens: 1 } })).toEqual({
      code: "INVALID_ARGUMENT",
      field: "speculative.method",
      value: "mtp",
    });
  });

  test("a non-object input is refused, not read", () => {
    const e = thrownError(() => resolveVllmKvInput("fast please"), ServerConfigError);
    expect([e.code, e.field]).toEqual(["INVALID_TYPE", "input"]);
  });
});
