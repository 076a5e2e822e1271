import { defineLibraryConfig } from "@dsv4-kv/tsup-config";
import { build } from "esbuild";
import type { Options } from "tsup";

// shims: render.ts finds dist/report-page.js through import.meta.url, which the CJS build needs shimmed.
const library = defineLibraryConfig({ entry: ["src/index.ts", "src/bin.ts"], shims: true }) as Options;

/**
 * The HTML report's page (docs/decisions.md D24): one IIFE with everything bundled (the check pipeline, planner,
 * memory-pool, server-config, zod, Observable Plot). Platform browser: a Node built-in imported by any of them
 * fails this build. The workspace packages come from their dist/, as the CLI runs them. Built after the library,
 * whose `clean` empties dist/ first.
 */
async function buildReportPage(): Promise<void> {
  await build({
    entryPoints: ["src/report-html/page/main.ts"],
    outfile: "dist/report-page.js",
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "eof",
    logLevel: "warning",
  });
}

export default { ...library, onSuccess: buildReportPage };
