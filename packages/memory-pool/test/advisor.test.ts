import { runResidencyScenario } from "@dsv4-kv/planner";
import { describe, expect, it } from "vitest";
import { adviseRingSizes, smallestRingForDraftTokens, validRingSizes } from "../src/index.js";
import { SCENARIO_B_BYTES, flashSpec } from "./fixtures.js";

describe("ring-sizing advisor", () => {
  it("valid rings are multiples of the ratio dividing the SWA page size", () => {
    expect(validRingSizes(4, 256)).toEqual([4, 8, 16, 32, 64, 128, 256]);
    expect(validRingSizes(128, 256)).toEqual([128, 256]);
  });

  it("D = 11 needs c4 ring 32 (pad 26); D = 10 keeps 16; c128 beyond 130 has no ring at P = 256", () => {
    expect(smallestRingForDraftTokens(4, 11, 256)).toMatchObject({
      ringSize: 32,
      writePad: 26,
      nextSmallerRingSize: 16,
    });
    expect(smallestRingForDraftTokens(4, 10, 256)).toMatchObject({
      ringSize: 16,
      writePad: 10,
      nextSmallerRingSize: 8,
    });
    expect(smallestRingForDraftTokens(128, 130, 256)).toMatchObject({ ringSize: 256 });
    const none = smallestRingForDraftTokens(128, 131, 256);
    expect(none.ringSize).toBeNull();
    expect(none.reason).toMatch(/serves 130/);
  });

  for (const [ratio, draftTokens] of [
    [4, 11],
    [4, 27],
    [4, 5],
    [128, 40],
  ] as const) {
    it(`c${ratio} D = ${draftTokens}: the advised ring passes the residency checker, the next smaller one fails`, () => {
      const choice = smallestRingForDraftTokens(ratio, draftTokens, 256);
      const ok = runResidencyScenario({
        compressRatio: ratio,
        ringSize: choice.ringSize!,
        swaPageSize: 256,
        draftTokens,
        steps: 300,
        seed: 7,
      });
      expect(ok.violations).toBe(0);
      const smaller = runResidencyScenario({
        compressRatio: ratio,
        ringSize: choice.nextSmallerRingSize!,
        swaPageSize: 256,
        draftTokens,
        steps: 300,
        seed: 7,
      });
      expect(smaller.violations).toBeGreaterThan(0);
    });
  }

  it("prices the advised ring at a budget: more state bytes, fewer tokens", () => {
    const [c4, c128] = adviseRingSizes(flashSpec({ maxDraftTokens: 11 }), SCENARIO_B_BYTES, 11);
    expect(c4).toMatchObject({ ratio: 4, currentRingSize: 16, currentServes: false, ringSize: 32 });
    expect(c4!.stateBytesAdvised!).toBeGreaterThan(c4!.stateBytesCurrent!);
    expect(c4!.capacityTokensAdvised!).toBeLessThan(c4!.capacityTokensCurrent!);
    expect(c128).toMatchObject({ ratio: 128, currentServes: true, ringSize: 256 });
  });
});
