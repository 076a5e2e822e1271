import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findLongFunctions, unexempted } from "../check-function-length.mjs";
import { REPO_ROOT, writeTree } from "./fixture.js";

/** A TypeScript function of `lines` lines in all (head and closing brace included). */
function tsFunction(name: string, lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  total += ${i};`);
  return [`export function ${name}(total: number): number {`, ...body, "}", ""].join("\n");
}

/** A CUDA kernel with launch bounds of `lines` lines in all, with a brace in a comment and a string to skip. */
function cudaKernel(name: string, lines: number): string {
  const body = Array.from({ length: lines - 4 }, (_, i) => `  out[threadIdx.x] += ${i};`);
  return [
    `__launch_bounds__(256) __global__ void ${name}(float* out, int n) {`,
    "  // a { in a comment",
    '  const char* s = "}";',
    ...body,
    "}",
    "",
  ].join("\n");
}

/** A class of `lines` lines whose methods are each short. */
function tsClass(name: string, lines: number): string {
  const methods = Array.from({ length: (lines - 2) / 3 }, (_, i) => [`  m${i}(): number {`, `    return ${i};`, "  }"]);
  return [`export class ${name} {`, ...methods.flat(), "}", ""].join("\n");
}

const fixture = writeTree({
  "packages/a/src/long.ts": tsFunction("tooLong", 101),
  "packages/a/src/short.ts": tsFunction("justRight", 100),
  "packages/a/src/arrow.ts": `export const arrowLong = (total: number) => {\n${"  total++;\n".repeat(100)}  return total;\n};\n`,
  "packages/a/src/big-class.ts": tsClass("BigClass", 404),
  "packages/a/src/small-class.ts": tsClass("SmallClass", 398),
  "packages/a/native/long.cu": cudaKernel("K", 101),
  "packages/a/native/short.cu": cudaKernel("Fits", 100),
  "packages/a/test/long.test.ts": tsFunction("aTest", 300),
  "packages/a/src/generated/table.ts": tsFunction("generatedTable", 300),
});
afterAll(fixture.remove);

describe("check-function-length", () => {
  const findings = findLongFunctions(fixture.root);
  const byName = new Map(findings.map((f) => [f.name, f]));

  it("reports a TS function, an arrow function and a class over their limits, with file, line and size", () => {
    expect(byName.get("tooLong")).toEqual({
      file: "packages/a/src/long.ts",
      line: 1,
      name: "tooLong",
      lines: 101,
      limit: 100,
    });
    expect(byName.get("arrowLong")).toMatchObject({ file: "packages/a/src/arrow.ts", lines: 103, limit: 100 });
    expect(byName.get("BigClass")).toMatchObject({ lines: 404, limit: 400 });
  });

  it("reports a CUDA kernel with __launch_bounds__ under its own name, not the qualifier's", () => {
    expect(byName.get("K")).toEqual({ file: "packages/a/native/long.cu", line: 1, name: "K", lines: 101, limit: 100 });
  });

  it("passes code at the limit, and skips tests and generated files", () => {
    for (const name of ["justRight", "SmallClass", "Fits", "aTest", "generatedTable", "m0"]) {
      expect(byName.has(name), name).toBe(false);
    }
    expect(findings).toHaveLength(4);
  });

  it("exits 1 naming each finding, 0 on a tree within the limits", () => {
    const script = join(REPO_ROOT, "tooling/scripts/check-function-length.mjs");
    const failing = spawnSync(process.execPath, [script, "--root", fixture.root], { encoding: "utf8" });
    expect(failing.status).toBe(1);
    expect(failing.stderr).toContain("packages/a/native/long.cu:1  K  101 lines (limit 100)");
    expect(failing.stderr).toContain("check-function-length: 4 over the limit; split them by job");
    const clean = writeTree({
      "packages/b/src/ok.ts": tsFunction("fine", 100),
      "packages/b/native/ok.cu": cudaKernel("Ok", 50),
    });
    try {
      const passing = spawnSync(process.execPath, [script, "--root", clean.root], { encoding: "utf8" });
      expect(passing.status).toBe(0);
      expect(passing.stdout).toContain("every function within its limit");
    } finally {
      clean.remove();
    }
  });

  it("lets an exempted function run to its recorded length, and flags an exemption that no longer applies", () => {
    const exemptions = (entries: object[]) => JSON.stringify({ exemptions: entries });
    const tree = writeTree({
      "packages/c/native/long.cu": cudaKernel("K", 120),
      "tooling/scripts/function-length-exemptions.json": exemptions([
        { file: "packages/c/native/long.cu", name: "K", maxLines: 120, why: "machine code" },
        { file: "packages/c/native/gone.cu", name: "Gone", maxLines: 200, why: "split since" },
      ]),
    });
    const grown = writeTree({
      "packages/c/native/long.cu": cudaKernel("K", 121),
      "tooling/scripts/function-length-exemptions.json": exemptions([
        { file: "packages/c/native/long.cu", name: "K", maxLines: 120, why: "machine code" },
      ]),
    });
    try {
      expect(unexempted(tree.root, findLongFunctions(tree.root))).toEqual([
        "tooling/scripts/function-length-exemptions.json: packages/c/native/gone.cu Gone is no longer over the limit: drop it",
      ]);
      expect(unexempted(grown.root, findLongFunctions(grown.root))).toEqual([
        "packages/c/native/long.cu:1  K  121 lines (limit 100): grew past its exemption (120)",
      ]);
    } finally {
      tree.remove();
      grown.remove();
    }
  });
});
