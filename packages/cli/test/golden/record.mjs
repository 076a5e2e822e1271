#!/usr/bin/env node
// Records the golden outputs (outputs/<case>.txt) from the built CLI. Run after `pnpm build`, only when an output
// is meant to change, and say in the commit which case changed and why.
// Usage: node packages/cli/test/golden/record.mjs [case-name …]
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CASES, outputPath, runCase } from "./run-case.mjs";

const only = new Set(process.argv.slice(2));
for (const c of CASES) {
  if (only.size > 0 && !only.has(c.name)) continue;
  const path = outputPath(c.name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, runCase(c));
  console.log(`recorded ${c.name}`);
}
