// `simulate residency --html` in a real headless Chromium (Debian's, through playwright-core): the page loads with
// no console error and no network request, both charts render, the slot at fault is highlighted and named for
// D 11 on c4 ring 16, and D 10 says there is no violation. Never skipped: without Chromium these tests fail.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { cli } from "../cli-helpers.js";
import { c4Ring16 } from "../helpers.js";
import { browserSuite, distinctColours, openPage } from "./harness.js";

const suite = browserSuite("dsv4kv-residency-page-");
const dir = suite.dir;

/** Writes the page for a D on c4 ring 16 and opens it; the CLI's exit code and stdout come with it. */
async function residencyPage(draftTokens: number) {
  const path = join(dir, `d${draftTokens}.html`);
  const r = cli(c4Ring16(draftTokens, { html: path }));
  const opened = await openPage(suite.browser(), path);
  return { ...opened, code: r.code, stdout: r.stdout };
}

/** Every chart drew an SVG with marks, and its screenshot has more than a few colours. */
async function expectChartsDrawn(page: Page): Promise<void> {
  for (const selector of [".rz-batches", ".rz-ring-slots"]) {
    const chart = page.locator(`${selector} figure`).first();
    await expect.poll(() => chart.locator("svg rect").count()).toBeGreaterThan(3);
    expect(await chart.locator("h2").first().textContent()).not.toBe("");
    expect(await chart.locator("figcaption").textContent()).toMatch(/\w+/);
    const axisLabels = await chart
      .locator("svg [aria-label$='axis'] text, svg [aria-label$='label'] text")
      .allTextContents();
    expect(axisLabels.join(" ")).toMatch(/→|↓/);
    expect(await distinctColours(page, await chart.screenshot())).toBeGreaterThan(5);
  }
}

describe("simulate residency --html in Chromium", () => {
  test("D 11 on c4 ring 16: the page draws the ring and highlights and names slot 24", async () => {
    const { page, errors, code, stdout } = await residencyPage(11);
    expect(code).toBe(1);
    await expectChartsDrawn(page);
    // the verdict in the terminal's words
    expect((await page.locator("#verdict > div").allTextContents()).join("\n")).toBe(stdout.trim());
    // the fault: slot, lost position, the write (none: the committing batch never wrote it), the reader
    const fault = page.locator(".rz-fault");
    expect(await fault.locator("[data-fault-slot]").textContent()).toBe("slot 24");
    const text = await fault.textContent();
    expect(text).toContain("slot 24 should hold committed position 344");
    expect(text).toContain("step 4 (verify of D=11 at prefix 344, accept 7) committed position 344 without writing it");
    expect(text).toContain("position 328, written by step 2");
    // the highlight sits on the row of slot 24 in the ring chart
    // the chart's own svg (the legend's swatches are svgs too)
    const ring = page.locator('.rz-ring-slots svg:has(g[aria-label="y-axis tick"])');
    const highlight = ring.locator("g.rz-fault-slot rect");
    expect(await highlight.count()).toBe(1);
    expect(await highlight.getAttribute("aria-label")).toBe("fault slot");
    expect(await ring.locator("g.rz-fault-slot").getAttribute("stroke")).toBe("#d7191c");
    const tick = ring.locator('g[aria-label="y-axis tick label"] text', { hasText: /^slot 24$/ });
    expect(await tick.count()).toBe(1);
    const [h, t] = [await highlight.boundingBox(), await tick.boundingBox()];
    expect(Math.abs(h!.y + h!.height / 2 - (t!.y + t!.height / 2))).toBeLessThan(h!.height / 2);
    expect(errors).toEqual([]);
  }, 60_000);

  test("D 10 on c4 ring 16: the page says there is no violation and draws the last batches", async () => {
    const { page, errors, code } = await residencyPage(10);
    expect(code).toBe(0);
    await expectChartsDrawn(page);
    expect(await page.locator(".rz-clean").textContent()).toContain(
      "No violation: every compression read the committed value of every position.",
    );
    expect(await page.locator("#verdict").textContent()).toContain("result: clean");
    expect(await page.locator(".rz-fault").count()).toBe(0);
    expect(await page.locator(".rz-fault-slot").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);
});
