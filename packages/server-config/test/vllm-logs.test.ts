/**
 * Every collected public vLLM start-up log of DeepSeek-V4 (fixtures/vllm-logs/manifest.json), figure by figure: the
 * manifest's figures are in the file as printed; logs with the inputs to do so are reproduced from those inputs; the
 * others record their residual and its named cause (docs/reference/vllm-kv-cache.md §11).
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { MODEL_PRESETS, ServerConfigError } from "../src/index.js";
import {
  blocksPerRequest,
  planVllmKvCache,
  pythonFixed2,
  pythonRound2,
  resolveVllmKvInput,
  type VllmKvInput,
  type VllmKvPlan,
} from "../src/vllm/index.js";

interface LogEntry {
  file: string;
  source: string;
  what: string;
  vllmVersion: string | null;
  figures: Record<string, string>;
  inputs: Record<string, unknown>;
  expect: string;
}

const DIR = new URL("./fixtures/vllm-logs/", import.meta.url);
const MANIFEST: { logs: LogEntry[] } = JSON.parse(readFileSync(new URL("manifest.json", DIR), "utf8"));
const text = (file: string) => readFileSync(new URL(file, DIR), "utf8");
const entry = (file: string) => MANIFEST.logs.find((l) => l.file === file) as LogEntry;
const GIB = 2 ** 30;
const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const F0731 = MODEL_PRESETS["DeepSeek-V4-Flash-0731"]!;
const int = (s: string) => Number(s.replaceAll(",", ""));

/** The bytes a printed "X GiB" (two decimals at most) stands for: [X − 0.005, X + 0.005) GiB. */
function gibRange(printed: string): [number, number] {
  const x = Number(printed);
  return [Math.ceil((x - 0.005) * GIB), Math.floor((x + 0.005) * GIB)];
}

/** Block counts the printed available memory allows at `stride`. */
function blockRange(printed: string, stride: number): number[] {
  const [lo, hi] = gibRange(printed);
  const out: number[] = [];
  for (let nb = Math.ceil(lo / stride); nb * stride <= hi; nb++) out.push(nb);
  return out;
}

const tokensOf = (blocks: number, bpr: number, len: number) => Math.trunc((blocks / bpr) * len);

function plan(input: Partial<VllmKvInput>): VllmKvPlan {
  return planVllmKvCache({ model: FLASH, maxModelLen: 1, budget: { kind: "availableBytes", bytes: 0 }, ...input });
}

describe("the manifest and its fixtures", () => {
  test("fourteen logs, each file present, each figure printed in it", () => {
    expect(MANIFEST.logs).toHaveLength(14);
    for (const log of MANIFEST.logs) {
      const body = text(log.file);
      for (const [name, value] of Object.entries(log.figures)) {
        expect(body.includes(value), `${log.file}: ${name} ${value}`).toBe(true);
      }
      expect(log.source.length).toBeGreaterThan(10);
    }
  });

  test("every log that prints both figures prints tokens = int(concurrency × max_model_len)", () => {
    const both = MANIFEST.logs.filter((l) => l.figures.kvCacheSizeTokens && l.figures.maxConcurrency);
    expect(both.map((l) => l.file)).toHaveLength(11);
    for (const log of both) {
      const tokens = int(log.figures.kvCacheSizeTokens!);
      const len = int(log.figures.maxModelLen!);
      // The unrounded concurrency lies in [tokens / L, (tokens + 1) / L); its two-decimal print must be reachable.
      const printable = new Set([pythonFixed2(tokens / len), pythonFixed2((tokens + 1) / len)]);
      expect(printable.has(log.figures.maxConcurrency!), log.file).toBe(true);
    }
  });
});

describe("logs reproduced from their inputs", () => {
  test("nepenth GB10, vLLM 0.27.1, DSpark k=5, --kv-cache-memory: every figure exactly", () => {
    const log = entry("nepenth-gb10-v0271-dspark-kvmem.txt");
    const p = plan({
      model: F0731,
      maxModelLen: 1_048_576,
      maxNumBatchedTokens: 8192,
      speculative: { method: "dspark", numSpeculativeTokens: 5 },
      budget: { kind: "kvCacheMemoryBytes", bytes: 28_235_618_304 },
    });
    expect(pythonRound2(p.budget.availableBytes / GIB)).toBe(log.figures.availableKvGiB);
    expect(p.numGpuBlocks).toBe(28_172);
    expect(p.blocksPerRequest.total).toBe(10_778);
    const body = text(log.file);
    expect(body).toContain(p.printed.kvCacheSizeLine);
    expect(body).toContain(p.printed.maxConcurrencyLine);
  });

  test("tant2tls H100 TP 8, vLLM 0.31.1rc1: one block count fits 47.43 GiB and prints 1,728,531 tokens", () => {
    const log = entry("tant2tls-h100-tp8-v0311-0731.txt");
    const base = plan({ model: F0731, maxModelLen: 262_144, maxNumBatchedTokens: 8192 });
    const stride = base.grouping.blockStrideBytes;
    const matching = blockRange(log.figures.availableKvGiB!, stride).filter((nb) => {
      const p = plan({ model: F0731, maxModelLen: 262_144, budget: { kind: "availableBytes", bytes: nb * stride } });
      return p.printed.kvCacheSizeTokens === int(log.figures.kvCacheSizeTokens!);
    });
    expect(base.blocksPerRequest.total).toBe(7_706);
    expect(matching).toEqual([50_812]);
  });

  test("vllm#44376 GH200 TP 2: the refusal's 6.66 GiB and its estimate of 13528 tokens", () => {
    const log = entry("vllm-44376-gh200-tp2-admission.txt");
    const at = (maxModelLen: number, bytes = 0) =>
      plan({ maxModelLen, maxNumBatchedTokens: 8192, budget: { kind: "availableBytes", bytes } });
    const needed = at(30_000).admission.bytesNeeded;
    expect(needed).toBe(7_152_076_800);
    expect(pythonFixed2(needed / GIB)).toBe(log.figures.neededGiB);
    // Available memory that makes 13528 the longest length passing: [needed(13528), needed(13529)).
    const band: [number, number] = [at(13_528).admission.bytesNeeded, at(13_529).admission.bytesNeeded];
    const [lo, hi] = gibRange(log.figures.availableKvGiB!);
    expect(band[0] < hi && lo < band[1]).toBe(true);
    const refused = at(30_000, Math.max(band[0], lo));
    expect(refused.admission.passes).toBe(false);
    expect(String(refused.admission.estimatedMaxModelLen)).toBe(log.figures.estimatedMaxModelLen);
  });
});

describe("logs that do not reproduce: residual and named cause", () => {
  test("VLLM_0_23_SIZING: no in-flight count reaches 0.23.0's 1,247,687 tokens from 32.08 GiB", () => {
    const log = entry("h200nvl-tp2-v0230-eager-probe.txt");
    const base = plan({ maxModelLen: 131_072 });
    const blocks = blockRange(log.figures.availableKvGiB!, base.grouping.blockStrideBytes);
    const target = int(log.figures.kvCacheSizeTokens!);
    const reach: number[] = [];
    for (let inFlight = 1; inFlight <= 65_536; inFlight++) {
      const shape = { maxModelLen: 131_072, inFlightTokens: inFlight, extraRetainedTokens: 0 };
      const bpr = blocksPerRequest(base.grouping.groups, shape).total;
      if (blocks.some((nb) => tokensOf(nb, bpr, 131_072) === target)) reach.push(inFlight);
    }
    expect(reach).toEqual([]);
    // The modelled default (8192 tokens, async) prints about half the logged figure.
    const predicted = tokensOf(blocks[0]!, base.blocksPerRequest.total, 131_072);
    expect(base.blocksPerRequest.total).toBe(7_194);
    // 34,364 blocks (the first count inside 32.075 GiB) / 7,194 per request × 131,072.
    expect(predicted).toBe(626_099);
    expect(predicted - target).toBe(-621_588);
  });

  test("NVFP4_DS_MLA_NOT_MODELLED: nvfp4_ds_mla is refused, and fp8 pages would print far fewer tokens", () => {
    const log = entry("flycockpit-3x-spark-nvfp4.txt");
    const input = {
      model: F0731,
      maxModelLen: 1_048_576,
      kvCacheDtype: "nvfp4_ds_mla",
      budget: { kind: "availableBytes", bytes: 1 },
    };
    expect(() => resolveVllmKvInput(input)).toThrow(ServerConfigError);
    try {
      resolveVllmKvInput(input);
    } catch (e) {
      expect((e as ServerConfigError).code).toBe("INVALID_ARGUMENT");
      expect((e as ServerConfigError).field).toBe("kvCacheDtype");
    }
    const [lo] = gibRange(log.figures.availableKvGiB!);
    const fp8 = plan({ model: F0731, maxModelLen: 1_048_576, budget: { kind: "availableBytes", bytes: lo } });
    // 35,788 blocks of 1,002,240 B in 33.405 GiB / 10,778 per request × 1,048,576.
    expect(fp8.printed.kvCacheSizeTokens).toBe(3_481_762);
    expect(fp8.printed.kvCacheSizeTokens - int(log.figures.kvCacheSizeTokens!)).toBe(-1_426_729);
    expect(entry("miaai-spark4-nvfp4-dspark.txt").expect).toBe("residual: NVFP4_DS_MLA_NOT_MODELLED");
  });

  test("UNLOGGED_BATCHED_TOKENS: 1,226,910 tokens need 4,096 or 2,048 tokens in flight, not the 16,384 default", () => {
    const log = entry("ainode-dspark-tp2-131k.txt");
    const target = int(log.figures.kvCacheSizeTokens!);
    const reachable = (bpr: number) => {
      const nb = Math.round((target / 131_072) * bpr);
      return [nb - 1, nb, nb + 1].filter((b) => tokensOf(b, bpr, 131_072) === target);
    };
    const defaults = plan({ maxModelLen: 131_072, speculative: { method: "dspark", numSpeculativeTokens: 7 } });
    expect(defaults.blocksPerRequest.total).toBe(7_194);
    expect(reachable(7_194)).toEqual([]);
    // T = 2048 with async scheduling (vLLM's default below its large-device tier) reaches it with 20,612 blocks.
    const small = plan({ maxModelLen: 131_072, maxNumBatchedTokens: 2048 });
    expect(small.blocksPerRequest.total).toBe(2_202);
    expect(reachable(2_202)).toEqual([20_612]);
    expect(pythonRound2((20_612 * small.grouping.blockStrideBytes) / GIB)).toBe("19.24");
  });
});
