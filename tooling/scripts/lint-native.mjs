#!/usr/bin/env node
// The clang-format step of `pnpm lint`: checks (never rewrites) every C++/CUDA source under packages/ against the
// root .clang-format. Files come from git (tracked and new, not ignored), so build trees never count.
// Usage: node tooling/scripts/lint-native.mjs [--fix]   (--fix rewrites the files in place)
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles } from "./lib/files.mjs";

const NATIVE = /^packages\/.*\.(?:c|cc|cpp|cxx|h|hh|hpp|cu|cuh)$/;
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = join(root, "node_modules", ".bin", "clang-format");
if (!existsSync(bin)) {
  console.error(`clang-format not found at ${bin}: run pnpm install`);
  process.exit(2);
}
const files = listFiles(root).filter((f) => NATIVE.test(f));
// With no file arguments clang-format would read standard input and wait.
if (files.length === 0) {
  console.log("clang-format: no native files");
  process.exit(0);
}
const args = process.argv.includes("--fix") ? ["-i"] : ["--dry-run", "-Werror"];
const run = spawnSync(bin, [...args, "--style=file", ...files], { cwd: root, stdio: "inherit" });
if (run.status !== 0) {
  console.error(`clang-format: findings in the native sources (fix: node tooling/scripts/lint-native.mjs --fix)`);
  process.exit(run.status ?? 1);
}
console.log(`clang-format: ${files.length} native files clean`);
