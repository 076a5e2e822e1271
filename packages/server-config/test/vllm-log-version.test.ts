/**
 * Which vLLM's sizing reconciles a log (docs/decisions.md D45): --vllm-version, else the version the log printed,
 * else the default; the boundary of the sliding groups' in-flight reservation at 0.26.0 (vLLM PR 47728), the warning
 * when the flag and the log disagree, and the alternative a log without a version gets.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { MODEL_PRESETS, VllmLogComparisonSchema } from "../src/index.js";
import { vllmVersionBehaviour } from "../src/vllm/versions.js";
import { parseVllmLog, reconcileVllmLog } from "../src/vllm-log/index.js";
import type { VllmLogComparison } from "../src/vllm-log/index.js";

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const text = (file: string) => readFileSync(new URL(`./fixtures/vllm-logs/${file}`, import.meta.url), "utf8");
const RTX = "rtxpro6000-tp2-v0250-mtp2.txt";
const B12X = "b12x-sm120-tp2-v0261-dspark5.txt";

function reconcile(logText: string, vllmVersion?: string): VllmLogComparison {
  const c = reconcileVllmLog(parseVllmLog(logText), {
    model: FLASH,
    modelName: FLASH.name,
    ...(vllmVersion === undefined ? {} : { vllmVersion }),
  });
  expect(VllmLogComparisonSchema.parse(c)).toEqual(c);
  return c;
}
const figure = (c: VllmLogComparison, name: string) => c.figures.find((f) => f.name === name)!;

describe("the in-flight reservation changed in 0.26.0", () => {
  test("0.25.x sizes with the batched tokens alone, 0.26.0 and later with every concurrent batch", () => {
    expect(vllmVersionBehaviour("0.25.1").inFlight).toBe("batchedTokens");
    expect(vllmVersionBehaviour("0.26.0").inFlight).toBe("concurrentBatches");
    expect(vllmVersionBehaviour("0.26.1rc0+infernal.b12x").id).toBe("0.26");
    expect(vllmVersionBehaviour("0.27.1").id).toBe("0.26");
  });
});

describe("the log's version sizes it", () => {
  test("the 0.25.0 log is sized as 0.25: its concurrency 1.90x within rounding (the default's rule gives 1.48)", () => {
    const c = reconcile(text(RTX));
    expect(c.versionUsed).toMatchObject({ version: "0.25.0", from: "log", logVersion: "0.25.0" });
    expect(c.versionUsed.behaviour.inFlight).toBe("batchedTokens");
    expect(figure(c, "maxConcurrency")).toMatchObject({ logged: "1.90", verdict: "within-rounding" });
    // The token figure stays 0.2 % high: 0.23-0.25's sizing is not confirmed by any log, and the cause says so.
    expect(figure(c, "kvCacheTokens")).toMatchObject({ verdict: "different", computed: "1996752…1998746" });
    expect(figure(c, "kvCacheTokens").cause).toMatchObject({ id: "version-sizing", explained: false });
    expect(c.versionUsed.warning).toBeUndefined();
  });

  test("the 0.26.1rc0 fork build still reconciles: the boundary is 0.26, not 0.27", () => {
    const c = reconcile(text(B12X));
    expect(c.versionUsed.from).toBe("log");
    expect(c.versionUsed.behaviour.id).toBe("0.26");
    expect(c.figures.filter((f) => f.role === "compared").every((f) => f.verdict !== "different")).toBe(true);
  });

  test("a log without a version takes the default, said so", () => {
    const c = reconcile(text("ainode-dspark-tp2-131k.txt"));
    expect(c.versionUsed).toMatchObject({ version: "0.31.1", from: "default", logVersion: null });
  });

  test("a printed version before 0.23 is not modelled: the default sizes it, with a warning naming the version", () => {
    const c = reconcile(text(B12X).replace(/0\.26\.1rc0/g, "0.20.2"));
    expect(c.versionUsed).toMatchObject({ from: "default", logVersion: expect.stringMatching(/^0\.20\.2/) });
    expect(c.versionUsed.warning?.id).toBe("version-not-modelled");
    expect(c.versionUsed.warning?.text).toContain("0.23 or later");
  });
});

describe("--vllm-version wins over the log", () => {
  test("the flag sizes the 0.26.1rc0 log as 0.25: figures differ, and a warning names both versions", () => {
    const c = reconcile(text(B12X), "0.25.0");
    expect(c.versionUsed).toMatchObject({ version: "0.25.0", from: "flag" });
    expect(c.versionUsed.warning?.id).toBe("version-flag-differs");
    expect(c.versionUsed.warning?.text).toMatch(/--vllm-version 0\.25\.0 .*0\.23.*0\.26\.1rc0.*0\.26/);
    expect(figure(c, "maxConcurrency").verdict).toBe("different");
    // Stated by the flag, so no version alternative is tried: the unconfirmed sizing is the cause.
    expect(figure(c, "maxConcurrency").cause?.id).toBe("version-sizing");
  });

  test("a flag of the same behaviour as the log's version gives no warning", () => {
    const c = reconcile(text(B12X), "0.27.1");
    expect(c.versionUsed.from).toBe("flag");
    expect(c.versionUsed.warning).toBeUndefined();
  });

  test("a flag that is not a version is refused naming --vllm-version", () => {
    expect(() => reconcile(text(B12X), "latest")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", field: "--vllm-version", value: "latest" }),
    );
  });
});

describe("a log that prints no version: the other reservation is an alternative", () => {
  // The 0.25.0 log with its version line taken out and its token figure set to the lowest that 0.25's sizing prints
  // from its 10.29 GiB (a constructed log: no public log without a version needs the older rule). The default (0.31)
  // gives 1.48x.
  const stripped = text(RTX)
    .split("\n")
    .filter((l) => !l.includes("0.25.0"))
    .join("\n")
    .replace("1,993,100 tokens", "1,996,752 tokens");

  test("version-unlogged: the batched tokens alone reproduce every figure", () => {
    const c = reconcile(stripped);
    expect(c.versionUsed.from).toBe("default");
    const cause = figure(c, "maxConcurrency").cause;
    expect(cause).toMatchObject({ id: "version-unlogged", explained: true });
    expect(cause?.text).toContain("before 0.26");
  });

  test("with the version stated by the flag, the alternative is not tried", () => {
    const c = reconcile(stripped, "0.31.1");
    expect(figure(c, "maxConcurrency").cause?.id).not.toBe("version-unlogged");
  });
});
