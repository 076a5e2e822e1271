import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ServerArgsInput } from "../src/index.js";
import { detectGeneration } from "../src/sglang-log/detect.js";
import { loggedGbRange, reconcileSglangLog } from "../src/sglang-log/reconcile.js";
import type { LoggedSizingLine, ParsedSglangLog } from "../src/sglang-log/types.js";
import { renderSglangSizingLog } from "../src/testing.js";
import { EAGLE, FLASH, PRO, genBReport } from "./fixtures.js";

const GENERATIONS = ["gen-a", "gen-a-pools", "gen-b", "gen-b-cap", "npu"] as const;

const report = genBReport;

/** The log with one field of one line replaced (a number as the log would print it). */
function withField(log: ParsedSglangLog, kind: string, key: string, text: string): ParsedSglangLog {
  const sizingLines = log.sizingLines.map((l): LoggedSizingLine => {
    if (l.kind !== kind) return l;
    const old = l.fields[key];
    if (old == null || typeof old !== "object") throw new Error(`no ${key} on ${kind}`);
    const dot = text.indexOf(".");
    const value = { ...old, text, value: Number(text), decimals: dot < 0 ? 0 : text.length - dot - 1 };
    return { ...l, fields: { ...l.fields, [key]: value } };
  });
  return { ...log, sizingLines };
}

const mismatches = <T extends { match: boolean | null }>(figures: readonly T[]): T[] =>
  figures.filter((f) => f.match === false);

describe("a log written from our own sizing reconciles, for every generation", () => {
  for (const generation of GENERATIONS) {
    it(`${generation}: every figure matches, no speculation and EAGLE`, () => {
      for (const input of [{ maxRunningRequests: 256 }, { ...EAGLE, maxRunningRequests: 64 }]) {
        const r = report(input);
        const { log } = renderSglangSizingLog(r, generation);
        const c = reconcileSglangLog(log, r);
        expect(c.generation).toBe(generation);
        expect(mismatches(c.figures)).toEqual([]);
        expect(c.figures.length).toBeGreaterThanOrEqual(generation === "gen-a" ? 3 : 15);
        expect(c.figures.every((f) => (f.role === "compared") === (f.computed !== null) && f.rank === "TP0")).toBe(
          true,
        );
        expect(c.figures.filter((f) => f.role !== "compared").map((f) => f.name)).toEqual(
          generation === "gen-b-cap" ? ["swa-sizing.request_cap+headroom"] : [],
        );
      }
    });
  }

  it("property: random budgets and configurations always reconcile", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...GENERATIONS),
        fc.integer({ min: 30e9, max: 140e9 }),
        fc.constantFrom(0.05, 0.1, 0.2, 0.5),
        fc.boolean(),
        fc.option(fc.integer({ min: 1, max: 1024 }), { nil: null }),
        fc.constantFrom(FLASH, PRO),
        fc.option(fc.integer({ min: 200_000, max: 2_000_000 }), { nil: null }),
        (generation, budget, ratio, speculative, mrr, model, maxTotalTokens) => {
          const input: ServerArgsInput = {
            swaFullTokensRatio: ratio,
            maxRunningRequests: mrr,
            maxTotalTokens,
            ...(speculative ? EAGLE : {}),
          };
          const r = report(input, budget, model);
          const { log } = renderSglangSizingLog(r, generation, { swaCapTokens: 8192 + (mrr ?? 0) * 512 });
          const c = reconcileSglangLog(log, r);
          expect(c.generation).toBe(generation);
          expect(mismatches(c.figures)).toEqual([]);
        },
      ),
      { numRuns: 150, seed: 14 },
    );
  });

  it("writes SGLang's exact line formats", () => {
    const r = report({ maxRunningRequests: 256 });
    const b = renderSglangSizingLog(r, "gen-b").text.split("\n");
    expect(b[0]).toMatch(
      /^\[[\d\- :]+ TP0\] DSV4 memory calculation: bytes_per_full_token=7705\.45, available_bytes=93\.13 GB, c128_state_fixed=\d+\.\d\d GB, full_token=\d+$/,
    );
    expect(b[1]).toMatch(/DSV4 pool sizes: full=\d+, swa=\d+, c4=\d+, c128=\d+, c4_state=\d+, c128_state=0$/);
    expect(b[2]).toMatch(
      /Initialize DeepSeekV4TokenToKVPool with max_num_reqs=256 swa_size=\d+ c4_size=\d+ c4_logical_size=\d+ c128_size=\d+ c4_state_pool_size=\d+ c128_state_pool_size=32896$/,
    );
    const a = renderSglangSizingLog(r, "gen-a").text.split("\n");
    expect(a[0]).toMatch(
      /DSv4 memory calculation: bytes_per_full_token=[\d.]+, available_bytes=93\.13 GB, full_token=\d+$/,
    );
    // The earliest calculator's pool init line has no c4_logical_size.
    expect(a[1]).toMatch(
      /with max_num_reqs=256 swa_size=\d+ c4_size=\d+ c128_size=\d+ c4_state_pool_size=\d+ c128_state_pool_size=\d+$/,
    );
    const cap = renderSglangSizingLog(r, "gen-b-cap").text.split("\n");
    expect(cap[0]).toMatch(
      /DSV4 SWA sizing: mode=cap, swa_tokens=13312, request_cap\+headroom=13312, prefix_tails=16$/,
    );
    expect(cap[1]).toMatch(/c128_state_fixed=[\d.]+ GB, swa_fixed=[\d.]+ GB, full_token=\d+$/);
  });
});

describe("a changed figure is reported with a reason", () => {
  const r = report({ maxRunningRequests: 256 });
  const { log } = renderSglangSizingLog(r, "gen-b");

  it("full_token 100 pages more than the logged budget allows: only the figures that disagree with it differ", () => {
    const full = log.sizingLines[0]!.fields.full_token as { value: number };
    const c = reconcileSglangLog(withField(log, "memory-calculation", "full_token", String(full.value + 25600)), r);
    // The pools are computed from the logged full tokens: the pool line's smaller full reads as a re-sizing (an
    // input, as no --max-total-tokens is given), and every pool follows it.
    expect(mismatches(c.figures).map((f) => f.name)).toEqual(["full_token"]);
    expect(c.figures.find((f) => f.name === "pools.full")).toMatchObject({ role: "input", match: null });
    const [first] = mismatches(c.figures);
    expect(first!.derivedFrom).toEqual(["available_bytes@1", "c128_state_fixed@1", "bytes_per_full_token@1"]);
    expect(first!.cause).toMatchObject({ explained: false, residual: expect.stringMatching(/^\+\d+$/) });
  });

  it("bytes_per_full_token of a speculative server: the cause is named with its term", () => {
    const c = reconcileSglangLog(withField(log, "memory-calculation", "bytes_per_full_token", "9259.90"), r);
    const bad = mismatches(c.figures).find((f) => f.name === "bytes_per_full_token")!;
    expect(bad.computed).toBe("7705.45");
    expect(bad.cause).toMatchObject({ explained: true, alternatives: ["speculation"], value: "9259.90" });
    // full_token is computed from the logged price: the server's own (7705.45) gave the logged full_token, so the
    // edited price makes it differ too, and says what it was computed from.
    const full = c.figures.find((f) => f.name === "full_token")!;
    expect(full.match).toBe(false);
    expect(full.derivedFrom).toContain("bytes_per_full_token@1");
  });

  it("a pool size, and the budget the check was given", () => {
    const c = reconcileSglangLog(withField(log, "pool-sizes", "c4_state", "1"), r);
    expect(mismatches(c.figures).map((f) => [f.name, f.cause?.explained])).toEqual([["pools.c4_state", false]]);
    const other = report({ maxRunningRequests: 256 }, 90e9);
    const d = reconcileSglangLog(log, other);
    expect(mismatches(d.figures).map((f) => f.name)).toEqual(["available_bytes"]);
    expect(reconcileSglangLog(log, other, { budgetFromLog: true }).figures[0]).toMatchObject({
      name: "available_bytes",
      role: "input",
      match: null,
    });
  });

  it("the c4 state of exact mode (divided by the page) is named as such", () => {
    const poolLine = log.sizingLines.find((l) => l.kind === "pool-sizes")!;
    const swa = (poolLine.fields.swa as { value: number }).value;
    const byPage = String(Math.floor(swa / 256) * 8);
    const c = reconcileSglangLog(withField(log, "pool-sizes", "c4_state", byPage), r);
    const bad = mismatches(c.figures);
    expect(bad.map((f) => f.name)).toEqual(["pools.c4_state"]);
    expect(bad[0]!.cause!.alternatives).toEqual(["c4-state-per-page"]);
  });
});

describe("generation detection from the log's evidence", () => {
  const r = report({ maxRunningRequests: 256 });
  it.each(GENERATIONS)("%s", (generation) => {
    const { log } = renderSglangSizingLog(r, generation);
    const d = detectGeneration(log, r);
    expect(d.generation).toBe(generation);
    const words = d.evidence.join(" | ");
    if (generation === "gen-a") expect(words).toMatch(/'DSv4' and there is no c128_state_fixed/);
    if (generation === "gen-a-pools") expect(words).toMatch(/'DSV4' without c128_state_fixed/);
    if (generation === "gen-b") expect(words).toMatch(/c128_state_fixed and no swa_fixed/);
    if (generation === "gen-b-cap") expect(words).toMatch(/mode=cap/);
    if (generation === "npu") expect(words).toMatch(/device='npu'/);
  });

  it("a log without a memory calculation line: Gen B by its pool sizes line, unknown with the scheduler's only", () => {
    const { log } = renderSglangSizingLog(r, "gen-b");
    const d = detectGeneration({ ...log, sizingLines: log.sizingLines.slice(1) }, r);
    expect(d.generation).toBe("gen-b");
    expect(d.evidence.at(-1)).toMatch(/a "DSV4 pool sizes" line/);
    const only = detectGeneration({ ...log, sizingLines: log.sizingLines.slice(-1) }, r);
    expect(only.generation).toBe("unknown");
    expect(detectGeneration({ ...log, sizingLines: [] }, r).evidence.at(-1)).toMatch(/no DSV4 sizing line/);
  });
});

describe("an unmodelled generation says so, with the figures still checkable", () => {
  it("a memory line with fields no generation we model prints", () => {
    const r = report({ maxRunningRequests: 256 });
    const { log } = renderSglangSizingLog(r, "gen-b");
    const mem = log.sizingLines[0]!;
    const odd = { ...mem, fields: { ...mem.fields, raw_available_bytes: mem.fields.available_bytes! } };
    const c = reconcileSglangLog({ ...log, sizingLines: [odd, ...log.sizingLines.slice(1)] }, r);
    expect(c.generation).toBe("unknown");
    expect(c.evidence.at(-1)).toMatch(/match no generation we model/);
    const full = c.figures.find((f) => f.name === "full_token")!;
    expect(full).toMatchObject({ computed: null, match: null, role: "not-computed" });
    expect(full.why).toMatch(/^not computed: /);
    // c4 and c128 follow from the logged full tokens in every generation.
    const c4 = c.figures.find((f) => f.name === "pools.c4")!;
    expect(c4).toMatchObject({ match: true });
    expect(c4.computed).not.toBeNull();
  });
});

describe("the NPU pool is reconciled with its own rules", () => {
  it("page size 128 and a bf16 KV cache are not refused; the state pools are per request", () => {
    const r = report({ maxRunningRequests: 16, kvCacheDtype: "bfloat16", platform: "npu" });
    const { log } = renderSglangSizingLog(r, "npu");
    const c = reconcileSglangLog(log, r);
    expect(c.generation).toBe("npu");
    expect(mismatches(c.figures)).toEqual([]);
    const state = c.figures.find((f) => f.name === "pool-init.c128_state_pool_size")!;
    expect(state.computed).toBe(String(3 * 16 * 128));
  });
});

describe("budget precision", () => {
  it("a GB figure to two decimals stands for a range of bytes", () => {
    const { lo, hi } = loggedGbRange({ text: "93.13", value: 93.13, decimals: 2, unit: "GB" });
    expect(((lo / 2 ** 30) as number).toFixed(2)).toBe("93.13");
    expect((hi / 2 ** 30).toFixed(2)).toBe("93.13");
    expect(((lo - 1) / 2 ** 30).toFixed(2)).toBe("93.12");
    expect(hi - lo).toBeGreaterThan(10_000_000);
  });
});
