// Shared vitest settings. Every package writes a JSON report to .vitest/report.json: the CI summary
// (tooling/scripts/summarize-vitest.mjs) counts passed/failed/skipped from those files, and turbo caches
// them as the test task's output so a cache hit still contributes its counts.
import { defineConfig, mergeConfig } from "vitest/config";

const SOURCE_CONDITIONS = ["@dsv4-kv/source", "module", "node", "import", "default"];

/**
 * @param {import("vitest/config").UserConfig} [overrides]
 * @returns {import("vitest/config").UserConfig}
 */
export function definePackageConfig(overrides = {}) {
  return mergeConfig(
    defineConfig({
      // Workspace packages resolve to their TypeScript sources (the "@dsv4-kv/source" export condition), so a
      // test never runs against a stale dist/ of a package below it.
      resolve: { conditions: SOURCE_CONDITIONS },
      ssr: { resolve: { conditions: SOURCE_CONDITIONS, externalConditions: SOURCE_CONDITIONS } },
      test: {
        include: ["test/**/*.test.ts"],
        // verbose so a skipped GPU test prints its reason next to its name
        reporters: ["verbose", "json"],
        outputFile: { json: ".vitest/report.json" },
        testTimeout: 60_000,
        hookTimeout: 60_000,
      },
    }),
    overrides,
  );
}
