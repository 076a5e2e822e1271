#!/usr/bin/env node
// Sums vitest JSON reports (one per package, written by @dsv4-kv/vitest-preset) into the one closing line CI
// reads: "N passed, N failed, N skipped". Exit code 1 when any test failed, any suite failed to load, or a
// package that has tests left no report (a crashed runner must not read as green).
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

// --extra "NAME=passed|failed" (repeatable): a check outside vitest (pnpm lint) counted as one test.
const args = process.argv.slice(2);
const root = resolve(args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--extra") ?? ".");
const extras = args.flatMap((a, i) => (args[i - 1] === "--extra" ? [a] : []));
let passed = 0,
  failed = 0,
  skipped = 0;
const problems = [];
for (const group of ["packages", "tooling"]) {
  const dir = join(root, group);
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir)) {
    const pkgDir = join(dir, name);
    if (!existsSync(join(pkgDir, "test"))) continue;
    const report = join(pkgDir, ".vitest", "report.json");
    if (!existsSync(report)) {
      problems.push(`${group}/${name}: no vitest report (runner crashed or never ran)`);
      continue;
    }
    const data = JSON.parse(readFileSync(report, "utf8"));
    for (const file of data.testResults ?? []) {
      // A file that failed with no failed test (it did not load, or a hook such as beforeAll threw and vitest
      // marked its tests skipped) is one failure: the line must never read "0 failed" for a red run.
      if (file.status === "failed" && !(file.assertionResults ?? []).some((t) => t.status === "failed")) {
        problems.push(
          `${group}/${name}: ${file.name}: ${String(file.message ?? "suite failed to load").split("\n")[0]}`,
        );
        failed += 1;
      }
      for (const t of file.assertionResults ?? []) {
        if (t.status === "passed") passed += 1;
        else if (t.status === "failed") failed += 1;
        else skipped += 1; // skipped, pending, todo
      }
    }
  }
}
for (const extra of extras) {
  const [name, status] = [extra.slice(0, extra.lastIndexOf("=")), extra.slice(extra.lastIndexOf("=") + 1)];
  if (status === "passed") passed += 1;
  else {
    failed += 1;
    problems.push(`${name}: ${status} (see its output above)`);
  }
}
for (const p of problems) console.log(`problem: ${p}`);
const missingReports = problems.some((p) => p.includes("no vitest report"));
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || missingReports || passed === 0 ? 1 : 0);
