// `check --html` in a real headless Chromium (Debian's, through playwright-core): the page loads with no console
// error and no network request, every chart renders, the verdict is the CLI's (also after a fragment or a control
// reruns the check in the page), 11 draft tokens show INVALID, the ring limit and the clobbered slot, and a bad
// fragment value shows its typed error. Never skipped: without Chromium these tests fail. The pages are written by
// the built CLI (rebuild it first: pnpm exec turbo run build --filter=@dsv4-kv/cli).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cli } from "../cli-helpers.js";
import { distinctColours, launchBrowser, openPage } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4kv-check-page-"));
const FIXTURES = join(import.meta.dirname, "..", "fixtures");
const CHARTS = ["#chart-memory", "#chart-capacity", "#chart-ring", "#chart-residency"];
let browser: Browser;
let defaultPage: string;

beforeAll(async () => {
  browser = await launchBrowser();
  defaultPage = writePage("default", []).path;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `dsv4-kv check ARGS --html FILE`; its stdout, exit code and the page's path. */
function writePage(name: string, args: string[]) {
  const path = join(dir, `${name}.html`);
  const r = cli(["check", ...args, "--html", path]);
  expect(r.code, r.stderr).toBeLessThan(2);
  return { path, ...r };
}

/** The terminal report's verdict line for `args`. */
function cliVerdict(args: string[]): string {
  const r = cli(["check", ...args]);
  const line = r.stdout.split("\n").find((l) => l.startsWith("Result: "));
  expect(line, r.stderr).toBeDefined();
  return line!;
}

const verdict = (page: Page) => page.locator("#verdict").textContent();
const hash = (page: Page) => page.evaluate(() => location.hash);

describe("check --html in Chromium", () => {
  test("loads with no console error or request; the verdict and the report are the CLI's", async () => {
    const { page, errors } = await openPage(browser, defaultPage);
    expect(await verdict(page)).toBe(cliVerdict([]));
    expect(await page.locator("#provenance").textContent()).toContain("identical to the report");
    expect(await page.locator("#issues-title").textContent()).toBe("Errors and warnings: none");
    // the resolved arguments say what was defaulted
    const args = page.locator("#arguments tr.note.defaulted");
    expect(await args.count()).toBeGreaterThan(5);
    expect(await page.locator("#arguments").textContent()).toContain("check's default run");
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("every chart draws an SVG with marks, a title, axis labels, a caption and more than a few colours", async () => {
    const { page, errors } = await openPage(browser, defaultPage);
    for (const id of CHARTS) {
      const chart = page.locator(id);
      const marks = chart.locator("svg g[aria-label] rect, svg g[aria-label] circle, svg g[aria-label] path");
      expect(await marks.count(), id).toBeGreaterThan(3);
      expect(await chart.locator("h2").textContent(), id).toMatch(/\w/);
      expect(await chart.locator("figcaption").textContent(), id).toMatch(/\w{3}/);
      const axes = await chart.locator("svg [aria-label$='axis label'] text").allTextContents();
      expect(axes.join(" "), id).toMatch(/→|↑/);
      const png = await page.locator(`${id} > figure`).screenshot();
      expect(await distinctColours(page, png), id).toBeGreaterThan(4);
    }
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("#speculative-num-draft-tokens=11 shows INVALID, the ring limit 10 and the clobbered slot", async () => {
    const { page, errors } = await openPage(browser, defaultPage, "speculative-num-draft-tokens=11");
    expect(await verdict(page)).toBe(cliVerdict(["--speculative-num-draft-tokens", "11"]));
    expect(await verdict(page)).toMatch(/^Result: INVALID \(2 errors/);
    expect(await page.locator("#issues [data-rule='V-S8']").count()).toBe(1);
    expect(await page.locator("#issues [data-rule='V-S8'] .fix").textContent()).toMatch(/^Fix: /);
    const ring = page.locator("#chart-ring");
    expect(await ring.locator("figcaption").textContent()).toContain("serves at most 10 draft tokens");
    expect(await ring.locator("[data-clobbered-slots]").getAttribute("data-clobbered-slots")).toBe("0");
    expect(await ring.locator("figcaption").textContent()).toContain("slot 0 is clobbered");
    // the cell of the lost position names the rejected draft that took its slot
    expect(await ring.locator("svg text").allTextContents()).toContain("✗ 544");
    const capacity = await page.locator("#chart-capacity svg text").allTextContents();
    expect(capacity).toContain("current rings serve ≤ 10");
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("a control changed by keyboard or select reruns the check: the verdict and the fragment follow", async () => {
    const { page, errors } = await openPage(browser, defaultPage);
    const draft = page.locator("#control-speculative-num-draft-tokens");
    expect(await page.locator("label[for='control-speculative-num-draft-tokens']").textContent()).toContain(
      "--speculative-num-draft-tokens",
    );
    await draft.focus();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("12");
    await page.keyboard.press("Tab");
    expect(await hash(page)).toBe("#speculative-num-draft-tokens=12");
    expect(await verdict(page)).toBe(cliVerdict(["--speculative-num-draft-tokens", "12"]));
    expect(await verdict(page)).toMatch(/INVALID/);

    await page.selectOption("#control-model", "DeepSeek-V4-Pro");
    await page.locator("#control-tp-size").fill("16");
    await page.locator("#control-tp-size").press("Enter");
    await page.locator("#control-tp-size").blur();
    expect(await hash(page)).toBe("#model=DeepSeek-V4-Pro&tp-size=16&speculative-num-draft-tokens=12");
    expect(await verdict(page)).toBe(
      cliVerdict(["--model", "DeepSeek-V4-Pro", "--tp-size", "16", "--speculative-num-draft-tokens", "12"]),
    );

    await page.selectOption("#control-speculative-algorithm", "none");
    expect(await hash(page)).toContain("speculative-algorithm=none");
    expect(await verdict(page)).toBe(
      cliVerdict([
        "--model",
        "DeepSeek-V4-Pro",
        "--tp-size",
        "16",
        "--speculative-num-draft-tokens",
        "12",
        "--speculative-algorithm",
        "none",
      ]),
    );
    // a value the CLI refuses is refused next to the control; the check is not rerun
    const before = await verdict(page);
    await page.locator("#control-mem-fraction-static").fill("1.5");
    await page.locator("#control-mem-fraction-static").blur();
    expect(await page.locator("#control-mem-fraction-static-error").textContent()).toContain(
      "--mem-fraction-static = 1.5: must be in (0, 1]",
    );
    expect(await verdict(page)).toBe(before);
    await page.locator("#reset").click();
    expect(await hash(page)).toBe("");
    expect(await verdict(page)).toBe(cliVerdict([]));
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("a bad fragment value shows the typed error (field, value, rule); the rest applies", async () => {
    const { page, errors } = await openPage(browser, defaultPage, "speculative-num-draft-tokens=0&tp-size=4");
    const box = page.locator("#alerts .input-error");
    expect(await box.count()).toBe(1);
    expect(await box.getAttribute("data-field")).toBe("--speculative-num-draft-tokens");
    expect(await box.locator("dd").allTextContents()).toEqual([
      "--speculative-num-draft-tokens",
      "0",
      "must be in [1, 65535]",
    ]);
    expect(await verdict(page)).toBe(cliVerdict(["--tp-size", "4"]));
    expect(await page.locator("#chart-memory svg").count()).toBeGreaterThan(0);
    // a setting the check itself refuses (an unknown model) shows its error and the CLI's own settings
    await page.evaluate(() => {
      location.hash = "model=DeepSeek-V4-Flsh";
    });
    await expect
      .poll(() => page.locator("#alerts .input-error").textContent())
      .toContain('did you mean "DeepSeek-V4-Flash"');
    expect(await verdict(page)).toBe(cliVerdict([]));
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("pages from --against-log, --model-config and a pasted launch command recompute the CLI's report", async () => {
    const inputs: string[][] = [
      ["--against-log", join(FIXTURES, "logs/gen-b-tp8.log")],
      ["--model-config", join(FIXTURES, "models/small-dsv4/config.json"), "--kv-budget-bytes", "20000000000"],
      ["--", "sglang", "serve", "--model-path", "deepseek-ai/DeepSeek-V4-Flash", "--tp", "4", "--host", "0.0.0.0"],
    ];
    for (const [i, args] of inputs.entries()) {
      const dash = args.indexOf("--");
      const path = join(dir, `input-${i}.html`);
      const withHtml =
        dash < 0 ? [...args, "--html", path] : [...args.slice(0, dash), "--html", path, ...args.slice(dash)];
      const r = cli(["check", ...withHtml]);
      const { page, errors } = await openPage(browser, path);
      expect(await verdict(page), args.join(" ")).toBe(r.stdout.split("\n").find((l) => l.startsWith("Result: ")));
      expect(await page.locator("#provenance").textContent()).toContain("identical to the report");
      expect(errors).toEqual([]);
      await page.context().close();
    }
  });

  test("an --against-log page shows its section, the other sections, and the skipped and cut lines", async () => {
    const corpus = join(FIXTURES, "../../../server-config/test/fixtures/sglang-logs");
    const twoServers = join(corpus, "amd-infera-mtt-working-process-prose.log");
    const cut = join(corpus, "v41-miaai-issue-27-gb10-tp4-swa-sizing-truncated.log");
    const cases: Array<[string[], string, string]> = [
      [["--against-log", twoServers, "--section", "2"], "#log-skipped li", "Against the log: section 2"],
      [["--against-log", twoServers], "#log-sections li", "Against the log: section 1"],
      [["--against-log", cut], "#log-truncated li", "Against the log: section 1"],
    ];
    for (const [i, [args, list, heading]] of cases.entries()) {
      const path = join(dir, `log-${i}.html`);
      cli(["check", ...args, "--html", path]);
      const { page, errors } = await openPage(browser, path);
      expect(await page.locator("#log h2").textContent()).toContain(heading);
      expect(await page.locator(list).count(), args.join(" ")).toBeGreaterThan(0);
      expect(await page.locator("#log table.figures tbody tr").count()).toBeGreaterThan(0);
      expect(errors).toEqual([]);
      await page.context().close();
    }
  });
});
