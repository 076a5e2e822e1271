import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, writeTree } from "./fixture.js";

const script = join(REPO_ROOT, "tooling/scripts/summarize-vitest.mjs");

function summarize(testResults: object[]): { line: string; problems: string[]; code: number | null } {
  const tree = writeTree({ "packages/a/test/x.test.ts": "", "packages/a/.vitest/report.json": { testResults } });
  try {
    const r = spawnSync(process.execPath, [script, tree.root], { encoding: "utf8" });
    const lines = r.stdout.trim().split("\n");
    return { line: lines.at(-1) ?? "", problems: lines.filter((l) => l.startsWith("problem:")), code: r.status };
  } finally {
    tree.remove();
  }
}

describe("summarize-vitest: the closing line counts every failure", () => {
  it("counts passed, failed and skipped tests", () => {
    const r = summarize([
      {
        name: "x.test.ts",
        status: "failed",
        assertionResults: [{ status: "passed" }, { status: "failed" }, { status: "skipped" }],
      },
    ]);
    expect(r.line).toBe("1 passed, 1 failed, 1 skipped");
    expect(r.code).toBe(1);
  });
  it("a suite that failed to load counts as one failure", () => {
    const r = summarize([{ name: "x.test.ts", status: "failed", message: "SyntaxError", assertionResults: [] }]);
    expect(r.line).toBe("0 passed, 1 failed, 0 skipped");
    expect(r.code).toBe(1);
  });
  it("a file that failed outside its tests (a beforeAll hook) counts as one failure, not as skipped tests only", () => {
    // vitest marks the hook's tests skipped and the file failed: the line must not read "0 failed".
    const r = summarize([
      {
        name: "tarball.test.ts",
        status: "failed",
        message: "Command failed: npm install",
        assertionResults: [{ status: "passed" }, { status: "skipped" }, { status: "skipped" }],
      },
    ]);
    expect(r.line).toBe("1 passed, 1 failed, 2 skipped");
    expect(r.problems.join("\n")).toContain("tarball.test.ts: Command failed: npm install");
    expect(r.code).toBe(1);
  });
});
