// V41-R1 (docs/reference/ratio2-pair-ring.md#5-the-check-rule): a DeepSeek-V4.1 deployment whose ratio-2 pair-state
// ring, as SGLang sizes it from the draft count, cannot serve the block DSpark verifies is refused with the ring,
// the proved limit and the fix; every configuration SGLang itself starts passes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RULES, V41_MODEL_PRESETS, checkV41Deployment, v41PairRingStatus, type V41CheckInput } from "../src/index.js";

const flash = V41_MODEL_PRESETS["DeepSeek-V4.1-Flash"]!;
const BUDGET = { kind: "bytes", kvBudgetBytes: 58_143_119_769 } as const;
const check = (over: Partial<V41CheckInput> = {}) =>
  checkV41Deployment({ model: flash, resolvedAs: flash.name, budget: BUDGET, ...over });

/** The argv of a real V4.1 DSpark launch (test/fixtures/sglang-logs/manifest.json names its source). */
function realLaunchFlag(flag: string): string | undefined {
  const file = join(__dirname, "fixtures", "sglang-logs", "v41-local-ai-registry-rtxpro6000-tp4-launch-argv.log");
  const args = (JSON.parse(readFileSync(file, "utf8")) as { args: string[] }).args;
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

describe("V41-R1: the pair-state ring serves the verify width", () => {
  it("is in the RULES table", () => {
    expect(RULES["V41-R1"]).toMatchObject({ stage: "check", severities: ["error"] });
  });

  it("the real DSpark launch (block 5, width 6) gets R₂ 8, which serves 8: passes", () => {
    expect(realLaunchFlag("--speculative-algorithm")).toBe("DSPARK");
    const block = Number(realLaunchFlag("--speculative-dspark-block-size"));
    expect(realLaunchFlag("--speculative-num-draft-tokens")).toBeUndefined();
    const r = check({ speculativeAlgorithm: "DSPARK", speculativeDsparkBlockSize: block });
    expect(r.pairRing).toEqual({
      isSpeculative: true,
      ringSize: 8,
      verifyWidth: 6,
      servedDraftTokens: 8,
      ok: true,
      counterexample: null,
    });
    expect(r.errors.filter((e) => e.rule === "V41-R1")).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it("refuses a ring sized from 2 draft tokens under DSpark block 5: R₂ 4 serves 4, the block is 6", () => {
    const r = check({ speculativeDsparkBlockSize: 5, speculativeNumDraftTokens: 2 });
    expect(r.ok).toBe(false);
    expect(r.pairRing).toMatchObject({ ringSize: 4, verifyWidth: 6, servedDraftTokens: 4, ok: false });
    expect(r.pairRing!.counterexample).toEqual([
      "prefill of 1 token at prefix 0",
      "verify of D=6 at prefix 1, accept 2",
      "prefill of 1 token at prefix 3",
      expect.stringContaining("a rejected draft"),
    ]);
    const e = r.errors.find((x) => x.rule === "V41-R1")!;
    expect(e).toMatchObject({ code: "DRAFT_EXCEEDS_RING", field: "speculativeNumDraftTokens" });
    expect(e.message).toMatch(/R₂ = 4, which SGLang sizes from speculativeNumDraftTokens 2/);
    expect(e.message).toMatch(/serves verify blocks of at most 4 tokens/);
    expect(e.message).toMatch(/speculativeDsparkBlockSize 5 verifies 6/);
    expect(e.message).toMatch(/drop speculativeNumDraftTokens .* or raise it to 6/);
  });

  it("names the flags through fieldName, as the CLI renders them", () => {
    const r = check({
      speculativeDsparkBlockSize: 13,
      speculativeNumDraftTokens: 6,
      fieldName: (f) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    });
    const e = r.errors.find((x) => x.rule === "V41-R1")!;
    expect(e.field).toBe("--speculative-num-draft-tokens");
    expect(e.message).toMatch(/R₂ = 8, which SGLang sizes from --speculative-num-draft-tokens 6/);
    expect(e.message).toMatch(/--speculative-dspark-block-size 13 verifies 14/);
  });

  it("every block size with SGLang's own width (γ + 1) passes, and so does a ring sized from a larger count", () => {
    for (let gamma = 1; gamma <= 30; gamma++) {
      expect(check({ speculativeDsparkBlockSize: gamma }).pairRing!.ok, `γ ${gamma}`).toBe(true);
    }
    expect(check({ speculativeDsparkBlockSize: 5, speculativeNumDraftTokens: 9 }).pairRing).toMatchObject({
      ringSize: 16,
      verifyWidth: 9,
      ok: true,
    });
  });

  it("refuses exactly when the ring SGLang sizes from D is narrower than the block: D < γ + 1 is not enough", () => {
    // γ 5: D 3..5 still get R₂ 8 >= 6 (served), D 1..2 get R₂ 4 < 6
    const verdicts = [1, 2, 3, 4, 5].map(
      (d) => check({ speculativeDsparkBlockSize: 5, speculativeNumDraftTokens: d }).pairRing!.ok,
    );
    expect(verdicts).toEqual([false, false, true, true, true]);
  });

  it("without speculation the ring of 2 serves decode and extend", () => {
    expect(check({ speculativeAlgorithm: null }).pairRing).toMatchObject({
      isSpeculative: false,
      ringSize: 2,
      ok: true,
    });
    expect(
      v41PairRingStatus({
        isSpeculative: false,
        ringDraftTokens: 0,
        verifyWidth: 0,
        ringSource: "",
        widthSource: "",
        field: "x",
        fix: "",
      }).ok,
    ).toBe(true);
  });
});
