import { Dsv4KvError } from "@dsv4-kv/errors";
import { describe, expect, it } from "vitest";
import {
  MODEL_PRESETS,
  RULES,
  ServerConfigError,
  checkServerConfig,
  flagName,
  parseServerArgs,
  resolveServerConfig,
  type BudgetInput,
  type ServerArgs,
} from "../src/index.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const EAGLE = { speculativeAlgorithm: "EAGLE", speculativeNumSteps: 3, speculativeEagleTopk: 1 };

function parsed(raw: Record<string, unknown>, fromFlags = false) {
  return parseServerArgs(raw, fromFlags ? { fromFlags, fieldName: flagName } : {});
}
function args(raw: Record<string, unknown> = {}): ServerArgs {
  const r = parsed(raw);
  if (!r.ok) throw new Error(r.issues.join("\n"));
  return r.args;
}
function errorsOf(raw: Record<string, unknown>, fromFlags = false) {
  const r = parsed(raw, fromFlags);
  return r.ok ? [] : r.errors;
}
function checkThrows(budget: unknown, input: Record<string, unknown> = EAGLE): ServerConfigError {
  let error: unknown;
  try {
    checkServerConfig(args(input), FLASH, budget as BudgetInput, { fieldName: flagName });
  } catch (e) {
    error = e;
  }
  expect(ServerConfigError.isInstance(error), String(error)).toBe(true);
  return error as ServerConfigError;
}

describe("parseServerArgs: no coercion, strict flag strings, unknown keys with a suggestion", () => {
  it("a string is never a number or a boolean outside flag mode", () => {
    expect(errorsOf({ memFractionStatic: "0.85" })[0]).toMatchObject({
      code: "INVALID_TYPE",
      field: "memFractionStatic",
    });
    expect(errorsOf({ enableHisparse: "false" })[0]).toMatchObject({ code: "INVALID_TYPE", field: "enableHisparse" });
  });
  it("flag strings: plain decimals only (0x1 was 1.0), named as the flag", () => {
    for (const text of ["0x1", "", " 0.5", "0.5 ", "1e999", "Infinity", "NaN", ".5", "+1"]) {
      const [e] = errorsOf({ "mem-fraction-static": text }, true);
      expect(e, text).toMatchObject({ code: "INVALID_TYPE", field: "--mem-fraction-static", value: text });
    }
    expect(parsed({ "mem-fraction-static": "0.85", "page-size": "256", "tp-size": "8" }, true)).toMatchObject({
      ok: true,
      args: { memFractionStatic: 0.85, pageSize: 256, tpSize: 8 },
    });
    expect(parsed({ "mem-fraction-static": "8.5e-1" }, true)).toMatchObject({ args: { memFractionStatic: 0.85 } });
  });
  it("flag strings: booleans are true/false only; lists are comma-separated decimals", () => {
    expect(parsed({ "enable-hisparse": "true" }, true)).toMatchObject({ args: { enableHisparse: true } });
    expect(errorsOf({ "enable-hisparse": "yes" }, true)[0]).toMatchObject({ field: "--enable-hisparse" });
    expect(parsed({ "speculative-adaptive-candidates": "1,3,5" }, true)).toMatchObject({
      args: { speculativeAdaptiveCandidates: [1, 3, 5] },
    });
    expect(errorsOf({ "speculative-adaptive-candidates": "1,0x3" }, true)[0]?.code).toBe("INVALID_TYPE");
  });
  it("range errors name the field as typed; numbers must be finite", () => {
    expect(errorsOf({ "mem-fraction-static": "1.5" }, true)[0]).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "--mem-fraction-static",
      value: 1.5,
    });
    expect(errorsOf({ swaFullTokensRatio: Number.POSITIVE_INFINITY })[0]?.field).toBe("swaFullTokensRatio");
  });
  it("an unknown key is refused with a suggestion in the caller's naming", () => {
    const [e] = errorsOf({ "mem-fraction-statik": "0.8" }, true);
    expect(e).toMatchObject({ code: "UNKNOWN_KEY", field: "--mem-fraction-statik" });
    expect(e!.params.suggestion).toBe("--mem-fraction-static");
    expect(e!.message).toMatch(/did you mean "--mem-fraction-static"\?/);
  });
  it("one argument in two spellings is refused", () => {
    expect(errorsOf({ "page-size": 256, pageSize: 128 })[0]).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "pageSize",
    });
  });
  it("errors are Dsv4KvErrors (isInstance across copies)", () => {
    const [e] = errorsOf({ bogus: 1 });
    expect(Dsv4KvError.isInstance(e)).toBe(true);
    expect(e!.name).toBe("ServerConfigError");
  });
});

describe("checkServerConfig: budget inputs that make no sense are refused", () => {
  const gpu = { kind: "gpu", gpuMemoryGiB: 139, weightsGiB: 17.3 };
  it("negative weights (they used to add 100 GiB of KV)", () => {
    expect(checkThrows({ ...gpu, weightsGiB: -100 })).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "--weights-gib",
      value: -100,
    });
  });
  it("non-finite or non-positive GPU memory, negative runtime", () => {
    expect(checkThrows({ ...gpu, gpuMemoryGiB: Number.NaN }).field).toBe("--gpu-memory-gib");
    expect(checkThrows({ ...gpu, gpuMemoryGiB: 0 }).field).toBe("--gpu-memory-gib");
    expect(checkThrows({ ...gpu, runtimeGiB: -1 }).field).toBe("--runtime-gib");
  });
  it("a byte budget that is negative, fractional or a string", () => {
    expect(checkThrows({ kind: "bytes", kvBudgetBytes: -1 }).field).toBe("--kv-budget-bytes");
    expect(checkThrows({ kind: "bytes", kvBudgetBytes: 1.5 }).field).toBe("--kv-budget-bytes");
    expect(checkThrows({ kind: "bytes", kvBudgetBytes: "1e9" }).code).toBe("INVALID_TYPE");
  });
  it("a mem fraction outside (0, 1] that bypassed the schema", () => {
    const bad = { ...args(EAGLE), memFractionStatic: 0 };
    expect(() => checkServerConfig(bad, FLASH, gpu as BudgetInput)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", field: "memFractionStatic" }),
    );
  });
  it("an unknown budget key, with a suggestion", () => {
    const e = checkThrows({ ...gpu, weightGiB: 1 });
    expect(e).toMatchObject({ code: "UNKNOWN_KEY", params: { suggestion: "weightsGiB" } });
  });
});

describe("issues carry a code, a typed rule and params; decisions are on them", () => {
  it("every issue's rule is in the table and its severity is one the rule raises", () => {
    const r = checkServerConfig(args({ ...EAGLE, speculativeNumSteps: 10, kvCacheDtype: "bf16" }), FLASH, {
      kind: "bytes",
      kvBudgetBytes: 104_314_018_201,
    });
    for (const issue of [...r.errors, ...r.warnings]) {
      expect(RULES[issue.rule].severities as readonly string[]).toContain(issue.severity);
      expect(typeof issue.code).toBe("string");
    }
    expect(r.errors.find((e) => e.rule === "V-A3")).toMatchObject({ code: "UNSUPPORTED_ARGUMENT" });
  });
  it("V-S8 carries the ring's numbers; the advisor is attached by params.ratio", () => {
    const r = checkServerConfig(args({ ...EAGLE, speculativeNumSteps: 10 }), FLASH, {
      kind: "bytes",
      kvBudgetBytes: 104_314_018_201,
    });
    const s8 = r.errors.find((e) => e.rule === "V-S8")!;
    expect(s8).toMatchObject({ code: "DRAFT_EXCEEDS_RING", params: { ratio: 4, ringSize: 16, writePad: 10 } });
    expect(s8.params.advice).toMatch(/a c4 ring of 32/);
    expect(r.errors.find((e) => e.rule === "R1")).toMatchObject({ code: "RESIDENCY", params: { ratio: 4 } });
  });
  it("V-S8 is reported once per ratio over PP stages (de-duplicated on params, not message)", () => {
    const r = resolveServerConfig(args({ ...EAGLE, speculativeNumSteps: 200, ppSize: 2 }), FLASH);
    expect(r.issues.filter((i) => i.rule === "V-S8").map((i) => i.params.ratio)).toEqual([4, 128]);
  });
  it("V-M1 and V-M2 keep upstream's words and carry the budget's numbers", () => {
    const whole = { kind: "gpu" as const, gpuMemoryGiB: 139, weightsGiB: FLASH.checkpointGiB };
    const m1 = checkServerConfig(args(EAGLE), FLASH, whole).errors[0]!;
    expect(m1).toMatchObject({ rule: "V-M1", code: "NO_MEMORY", params: { minimumViableFractionRoundedUp: 0.997 } });
    const m2 = checkServerConfig(args({ ...EAGLE, memFractionStatic: 0.997 }), FLASH, whole).errors;
    expect(m2.map((e) => [e.rule, e.code])).toEqual([
      ["V-P4", "SWA_FLOOR"],
      ["V-M2", "NOT_ENOUGH_MEMORY"],
    ]);
    expect(m2[0]!.params).toMatchObject({ minimumSwaTokens: 512, pageSize: 256 });
  });
});
