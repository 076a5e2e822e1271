// `check --html` for DeepSeek-V4.1 in a real headless Chromium: the page loads with no console error and no network
// request, shows the CLI's verdict and V4.1 rule errors, draws every pool (allocated against reserved) and the
// ratio-2 ring geometry per layer group from the config (R₂ 8 with DSpark's 6 draft tokens, 2 without). Before, --html
// was refused for V4.1. 256 running requests: the worked example of docs/reference/deepseek-v4.1.md §7. The pages
// are written by the built CLI (rebuild it first).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { cli } from "../cli-helpers.js";
import { browserSuite, openPage } from "./harness.js";

const { dir, browser: browserOf } = browserSuite("dsv4kv-v41-page-");

function writePage(name: string, args: string[]) {
  const path = join(dir, `${name}.html`);
  const r = cli(["check", "--model", "DeepSeek-V4.1-Flash", "--max-running-requests", "256", ...args, "--html", path]);
  expect(r.code, r.stderr).toBeLessThan(2);
  return path;
}

const rings = (page: Page) =>
  page
    .locator("#v41-rings tbody tr")
    .evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll("td"), (td) => td.textContent)));

describe("check --html for DeepSeek-V4.1 in Chromium", () => {
  test("DSpark: the verdict, seven pools, three ratio-2 groups with R₂ 8 and the ratio-1 group", async () => {
    const { page, errors } = await openPage(browserOf(), writePage("dspark", []));
    expect(await page.locator("#verdict").textContent()).toBe("Result: VALID (0 errors)");
    expect(await page.locator("#chart-v41-pools svg").count()).toBeGreaterThan(0);
    // Seven pools, each an allocated and a reserved bar.
    expect(await page.locator("#chart-v41-pools svg g[aria-label='bar'] rect").count()).toBe(14);
    expect(await rings(page)).toEqual([
      ["2–7", "2", "2", "8", "2,066"],
      ["8–13", "2", "8", "8", "2,066"],
      ["14–19", "2", "14", "8", "2,066"],
      ["20–39", "1", "20", "— (no state)", "—"],
    ]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("without speculation: R₂ 2 and no draft pool; a refused algorithm shows its V4.1 rule", async () => {
    const plain = await openPage(browserOf(), writePage("plain", ["--speculative-algorithm", "none"]));
    expect((await rings(plain.page))[0]).toEqual(["2–7", "2", "2", "2", "518"]);
    expect(await plain.page.locator("#chart-v41-pools svg g[aria-label='bar'] rect").count()).toBe(12);
    expect(plain.errors).toEqual([]);
    await plain.page.context().close();
    const eagle = await openPage(browserOf(), writePage("eagle", ["--speculative-algorithm", "EAGLE"]));
    expect(await eagle.page.locator("#verdict").textContent()).toBe("Result: INVALID (1 errors)");
    expect(await eagle.page.locator("#issues .error").first().textContent()).toMatch(/^\[V41-S1\] /);
    expect(eagle.errors).toEqual([]);
    await eagle.page.context().close();
  });

  test("under --against-log: the pools and the log part, every figure of the LECYWZA sizing log matching", async () => {
    const logs = join(import.meta.dirname, "..", "..", "..", "server-config", "test", "fixtures", "sglang-logs-v41");
    const log = join(logs, "lecywza-runtime-report-20260912-tp3-gb10-sizing.log");
    const path = join(dir, "against-log.html");
    const r = cli(["check", "--model", "DeepSeek-V4.1-Flash", "--against-log", log, "--html", path]);
    expect(r.code, r.stderr).toBe(0);
    const { page, errors } = await openPage(browserOf(), path);
    expect(await page.locator("#chart-v41-pools svg").count()).toBeGreaterThan(0);
    expect(await page.locator("#log .log-summary").textContent()).toMatch(/every compared figure matches \(31\)/);
    expect(await page.locator("#log tr.figure.compared").count()).toBe(31);
    expect(await page.locator("#log tr.differs").count()).toBe(0);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
