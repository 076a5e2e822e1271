/**
 * `reconcileV41Log`: every real DeepSeek-V4.1 start-up log of the corpus (fixtures/sglang-logs-v41/manifest.json and
 * the V4.1 files kept with the V4 corpus) figure by figure against the dev-dsv41 configurator, anchored on the
 * logged figures; a figure the log gives no way to compute is an input with its cause named. A changed figure is
 * found with its formula and the logged figures it was computed from.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { V41SizingConfig } from "@dsv4-kv/memory-pool";
import { describe, expect, it } from "vitest";
import { parseSglangLog, reconcileV41Log, v41LoggedArguments } from "../src/index.js";
import { v41FlashDsparkConfig } from "../src/testing.js";

const FIXTURES = join(__dirname, "fixtures");
const config = v41FlashDsparkConfig({ maxTotalTokens: null });

function reconcile(file: string, over: Partial<V41SizingConfig> = {}, text = read(file)) {
  const section = parseSglangLog(text).sections[0]!;
  const requestsGiven = over.maxRunningRequests != null;
  return reconcileV41Log(section, { ...config, ...over }, { budgetBytes: null, requestsGiven });
}
const read = (file: string) => readFileSync(join(FIXTURES, file), "utf8");
const byName = (c: ReturnType<typeof reconcile>) => Object.fromEntries(c.figures.map((f) => [f.name, f]));
const differing = (c: ReturnType<typeof reconcile>) => c.figures.filter((f) => f.match === false);

const LECYWZA = "sglang-logs-v41/lecywza-runtime-report-20260912-tp3-gb10-sizing.log";

describe("the LECYWZA GB10 TP3 DSpark sizing lines", () => {
  it("every figure matches with no argument but the model: cap, requests and budget are the log's", () => {
    const c = reconcile(LECYWZA);
    expect(c.generation).toBe("dev-dsv41");
    expect(differing(c)).toEqual([]);
    const f = byName(c);
    expect(f.bytes_per_full_token).toMatchObject({ logged: "1670.75", computed: "1670.75", match: true });
    expect(f.swa_fixed).toMatchObject({
      logged: "0.30",
      match: true,
      derivedFrom: ["swa-sizing.request_cap+headroom@4"],
    });
    expect(f.full_token).toMatchObject({ match: true, derivedFrom: expect.arrayContaining(["available_bytes@5"]) });
    expect(f["pool-init(target).c128_state_pool_size"]).toMatchObject({ logged: "1280", match: true });
    expect(f["pool-init(draft).c4_size"]).toMatchObject({ logged: "0", match: true });
    // The second pool-sizes line is re-sized by a --max-total-tokens the lines do not show: an input, named.
    const full2 = c.figures.filter((x) => x.name === "pools.full")[1]!;
    expect(full2).toMatchObject({ role: "input", why: expect.stringMatching(/--max-total-tokens the section/) });
    expect(c.figures.filter((x) => x.match === true).length).toBe(31);
  });

  it("with the server's --max-total-tokens 3000000 and 4 requests the re-sized full is computed too", () => {
    const c = reconcile(LECYWZA, { maxTotalTokens: 3_000_000, maxRunningRequests: 4 });
    expect(differing(c)).toEqual([]);
    expect(c.figures.filter((x) => x.name === "pools.full")[1]).toMatchObject({ computed: "2999808", match: true });
  });

  it("a changed figure differs, with its formula and inputs; other figures stay anchored on the log", () => {
    const text = read(LECYWZA).replace("c4_state=1664, c128_state=0\n", "c4_state=1665, c128_state=0\n");
    const c = reconcile(LECYWZA, {}, text);
    expect(differing(c).map((f) => [f.name, f.logged, f.computed])).toEqual([["pools.c4_state", "1665", "1664"]]);
    expect(differing(c)[0]!.cause).toMatchObject({ explained: false, residual: "+1" });
    const bad = reconcile(
      LECYWZA,
      {},
      read(LECYWZA).replace("bytes_per_full_token=1670.75", "bytes_per_full_token=1630.00"),
    );
    expect(differing(bad).map((f) => f.name)).toEqual(["bytes_per_full_token"]);
  });

  it("without DSpark the price and the draft pool line disagree with the log", () => {
    const c = reconcile(LECYWZA, { isSpeculative: false, draftTokens: 0 });
    expect(differing(c).map((f) => f.name)).toContain("bytes_per_full_token");
  });
});

describe("the 0xSero GB10 TP4 boot lines (no SWA sizing line)", () => {
  for (const [file, mrr, caps] of [
    ["sglang-logs/v41-local-ai-registry-gb10-tp4-boot-lines.log", 8, "21760, 22016"],
    ["sglang-logs/v41-local-ai-registry-gb10-tp4-tuned-boot-lines.log", 48, "137984, 138240"],
  ] as const) {
    it(`${file}: swa_fixed names the caps that print it; full_token in their range; requests from the log`, () => {
      const c = reconcile(file);
      expect(differing(c)).toEqual([]);
      const f = byName(c);
      expect(f.swa_fixed).toMatchObject({ role: "input", why: expect.stringContaining(caps) });
      expect(f.full_token!.match).toBe(true);
      expect(f.full_token!.derivedFrom).toContain(`max_running_requests@${file.includes("tuned") ? 9 : 2}`);
      expect(f.max_total_num_tokens).toMatchObject({ match: true, why: expect.stringMatching(/page-aligned/) });
      expect(v41LoggedArguments(parseSglangLog(read(file)).sections[0]!.sizingLines).maxRunningRequests!.value).toBe(
        mrr,
      );
    });
  }
});

describe("the other V4.1 files of the corpus", () => {
  it("MiaAI #27 (ratio 0.22, a cut pool-sizes line): swa, c4 and c128 from the logged full; the cut listed", () => {
    const c = reconcile("sglang-logs/v41-miaai-issue-27-gb10-tp4-swa-sizing-truncated.log");
    expect(differing(c)).toEqual([]);
    const f = byName(c);
    expect(f["swa-sizing.swa_tokens"]).toMatchObject({ logged: "549888", match: true });
    expect(f["pools.c128"]).toMatchObject({ logged: "19530", match: true });
    expect(c.truncated.map((t) => t.name)).toContain("pool-sizes line");
  });

  it("the LECYWZA header and the MiaAI validation transcript: a scheduler line only, named as such", () => {
    for (const file of [
      "sglang-logs-v41/lecywza-runtime-report-20260912-tp3-gb10-header.log",
      "sglang-logs/v41-miaai-tp4-validation-20260925-two-boots.log",
    ]) {
      const c = reconcile(file);
      expect(differing(c), file).toEqual([]);
      expect(byName(c).max_total_num_tokens).toMatchObject({ role: "not-computed", why: /no full tokens/ });
    }
  });
});
