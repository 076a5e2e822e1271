/**
 * One self-contained HTML report: the page bundle (dist/report-page.js: the CLI's pipeline, planner, memory-pool,
 * server-config, zod and Observable Plot) and the payload inline, the style inline, no URL fetched. Node side:
 * it reads the bundle next to the built module (from src/ under tests, ../../dist/).
 */
import { constants, readFileSync } from "node:fs";
import { access, stat, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError } from "../commands/args.js";
import { fileKindOf } from "../commands/read-input.js";
import type { CheckPayload } from "./check-payload.js";
import { PAYLOAD_ELEMENT_ID, ROOT_ELEMENT_ID } from "./ids.js";
import { PAGE_STYLE } from "./page-style.js";
import type { ResidencyPayload } from "./residency-payload.js";
import type { V41Payload } from "./v41-payload.js";

export type ReportPayload = CheckPayload | ResidencyPayload | V41Payload;

const BUNDLE_NAME = "report-page.js";
/** Built: the bundle sits next to the module; under tests (src/report-html/) it is in ../../dist/. */
const BUNDLE_CANDIDATES = [`./${BUNDLE_NAME}`, `../../dist/${BUNDLE_NAME}`];

let bundleCache: string | null = null;

/** The page bundle's text (read once); a missing bundle is an InputError that says to build the CLI. */
export function readPageBundle(): string {
  bundleCache ??= findPageBundle(BUNDLE_CANDIDATES);
  return bundleCache;
}

/** The first of `candidates` (relative to this module) that can be read. */
export function findPageBundle(candidates: readonly string[]): string {
  for (const candidate of candidates) {
    try {
      return readFileSync(fileURLToPath(new URL(candidate, import.meta.url)), "utf8");
    } catch {
      // try the next place
    }
  }
  throw new InputError(
    "--html",
    BUNDLE_NAME,
    "needs the page bundle dist/report-page.js, which is missing: build the CLI (pnpm exec turbo run build " +
      "--filter=@dsv4-kv/cli)",
    { searched: [...candidates] },
  );
}

const NOSCRIPT = "This report draws its charts with JavaScript: enable it to see them.";

export function renderReportHtml(payload: ReportPayload): string {
  return renderWithBundle(payload, readPageBundle());
}

/** The page from a payload and a bundle's text (exported for the escaping tests). */
export function renderWithBundle(payload: ReportPayload, bundle: string): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(titleOf(payload))}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    "</head>",
    "<body>",
    `<main id="${ROOT_ELEMENT_ID}"><noscript>${NOSCRIPT}</noscript></main>`,
    `<script type="application/json" id="${PAYLOAD_ELEMENT_ID}">${escapeJsonForHtml(payload)}</script>`,
    `<script>${escapeScriptForHtml(bundle)}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

function titleOf(payload: ReportPayload): string {
  if (payload.kind === "check" || payload.kind === "check-v41") return `dsv4-kv check: ${payload.report.model.name}`;
  return "dsv4-kv simulate residency";
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * JSON inside `<script type="application/json">`: `<`, `>` and `&` as \u escapes (so no `</script>` or `<!--`
 * can end or confuse the element), and U+2028/U+2029 too. JSON.parse reads them back unchanged.
 */
export function escapeJsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * A script's text inside `<script>`: `</script` would end the element and `<!--` switches the HTML parser into
 * its escaped state. Both occur only inside string, template or regex literals of minified code, where
 * `<\/script` and `<\u0021--` mean the same characters.
 */
export function escapeScriptForHtml(code: string): string {
  return code.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\u0021--");
}

/** Writes the page; a path that cannot be written is an InputError naming `flag`. */
export async function writeReportHtml(path: string, html: string, flag = "--html"): Promise<void> {
  await requireWritableReportHtml(path, flag);
  try {
    await writeFile(path, html, "utf8");
  } catch (error) {
    throw unwritable(flag, path, errnoOf(error));
  }
}

/**
 * Refuses a page path that cannot be written before a long run (it would otherwise fail at its end), with
 * writeReportHtml's words; the write itself still reports what this check could not foresee.
 */
export async function requireWritableReportHtml(path: string, flag = "--html"): Promise<void> {
  let code: string | null = null;
  const existing = await stat(path).catch(() => null);
  const kind = existing === null ? null : fileKindOf(existing);
  // a FIFO without a reader would block the write forever; a device or socket is no report
  if (kind !== null && kind.kind !== "directory") {
    throw new InputError(flag, path, `is ${kind.words}, not a file a report can be written to`, {
      fileKind: kind.kind,
    });
  }
  try {
    if (existing?.isDirectory()) code = "EISDIR";
    else await access(existing === null ? dirname(resolve(path)) : path, constants.W_OK);
  } catch (error) {
    code = errnoOf(error);
  }
  if (code !== null) throw unwritable(flag, path, code);
}

const errnoOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? "unknown error";

function unwritable(flag: string, path: string, code: string): InputError {
  return new InputError(flag, path, `cannot be written (${code}): give a path in a writable folder`, { errno: code });
}
