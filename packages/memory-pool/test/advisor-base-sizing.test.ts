import { describe, expect, it } from "vitest";
import { MemoryPoolError, adviseRingSizes, sizeKvCache } from "../src/index.js";
import { SCENARIO_B_BYTES, flashSpec } from "./fixtures.js";

const config = flashSpec({ maxDraftTokens: 11 });

function refusal(run: () => unknown): MemoryPoolError {
  try {
    run();
  } catch (error) {
    if (MemoryPoolError.isInstance(error)) return error as MemoryPoolError;
    throw error;
  }
  throw new Error("expected a MemoryPoolError");
}

describe("adviseRingSizes baseSizing option", () => {
  it("gives the same advice with the caller's base sizing as when it sizes the base itself", () => {
    const base = sizeKvCache(config, SCENARIO_B_BYTES);
    expect(adviseRingSizes(config, SCENARIO_B_BYTES, 11, { baseSizing: base })).toEqual(
      adviseRingSizes(config, SCENARIO_B_BYTES, 11),
    );
  });

  it("a null base (the sizing threw) prices the current ring as null", () => {
    const [c4] = adviseRingSizes(config, SCENARIO_B_BYTES, 11, { baseSizing: null });
    expect(c4).toMatchObject({ stateBytesCurrent: null, capacityTokensCurrent: null });
    expect(c4!.capacityTokensAdvised).not.toBeNull();
  });

  it("refuses an unknown option key with a suggestion", () => {
    const e = refusal(() => adviseRingSizes(config, SCENARIO_B_BYTES, 11, { baseSizng: null } as never));
    expect(e).toMatchObject({ code: "UNKNOWN_KEY", field: "baseSizng", params: { suggestion: "baseSizing" } });
  });

  it("refuses options that are not an object", () => {
    const e = refusal(() => adviseRingSizes(config, SCENARIO_B_BYTES, 11, "base" as never));
    expect(e).toMatchObject({ code: "INVALID_TYPE", field: "options" });
  });

  it("refuses a base sized for another budget or another mode", () => {
    const otherBytes = sizeKvCache(config, SCENARIO_B_BYTES - 256);
    const bytes = refusal(() => adviseRingSizes(config, SCENARIO_B_BYTES, 11, { baseSizing: otherBytes }));
    expect(bytes).toMatchObject({ code: "INVALID_ARGUMENT", field: "baseSizing" });
    expect(bytes.params).toMatchObject({ expectedAvailableBytes: SCENARIO_B_BYTES });
    const genB = sizeKvCache({ ...config, mode: "sglang-gen-b" }, SCENARIO_B_BYTES);
    const mode = refusal(() => adviseRingSizes(config, SCENARIO_B_BYTES, 11, { baseSizing: genB }));
    expect(mode).toMatchObject({ code: "INVALID_ARGUMENT", field: "baseSizing" });
    expect(mode.params).toMatchObject({ mode: "sglang-gen-b", expectedMode: "exact" });
  });
});
