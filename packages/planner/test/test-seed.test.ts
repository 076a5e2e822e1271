import { afterEach, describe, expect, it, vi } from "vitest";
import { testSeed } from "../src/testing.js";

describe("testSeed", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.unstubAllGlobals();
  });

  it("reads DSV4KV_TEST_SEED when set", () => {
    vi.stubEnv("DSV4KV_TEST_SEED", "42");
    expect(testSeed(7)).toBe(42);
  });

  it("falls back when DSV4KV_TEST_SEED is unset or empty", () => {
    vi.stubEnv("DSV4KV_TEST_SEED", "");
    expect(testSeed(7)).toBe(7);
    delete process.env.DSV4KV_TEST_SEED;
    expect(testSeed(7)).toBe(7);
  });

  it("refuses a seed that is not a decimal integer", () => {
    vi.stubEnv("DSV4KV_TEST_SEED", "0x10");
    expect(() => testSeed(7)).toThrow(/decimal integer/);
  });

  it("falls back where there is no process global (a browser)", () => {
    vi.stubGlobal("process", undefined);
    let seed: number | undefined;
    try {
      seed = testSeed(7);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(seed).toBe(7);
  });
});
