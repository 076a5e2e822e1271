// Shared vitest settings. Every package writes a JSON report to .vitest/report.json: the CI summary
// (tooling/scripts/summarize-vitest.mjs) counts passed/failed/skipped from those files, and turbo caches
// them as the test task's output so a cache hit still contributes its counts.
import { defineConfig, mergeConfig } from "vitest/config";

/**
 * @param {import("vitest/config").UserConfig} [overrides]
 * @returns {import("vitest/config").UserConfig}
 */
export function definePackageConfig(overrides = {}) {
  return mergeConfig(
    defineConfig({
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
