/**
 * `check --engine vllm --against-log` on every collected public vLLM log (fixtures/vllm-logs/manifest.json): each
 * is read, reconciled figure by figure with planVllmKvCache under the flags its manifest entry gives (the facts the
 * source states beside the log), and either passes (every compared figure equal or within the print's rounding) or
 * carries the named cause the manifest records. Then the reader's handling of pasted text, one format at a time.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { MODEL_PRESETS, ServerConfigError, VllmLogComparisonSchema, resolveModelName } from "../src/index.js";
import { launchArgs, parseVllmLog, reconcileVllmLog } from "../src/vllm-log/index.js";
import type { VllmLogComparison } from "../src/vllm-log/index.js";

interface Entry {
  file: string;
  againstLog: { flags: string[]; ok: boolean; cause: string | null };
}

const DIR = new URL("./fixtures/vllm-logs/", import.meta.url);
const MANIFEST: { logs: Entry[] } = JSON.parse(readFileSync(new URL("manifest.json", DIR), "utf8"));
const text = (file: string) => readFileSync(new URL(file, DIR), "utf8");

/** What the CLI does with a manifest entry's flags (the model from --model, else the log's, else Flash). */
function reconcile(file: string, flags: readonly string[]): VllmLogComparison {
  const { args } = launchArgs(flags);
  const stated = typeof args.model === "string" ? args.model : undefined;
  delete args.model;
  const parsed = parseVllmLog(text(file), stated ? { statedModel: stated } : {});
  const logged = stated ?? (parsed.args?.model as string | undefined) ?? "DeepSeek-V4-Flash";
  const name = logged
    .split("/")
    .filter(Boolean)
    .reverse()
    .find((p) => {
      try {
        return resolveModelName(p, "model") !== null;
      } catch {
        return false;
      }
    });
  const preset = resolveModelName(name ?? "DeepSeek-V4-Flash", "model").preset;
  return reconcileVllmLog(parsed, { model: preset, modelName: preset.name, flagArgs: args });
}

const ok = (c: VllmLogComparison) =>
  c.nothingCompared === undefined && c.figures.every((f) => f.role !== "not-computed" && f.verdict !== "different");
const verdictOf = (c: VllmLogComparison, name: string) => c.figures.find((f) => f.name === name)?.verdict;

describe("every collected vLLM log, figure by figure", () => {
  test("fourteen logs: thirteen of DeepSeek-V4, one of another model", () => {
    expect(MANIFEST.logs).toHaveLength(14);
  });

  for (const entry of MANIFEST.logs) {
    test(`${entry.file}: ${entry.againstLog.ok ? "reconciles" : `cause ${entry.againstLog.cause}`}`, () => {
      if (entry.againstLog.cause === "refused") {
        expect(() => reconcile(entry.file, entry.againstLog.flags)).toThrow(ServerConfigError);
        return;
      }
      const c = reconcile(entry.file, entry.againstLog.flags);
      expect(VllmLogComparisonSchema.parse(c)).toEqual(c);
      expect(c.figures.some((f) => f.role === "compared")).toBe(true);
      expect(ok(c), JSON.stringify(c.figures.filter((f) => f.verdict === "different"))).toBe(entry.againstLog.ok);
      const causes = new Set(c.figures.flatMap((f) => (f.cause && f.verdict === "different" ? [f.cause.id] : [])));
      expect([...causes]).toEqual(entry.againstLog.cause === null ? [] : [entry.againstLog.cause]);
      // Every figure that differs carries its cause.
      for (const f of c.figures.filter((x) => x.verdict === "different")) expect(f.cause).toBeDefined();
    });
  }
});

describe("what the reconciliation shows", () => {
  test("nepenth 0.27.1 with its --kv-cache-memory-bytes: the budget, tokens and concurrency all equal", () => {
    const c = reconcile("nepenth-gb10-v0271-dspark-kvmem.txt", MANIFEST.logs[0]!.againstLog.flags);
    expect(verdictOf(c, "availableKvGiB")).toBe("equal");
    expect(verdictOf(c, "kvCacheTokens")).toBe("equal");
    expect(verdictOf(c, "maxConcurrency")).toBe("equal");
  });

  test("without --kv-cache-memory-bytes the logged 26.3 GiB is the budget: tokens only within its rounding", () => {
    const c = reconcile("nepenth-gb10-v0271-dspark-kvmem.txt", ["--model", "DeepSeek-V4-Flash-0731"]);
    expect(c.figures.find((f) => f.name === "availableKvGiB")?.role).toBe("input");
    expect(verdictOf(c, "kvCacheTokens")).toBe("within-rounding");
    expect(c.figures.find((f) => f.name === "kvCacheTokens")?.computed).toBe("2740618…2741688");
  });

  test("vllm#44376's refusal: 6.66 GiB needed equal, the estimate 13528 inside the range 5.44 GiB allows", () => {
    const c = reconcile("vllm-44376-gh200-tp2-admission.txt", ["--max-model-len", "30000"]);
    expect(verdictOf(c, "refusal.neededGiB")).toBe("equal");
    expect(c.figures.find((f) => f.name === "refusal.estimatedMaxModelLen")?.computed).toBe("13512…13536");
  });

  test("the 0.25.0 log: its arguments read from non-default args, its figures off with the version named", () => {
    const c = reconcile("rtxpro6000-tp2-v0250-mtp2.txt", []);
    expect(c.version).toBe("0.25.0");
    const t = c.inputs.find((i) => i.field === "maxNumBatchedTokens");
    expect(t).toMatchObject({ value: "4096", from: "log-args", line: 10 });
    expect(c.figures.find((f) => f.name === "kvCacheTokens")?.cause?.text).toContain("0.25.0");
  });

  test("a stated batched-token budget rules its alternative out: ainode at 8192 stays unexplained", () => {
    const c = reconcile("ainode-dspark-tp2-131k.txt", ["--max-num-batched-tokens", "8192"]);
    expect(c.figures.find((f) => f.verdict === "different")?.cause?.id).not.toBe("unlogged-batched-tokens");
    const solved = reconcile("ainode-dspark-tp2-131k.txt", ["--max-num-batched-tokens", "2048"]);
    expect(ok(solved)).toBe(true);
  });

  test("the flag --kv-cache-dtype nvfp4_ds_mla: the figures are not computed, with the layout named", () => {
    const c = reconcile("flycockpit-3x-spark-nvfp4.txt", [
      "--model",
      "DeepSeek-V4-Flash-0731",
      "--kv-cache-dtype",
      "nvfp4_ds_mla",
    ]);
    expect(c.nothingCompared).toContain("nvfp4_ds_mla");
    expect(c.figures.filter((f) => f.role === "not-computed").map((f) => f.cause?.id)).toEqual([
      "layout-not-modelled",
      "layout-not-modelled",
    ]);
  });

  test("a launch command gives the arguments when no non-default args are printed (the 0.23.0 probe)", () => {
    const parsed = parseVllmLog(text("h200nvl-tp2-v0230-eager-probe.txt"));
    expect(parsed.launchWords?.slice(0, 1)).toEqual(["tmp/model-artifacts/deepseek-ai/DeepSeek-V4-Flash"]);
    const c = reconcile("h200nvl-tp2-v0230-eager-probe.txt", []);
    expect(c.inputs.find((i) => i.field === "maxModelLen")).toMatchObject({ value: "131072", from: "log-args" });
  });
});

describe("reading pasted vLLM logs", () => {
  const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
  const read = (body: string) => parseVllmLog(body, { statedModel: "DeepSeek-V4-Flash" });

  test("vLLM's prefixes: process, level, journald, docker; the one-line and two-line capacity forms", () => {
    const p = read(
      [
        "Aug 18 22:22:22 sys0 vllm[1]: (Worker_TP0 pid=1) INFO 08-18 22:22:22 [gpu_worker.py:624] Available KV cache memory: 8.28 GiB",
        "vllm-1  | (EngineCore_DP0 pid=9) INFO 08-18 22:22:23 [kv_cache_utils.py:2033] GPU KV cache size: 1,249,001 tokens, Maximum concurrency for 1,048,576 tokens per request: 1.19x",
      ].join("\n"),
    );
    expect(p.figures.map((f) => [f.kind, f.source, f.processLabel])).toEqual([
      ["available-kv-gib", "log", "Worker_TP0"],
      ["kv-cache-tokens", "log", "EngineCore_DP0"],
      ["max-concurrency", "log", "EngineCore_DP0"],
    ]);
    const c = reconcileVllmLog(p, { model: FLASH, modelName: "Flash", overrides: { maxNumBatchedTokens: 4096 } });
    expect(ok(c)).toBe(true);
  });

  test("a refusal wrapped over three lines by a person is joined", () => {
    const p = read(text("gb10-kvpool-coupling-refusal.txt"));
    const refusal = p.figures.find((f) => f.kind === "refusal")!;
    expect(refusal.line).toBe(5);
    expect(refusal.numbers.estimatedMaxModelLen?.value).toBe(7740);
  });

  test("prose wrapped mid-message is read across the break (the 0.30.0 note)", () => {
    const p = read(text("b300-tp2-v0300-vision-exp.txt"));
    expect(p.figures.filter((f) => f.source === "quoted").map((f) => f.kind)).toEqual([
      "kv-cache-tokens",
      "max-concurrency",
    ]);
  });

  test("non-default args cut mid-way are listed as skipped, not guessed", () => {
    const p = read(
      "(APIServer pid=1) INFO 07-12 02:33:24 [api_utils.py:273] non-default args: {'model': 'deepseek-ai/DeepSeek-V4-Flash', 'max_model_len': 1048576, 'kv_cach\nGPU KV cache size: 10 tokens",
    );
    expect(p.args).toBeNull();
    expect(p.skipped[0]?.reason).toContain("cut off mid-way");
  });

  test("refusals name the rule: empty, binary, no vLLM material, another model's log", () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return [(e as ServerConfigError).code, (e as ServerConfigError).rule];
      }
      return null;
    };
    expect(code(() => parseVllmLog(""))?.[0]).toBe("VLLM_LOG");
    expect(code(() => parseVllmLog("a\0b"))?.[1]).toContain("binary");
    expect(code(() => parseVllmLog("DeepSeek-V4 is nice\n"))?.[1]).toContain("no vLLM start-up material");
    expect(code(() => parseVllmLog(text("not-dsv4-glm53-tp3-v0261.txt")))?.[1]).toContain("names no DeepSeek-V4");
  });
});
