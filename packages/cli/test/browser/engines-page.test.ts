// `check --compare-engines --html` in headless Chromium: the page draws the chart of memory per kind on SGLang and
// vLLM (both engines' bars for every kind, the legend, a caption with the CLI's figures), reruns it when a control
// changes, shows a refusal of the comparison's inputs as an alert, and leaves it out without the flag. Never
// skipped (see harness.ts); the pages are written by the built CLI.
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { cli } from "../cli-helpers.js";
import { browserSuite, distinctColours, openPage } from "./harness.js";

const suite = browserSuite("dsv4kv-engines-page-");
const dir = suite.dir;

function writePage(name: string, args: string[]): string {
  const path = join(dir, `${name}.html`);
  const r = cli(["check", ...args, "--html", path]);
  expect(r.code, r.stderr).toBe(0);
  return path;
}

describe("check --compare-engines --html in Chromium", () => {
  test("the chart draws both engines for every kind, with the CLI's figures in its caption", async () => {
    const json = JSON.parse(cli(["check", "--compare-engines", "--json"]).stdout);
    const kinds: string[] = json.enginesComparison.kinds.map((k: { kind: string }) => k.kind);
    const { page, errors } = await openPage(suite.browser(), writePage("engines", ["--compare-engines"]));
    const chart = page.locator("#chart-engines");
    expect(await chart.locator("h2").textContent()).toBe("Memory per kind, SGLang and vLLM");
    const bars = chart.locator("svg g[aria-label='bar'] rect");
    // one bar per engine for each kind, the page stride and the unused budget
    expect(await bars.count()).toBe(2 * (kinds.length + 2));
    const titles = await chart.locator("svg g[aria-label='bar'] rect title").allTextContents();
    for (const kind of kinds) {
      expect(titles.some((t) => t.startsWith(`SGLang ${kind}: `))).toBe(true);
      expect(titles.some((t) => t.startsWith(`vLLM ${kind}: `))).toBe(true);
    }
    const caption = await chart.locator("figcaption").textContent();
    expect(caption).toContain("10,510,860 tokens");
    expect(caption).toContain("13,156,864 tokens");
    const axes = await chart.locator("svg [aria-label$='axis label'] text").allTextContents();
    expect(axes.join(" ")).toMatch(/→/);
    expect(await distinctColours(page, await page.locator("#chart-engines > figure").screenshot())).toBeGreaterThan(4);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("a control reruns the comparison; a bad comparison input is an alert; no flag, no chart", async () => {
    const path = writePage("engines-rerun", ["--compare-engines"]);
    const { page, errors } = await openPage(suite.browser(), path, "tp-size=4");
    const want = JSON.parse(cli(["check", "--compare-engines", "--tp-size", "4", "--json"]).stdout);
    const tokens = want.enginesComparison.vllm.tokens.toLocaleString("en-US");
    expect(await page.locator("#chart-engines figcaption").textContent()).toContain(`${tokens} tokens`);
    await page.context().close();

    const bad = await openPage(suite.browser(), path, "pp-size=2");
    expect(await bad.page.locator("#alerts").textContent()).toContain("--pp-size");
    expect(await bad.page.locator("#chart-engines .empty").count()).toBe(1);
    await bad.page.context().close();

    const plain = await openPage(suite.browser(), writePage("plain", []));
    expect(await plain.page.locator("#chart-engines").count()).toBe(0);
    await plain.page.context().close();
    expect([...errors, ...plain.errors]).toEqual([]);
  });
});
