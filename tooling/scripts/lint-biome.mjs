#!/usr/bin/env node
// The Biome step of `pnpm lint`: `biome check .` (linter and formatter check, biome.json) over the whole tree,
// failing on any diagnostic, infos included (`biome check` alone exits 0 on warnings and infos). The findings are
// printed in Biome's own format.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = join(root, "node_modules", ".bin", "biome");
if (!existsSync(bin)) {
  console.error(`biome not found at ${bin}: run pnpm install`);
  process.exit(2);
}
const json = spawnSync(bin, ["check", ".", "--reporter=json"], { cwd: root, encoding: "utf8", maxBuffer: 1 << 28 });
let summary;
try {
  summary = JSON.parse(json.stdout).summary;
} catch {
  process.stderr.write(json.stdout + json.stderr);
  console.error("biome check did not produce a report");
  process.exit(json.status || 2);
}
const findings = summary.errors + summary.warnings + summary.infos;
if (findings === 0 && json.status === 0) {
  console.log("biome check: clean");
  process.exit(0);
}
spawnSync(bin, ["check", ".", "--max-diagnostics=none"], { cwd: root, stdio: "inherit" });
console.error(
  `biome check: ${summary.errors} errors, ${summary.warnings} warnings, ${summary.infos} infos ` +
    "(fix: npx biome check --write <files>, then by hand)",
);
process.exit(1);
