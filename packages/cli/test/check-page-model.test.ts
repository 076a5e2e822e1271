// The check page's DOM-free parts: the URL fragment (parsed by the CLI's flag table), the ring during one verify
// (from the planner's plans, confirmed by the residency simulator) and the capacity sweep.
import { MODEL_PRESETS } from "@dsv4-kv/server-config";
import { describe, expect, test } from "vitest";
import type { CheckPayload } from "../src/report-html/check-payload.js";
import { capacitySweep } from "../src/report-html/page/capacity-model.js";
import { fragmentOf, parseFragment, pipelineInput } from "../src/report-html/page/check-state.js";
import { ringPicture } from "../src/report-html/page/ring-model.js";

const payload: CheckPayload = {
  kind: "check",
  inputs: {
    values: {},
    model: { source: "preset", name: "DeepSeek-V4-Flash", resolvedAs: "preset DeepSeek-V4-Flash" },
    ignored: [],
    budget: { kind: "gpu", gpuMemoryGiB: 139, weightsGiB: 17, runtimeGiB: 0 },
  },
  report: {} as CheckPayload["report"],
};

describe("the URL fragment", () => {
  test("takes check's flags, parsed as the CLI parses them", () => {
    const read = parseFragment(
      "speculative-num-draft-tokens=11&tp-size=4&online-compress&enable-hisparse=false&model=DeepSeek-V4-Pro" +
        "&mem-fraction-static=0.9&speculative-adaptive-candidates=1,3",
    );
    expect(read.errors).toEqual([]);
    expect(read.overrides).toEqual({
      "speculative-num-draft-tokens": 11,
      "tp-size": 4,
      "online-compress": true,
      "enable-hisparse": false,
      model: "DeepSeek-V4-Pro",
      "mem-fraction-static": 0.9,
      "speculative-adaptive-candidates": [1, 3],
    });
  });

  test("round-trips through fragmentOf, the controls' flags first", () => {
    const overrides = { "context-length": 65536, "speculative-adaptive": true, "tp-size": 2, model: "DeepSeek-V4-Pro" };
    const text = fragmentOf(overrides);
    expect(text).toBe("model=DeepSeek-V4-Pro&tp-size=2&context-length=65536&speculative-adaptive=true");
    expect(parseFragment(text).overrides).toEqual(overrides);
  });

  test.each([
    [
      "a value out of range",
      "speculative-num-draft-tokens=0",
      "--speculative-num-draft-tokens",
      0,
      "must be in [1, 65535]",
    ],
    ["not an integer", "tp-size=4.5", "--tp-size", "4.5", "must be an integer"],
    ["no hex or exponent", "tp-size=0x4", "--tp-size", "0x4", "must be an integer"],
    ["a switch word", "online-compress=maybe", "--online-compress", "maybe", "must be one of 1, true"],
    ["a choice", "sizing=fast", "--sizing", "fast", "must be one of exact, sglang-gen-b"],
    ["a value missing", "tp-size", "--tp-size", undefined, "needs a value"],
    ["a file flag", "config=a.yaml", "--config", undefined, "is not a setting of the check page"],
    ["bad percent-encoding", "model=%E0%A4%A", "--model", "%E0%A4%A", "is not valid percent-encoding"],
  ])("refuses %s with a typed error, keeping the other entries", (_, entry, field, value, rule) => {
    const read = parseFragment(`tp-size=2&${entry}`);
    expect(read.overrides["tp-size"]).toBe(2);
    expect(read.errors).toHaveLength(1);
    expect(read.errors[0]).toMatchObject({ code: "USAGE", field, value });
    expect(read.errors[0]!.rule).toContain(rule);
  });

  test("an unknown flag is refused with a suggestion", () => {
    const [error] = parseFragment("speculative-num-draft-token=5").errors;
    expect(error).toMatchObject({
      field: "--speculative-num-draft-token",
      params: { suggestion: "--speculative-num-draft-tokens" },
    });
  });

  test("a model override is a preset name; an unknown one is the CLI's typed refusal", () => {
    expect(pipelineInput(payload, { model: "deepseek-v4-pro" }).model).toBe(MODEL_PRESETS["DeepSeek-V4-Pro"]);
    expect(() => pipelineInput(payload, { model: "deepseek-v4-flsh" })).toThrow(
      expect.objectContaining({
        field: "--model",
        params: expect.objectContaining({ suggestion: "DeepSeek-V4-Flash" }),
      }),
    );
  });
});

describe("the ring during one verify", () => {
  test("c4 ring 16 serves 10 draft tokens: every needed position is held", () => {
    const p = ringPicture(4, 16, 256, 10);
    expect(p.writePad).toBe(10);
    expect(p.cells.filter((c) => c.needed)).toHaveLength(p.nextPrefix - p.neededFrom);
    expect(p.cells.some((c) => c.lost)).toBe(false);
    expect(p.clobberedSlots).toEqual([]);
    expect(p.violations).toEqual([]);
    // the batch's rejected drafts and the pad are drawn
    expect(p.cells.filter((c) => c.state === "rejected")).toHaveLength(9);
    expect(p.cells.filter((c) => c.inPad)).toHaveLength(10);
  });

  test("11 draft tokens clobber the slot of the window's first position, as the simulator finds", () => {
    const p = ringPicture(4, 16, 256, 11);
    expect(p.clobberedSlots).toEqual([0]);
    const lost = p.cells.filter((c) => c.lost);
    expect(lost.map((c) => [c.position, c.heldBy, c.heldByThisBatch])).toEqual([
      [p.neededFrom, p.seqLen - 1, true],
      [p.prefix, p.prefix - 16, false],
    ]);
    // the simulator's two violations name the same positions
    expect(p.violations).toHaveLength(2);
    expect(p.violations[0]).toContain(`needs position ${p.neededFrom}, but slot`);
    expect(p.violations[0]).toContain(`holds position ${p.seqLen - 1} (a rejected draft)`);
    expect(p.violations[1]).toContain(`needs position ${p.prefix}`);
  });

  test("c128 ring 256: 130 served, 131 clobbers", () => {
    expect(ringPicture(128, 256, 256, 130).violations).toEqual([]);
    const p = ringPicture(128, 256, 256, 131);
    expect(p.clobberedSlots).toHaveLength(1);
    expect(p.violations.length).toBeGreaterThan(0);
  });
});

describe("the capacity sweep", () => {
  test("the current c4 ring serves up to 10; from 11 the advisor's ring 32 and its capacity", () => {
    const points = capacitySweep(pipelineInput(payload, {}), 16);
    expect(points.map((p) => p.draftTokens)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(points.filter((p) => p.currentServes).map((p) => p.draftTokens)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(points.slice(0, 10).map((p) => p.ringC4))).toEqual(new Set([16]));
    expect(new Set(points.slice(10).map((p) => p.ringC4))).toEqual(new Set([32]));
    for (const p of points.slice(10)) expect(p.tokensAdvised!).toBeLessThan(p.tokens!);
    expect(points.slice(10).every((p) => !p.ok)).toBe(true);
    expect(points[3]!.requestsAtFullContext).toBe(Math.floor(points[3]!.tokens! / 1_048_576));
  });
});
