/**
 * Drives Debian's Chromium (no browser download) through playwright-core for the HTML report tests. These tests
 * never skip: without Chromium they fail with the fix (`.ci/run` installs it: `apt-get install -y chromium`).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

/** The browser binary: `DSV4KV_CHROMIUM`, else Debian's. */
export const CHROMIUM_PATH = process.env.DSV4KV_CHROMIUM ?? "/usr/bin/chromium";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set DSV4KV_CHROMIUM`);
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ["--no-sandbox"] });
}

export interface OpenedPage {
  page: Page;
  /** console.error messages and uncaught exceptions, in order. */
  errors: string[];
}

/** Opens an HTML file (with an optional URL fragment, no leading `#`), with network access refused. */
export async function openPage(browser: Browser, htmlPath: string, fragment = ""): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1600 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console.error: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  // A self-contained page needs nothing but its own file: any other request is an error.
  const url = pathToFileURL(htmlPath).href;
  await page.route("**/*", (route) => {
    if (route.request().url().split("#")[0] === url) return route.continue();
    errors.push(`request: ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(fragment ? `${url}#${fragment}` : url, { waitUntil: "load" });
  return { page, errors };
}

/** How many distinct colours a PNG has (decoded in the page's own canvas: no image library needed). */
export async function distinctColours(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(async (base64) => {
    const image = new Image();
    image.src = `data:image/png;base64,${base64}`;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext("2d")!;
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, image.width, image.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < pixels.length && seen.size < 64; i += 4)
      seen.add((pixels[i]! << 16) | (pixels[i + 1]! << 8) | pixels[i + 2]!);
    return seen.size;
  }, png.toString("base64"));
}

/**
 * One browser and one scratch folder for a test file: launched before its tests, closed and removed after. The
 * browser is read through `browser()` once `beforeAll` has run.
 */
export function browserSuite(prefix: string): { dir: string; browser: () => Browser } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, browser: () => browser! };
}
