// parseServerArgs and checkServerConfig given what is not their input refuse it by name (before: TypeErrors
// "Cannot convert undefined or null to object" and "Cannot read properties of null (reading 'contextLen')").
import { describe, expect, test } from "vitest";
import {
  MODEL_PRESETS,
  ServerConfigError,
  checkServerConfig,
  parseServerArgs,
  resolveServerConfig,
} from "../src/index.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const budget = { kind: "bytes", kvBudgetBytes: 2 ** 34 } as const;
const parsed = parseServerArgs({});
if (!parsed.ok) throw new Error("default args refused");
const args = parsed.args;

function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect(ServerConfigError.isInstance(e), String(e)).toBe(true);
    const { code, field } = e as ServerConfigError;
    return { code, field };
  }
  throw new Error("accepted");
}

describe("parseServerArgs refuses a non-object in its result", () => {
  test.each([null, undefined, 5, "tp-size 8", [["tpSize", 8]]])("%j", (raw) => {
    const r = parseServerArgs(raw as never);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => [e.code, e.field])).toEqual([["INVALID_TYPE", "args"]]);
  });
});

describe("checkServerConfig and resolveServerConfig refuse bad args and models by field", () => {
  test.each([
    [null, FLASH, "INVALID_TYPE", "args"],
    [{ ...args, tpSize: "8" }, FLASH, "INVALID_TYPE", "tpSize"],
    [{ ...args, bogus: 1 }, FLASH, "INVALID_ARGUMENT", "args"],
    [args, null, "INVALID_TYPE", "model"],
    [args, { ...FLASH, compressRatios: null }, "INVALID_TYPE", "model.compressRatios"],
    [args, { ...FLASH, numHiddenLayers: 0 }, "INVALID_ARGUMENT", "model.numHiddenLayers"],
    [args, { ...FLASH, compressRatios: [0, 4] }, "INVALID_ARGUMENT", "model.compressRatios"],
  ])("args %#", (a, model, code, field) => {
    expect(refusal(() => checkServerConfig(a as never, model as never, budget))).toEqual({ code, field });
    expect(refusal(() => resolveServerConfig(a as never, model as never))).toEqual({ code, field });
  });
  test("a preset and a custom model without parallel facts still check", () => {
    expect(checkServerConfig(args, FLASH, budget).ok).toBe(true);
    const { numAttentionHeads, oGroups, nRoutedExperts, moeIntermediateSize, ...bare } = FLASH;
    expect(checkServerConfig(args, { ...bare, checkpointGiB: Number.NaN }, budget).ok).toBe(true);
  });
});

describe("args with a key left undefined are read as parseServerArgs would give them (found by the fuzz test)", () => {
  test("compressStateDtype: undefined takes its default instead of a TypeError in the resolution", () => {
    const report = checkServerConfig({ ...args, compressStateDtype: undefined } as never, FLASH, budget);
    expect(report.ok).toBe(true);
    expect(report.args.compressStateDtype).toBe("float32");
  });
});
