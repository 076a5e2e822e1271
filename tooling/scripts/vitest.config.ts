import { definePackageConfig } from "@dsv4-kv/vitest-preset";
import { sourceAliases } from "./lib/source-aliases.mjs";

// The README examples (test/readme-examples-run.test.ts) import any workspace package: each public and private
// entry resolves to its TypeScript source, as the "@dsv4-kv/source" condition does inside the packages.
export default definePackageConfig({ resolve: { alias: sourceAliases(new URL("../..", import.meta.url).pathname) } });
