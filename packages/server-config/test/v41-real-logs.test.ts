/**
 * Every figure of the public DeepSeek-V4.1 start-up logs (test/fixtures/sglang-logs-v41/manifest.json, and the
 * V4.1 files kept with the V4 corpus) recomputed by memory-pool's V4.1 model. A logged `x.xx GB` stands for every
 * byte count that prints so (±0.005 GiB); a figure computed from such inputs is a range that must hold the logged
 * value. Each figure is computed from the logged figures it depends on (anchoring), never from our own version.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type V41SizingConfig,
  sizeV41Configurator,
  v41Coefficients,
  v41LoggedPoolSizes,
  v41PoolInitLines,
  v41Pools,
} from "@dsv4-kv/memory-pool";
import { describe, expect, it } from "vitest";
import { V41_MODEL_PRESETS, v41CapsPrintingSwaFixed, v41FullTokenRange } from "../src/index.js";
import { loggedGbRange } from "../src/sglang-log/reconcile.js";
import { v41FlashDsparkConfig } from "../src/testing.js";

const FIXTURES = join(__dirname, "fixtures");
const read = (file: string) => readFileSync(join(FIXTURES, file), "utf8");
const flash = V41_MODEL_PRESETS["DeepSeek-V4.1-Flash"]!;
const GIB = 2 ** 30;

/** V4.1-Flash with DSpark block 5 (6 draft tokens), P = 256. */
const dspark = v41FlashDsparkConfig;

/** Python's `%.2f` of bytes / 2^30 as the configurator prints it. */
const gb = (bytes: number) => (bytes / GIB).toFixed(2);
/** The byte counts a logged `v GB` stands for. */
const gbRange = (v: string): [number, number] => [
  Math.ceil((Number(v) - 0.005) * GIB),
  Math.floor((Number(v) + 0.005) * GIB),
];
/** The field `key=value` of the first line containing `label` (value up to a comma or space). */
function field(text: string, label: string, key: string, nth = 0): string {
  const lines = text.split("\n").filter((l) => l.includes(label));
  const line = lines[nth];
  if (line === undefined) throw new Error(`no line ${nth} with ${label}`);
  const m = new RegExp(`(?:^|[ ,(])${key.replace(/[+]/g, "\\+")}=([^, ]+)`).exec(line);
  if (!m) throw new Error(`no ${key} in ${line}`);
  return m[1]!.replace(/\.$/, "");
}
const num = (s: string) => Number(s);

/** A logged `x.xx GB` figure as the parser reads it. */
const gbFigure = (text: string) => ({ text, value: Number(text), decimals: 2, unit: "GB" });

/** The page-aligned SWA caps whose swa_fixed prints as `logged` (the cap line is not in every log). */
const capsPrinting = (config: V41SizingConfig, logged: string) => v41CapsPrintingSwaFixed(config, gbFigure(logged));

/** full_token over every budget and cap the log's rounded figures allow (the reconciler's own range). */
function fullTokenRange(config: V41SizingConfig, available: string, caps: readonly number[]): [number, number] {
  const { lo, hi } = v41FullTokenRange(config, loggedGbRange(gbFigure(available)), caps);
  return [lo, hi];
}

describe("LECYWZA 3x GB10 TP3 DSpark run report (lmsysorg/sglang:dev-dsv41)", () => {
  const log = read("sglang-logs-v41/lecywza-runtime-report-20260912-tp3-gb10-sizing.log");
  const header = read("sglang-logs-v41/lecywza-runtime-report-20260912-tp3-gb10-header.log");
  const cap = num(field(log, "DSV4 SWA sizing", "request_cap+headroom"));
  const config = dspark({ maxRunningRequests: 4, swaCapTokens: cap, maxTotalTokens: 3_000_000 });

  it("bytes_per_full_token=1670.75: (3·(584+68)/2 + 584+68) · 41/40 in cap mode", () => {
    const coef = v41Coefficients(config);
    expect(coef.compressedBytesPerFullToken).toBe(1630);
    expect(coef.bytesPerFullToken.toFixed(2)).toBe(field(log, "DSV4 memory calculation", "bytes_per_full_token"));
  });

  it("swa_fixed and full_token from the logged budget and cap; c128_state_fixed is 0 (no ratio-128 layer)", () => {
    const mem = "DSV4 memory calculation";
    const c = sizeV41Configurator(config, gbRange(field(log, mem, "available_bytes"))[0]);
    expect(gb(c.swaFixedBytes)).toBe(field(log, mem, "swa_fixed"));
    expect(field(log, mem, "c128_state_fixed")).toBe("0.00");
    const full = num(field(log, mem, "full_token"));
    const [lo, hi] = fullTokenRange(config, field(log, mem, "available_bytes"), [cap]);
    expect(full % 256).toBe(0);
    expect(full).toBeGreaterThanOrEqual(lo);
    expect(full).toBeLessThanOrEqual(hi);
  });

  it("both pool-sizes lines: from the logged full, then re-sized for --max-total-tokens 3000000", () => {
    const full = num(field(log, "DSV4 memory calculation", "full_token"));
    for (const [nth, sizes] of [
      [0, v41LoggedPoolSizes({ ...config, maxTotalTokens: null }, full)],
      [1, v41LoggedPoolSizes(config, 3_000_000)],
    ] as const)
      for (const [key, value] of Object.entries({
        full: sizes.full,
        swa: sizes.swa,
        c4: sizes.c4,
        c128: sizes.c128,
        c4_state: sizes.c4State,
        c128_state: sizes.c128State,
      }))
        expect(num(field(log, "DSV4 pool sizes", key, nth)), `${key} #${nth}`).toBe(value);
    expect(num(field(header, "max_total_num_tokens", "max_total_num_tokens"))).toBe(2_999_808);
  });

  it("the target and DSpark draft pool init lines", () => {
    const capped = v41LoggedPoolSizes(config, num(field(log, "DSV4 pool sizes", "full", 1)));
    const lines = v41PoolInitLines(
      config,
      capped,
      num(field(log, "Initialize DeepSeekV4TokenToKVPool", "max_num_reqs")),
    );
    const keys = {
      max_num_reqs: "maxNumReqs",
      swa_size: "swaSize",
      c4_size: "c4Size",
      c4_logical_size: "c4LogicalSize",
      c128_size: "c128Size",
      c4_state_pool_size: "c4StatePoolSize",
      c128_state_pool_size: "c128StatePoolSize",
    } as const;
    expect(lines.map((l) => l.worker)).toEqual(["target", "draft"]);
    lines.forEach((line, nth) => {
      for (const [key, prop] of Object.entries(keys))
        expect(num(field(log, "Initialize DeepSeekV4TokenToKVPool", key, nth)), `${key} #${nth}`).toBe(line[prop]);
    });
  });
});

describe("0xSero 4x GB10 TP4 boot lines (V4.1, kept with the V4 corpus)", () => {
  for (const [file, mrr] of [
    ["sglang-logs/v41-local-ai-registry-gb10-tp4-boot-lines.log", 8],
    ["sglang-logs/v41-local-ai-registry-gb10-tp4-tuned-boot-lines.log", 48],
  ] as const) {
    it(`${file}: bytes_per_full_token, a page-aligned cap printing swa_fixed, full_token in range`, () => {
      const log = read(file);
      const mem = "DSV4 memory calculation";
      const config = dspark({ maxRunningRequests: mrr });
      expect(v41Coefficients({ ...config, swaCapTokens: 256 }).bytesPerFullToken.toFixed(2)).toBe(
        field(log, mem, "bytes_per_full_token"),
      );
      const caps = capsPrinting(config, field(log, mem, "swa_fixed"));
      expect(caps.length).toBeGreaterThan(0);
      const [lo, hi] = fullTokenRange(config, field(log, mem, "available_bytes"), caps);
      const full = num(field(log, mem, "full_token"));
      expect(full).toBeGreaterThanOrEqual(lo);
      expect(full).toBeLessThanOrEqual(hi);
      // --max-total-tokens (not in these lines) re-sizes below the budget: a page-aligned count under full_token.
      const total = num(field(log, "max_total_num_tokens", "max_total_num_tokens"));
      expect(total % 256).toBe(0);
      expect(total).toBeLessThanOrEqual(full);
      expect(num(field(log, "max_total_num_tokens", "max_running_requests"))).toBe(mrr);
    });
  }
});

describe("MiaAI-Lab/DeepSeek-v4.1-Flash-DGX-Sparks#27: ratio mode 0.22 on 4x GB10", () => {
  it("swa = floor_P(full · 0.22), c4 = full / 4, c128 = full / 128 from the logged full", () => {
    const log = read("sglang-logs/v41-miaai-issue-27-gb10-tp4-swa-sizing-truncated.log");
    const ratio = num(field(log, "DSV4 SWA sizing", "swa_full_tokens_ratio"));
    const full = num(field(log, "DSV4 pool sizes", "full"));
    const sizes = v41LoggedPoolSizes(dspark({ swaFullTokensRatio: ratio }), full);
    expect(sizes.swa).toBe(num(field(log, "DSV4 pool sizes", "swa")));
    expect(sizes.swa).toBe(num(field(log, "DSV4 SWA sizing", "swa_tokens")));
    expect(sizes.c4).toBe(num(field(log, "DSV4 pool sizes", "c4")));
    expect(sizes.c128).toBe(num(field(log, "DSV4 pool sizes", "c128")));
  });
});

describe("H20 dev-dsv41 notes (TP8 and TP4)", () => {
  it("TP8: SWA fixed 15.78 GB for 707,840 cap tokens prices 584 B per SWA entry, not the 585 B a page holds", () => {
    const note = read("sglang-logs-v41/h20-dsv41-dspark-tp8-runtime-20260919-prose.log");
    expect(note).toContain("| SWA fixed | 15.78 GB |");
    expect(note).toContain("| `swa_tokens` | 707,840");
    const bpst = v41Coefficients(dspark({ swaCapTokens: 707_840 })).bytesPerSwaToken;
    expect(gb(707_840 * bpst)).toBe("15.78");
    expect(gb(707_840 * 585 * 40 * (41 / 40))).toBe("15.81"); // page-padded pricing would print this
    expect(4_448_512 % 256).toBe(0); // the quoted capacity is page-aligned (its budget is not quoted)
  });

  it("TP4: target pool init from c4_size (F = 4 · c4), the draft's zeros, and its 34,594,560 B of SWA", () => {
    const note = read("sglang-logs-v41/h20-dsv41-dspark-draft-pool-20260921-prose.log");
    expect(note).toContain("`swa=19456 c4_size=1544768 c128_size=48274 c4_state=2432 c128_state=512`");
    expect(note).toContain("`34,594,560 B/rank`");
    const config = dspark({ swaCapTokens: 19_456 });
    const sizes = v41LoggedPoolSizes(config, 4 * 1_544_768);
    // c128_state 512 = slots · 256: one running request (two slots).
    const [target, draft] = v41PoolInitLines(config, sizes, 1);
    expect(target).toMatchObject({ swaSize: 19456, c4Size: 1544768, c128Size: 48274, c4StatePoolSize: 2432 });
    expect(target!.c128StatePoolSize).toBe(512);
    expect(draft).toMatchObject({ swaSize: 19456, c4Size: 0, c128Size: 0, c4StatePoolSize: 0, c128StatePoolSize: 0 });
    const pools = v41Pools({
      model: flash,
      fullSize: sizes.full,
      swaSize: 19_456,
      pageSize: 256,
      numReqSlots: 2,
      pairRingSize: 8,
      withDraft: true,
    }).pools;
    expect(pools.find((p) => p.id === "draft-swa-kv")).toMatchObject({ layers: 3, totalBytes: 34_594_560 });
  });
});
