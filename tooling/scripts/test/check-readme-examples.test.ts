import { afterAll, describe, expect, it } from "vitest";
import { checkReadmeExamples, codeBlocks } from "../check-readme-examples.mjs";
import { REPO_ROOT, writeTree } from "./fixture.js";

const source = (entry: string) => ({
  "@dsv4-kv/source": `./src/${entry}.ts`,
  import: { types: `./dist/${entry}.d.ts`, default: `./dist/${entry}.js` },
});
const fence = "`".repeat(3);
const block = (lang: string, ...lines: string[]) => [`${fence}${lang}`, ...lines, fence].join("\n");

const tree = writeTree({
  "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
  "packages/low/package.json": {
    name: "@dsv4-kv/low",
    exports: {
      ".": source("index"),
      "./gpu": source("gpu"),
      "./internal": source("internal"),
      "./testing": source("testing"),
      "./schema.json": "./schema.json",
    },
  },
  "packages/low/src/index.ts": 'export { plan, type Plan } from "./plan.js";\nexport * from "./more.js";\n',
  "packages/low/src/plan.ts":
    "export type Plan = { rows: number };\nexport function plan(): Plan { return { rows: 1 }; }\n",
  "packages/low/src/more.ts": "export const MORE = 1;\nexport function helper() {}\n",
  "packages/low/src/gpu.ts": "export function gpuPlan() {}\n",
  "packages/low/src/internal.ts": 'export { helper as shared } from "./more.js";\n',
  "packages/low/src/testing.ts": "export const fixture = 1;\n",
  "packages/low/README.md": [
    "# low",
    block(
      "ts",
      'import { plan, type Plan, MORE } from "@dsv4-kv/low";', // 3: fine (a star re-export counts)
      'import { gpuPlan } from "@dsv4-kv/low/gpu";', // 4: fine (a public subpath)
      'import schema from "@dsv4-kv/low/schema.json" with { type: "json" };', // 5: fine (data)
      'import { shared } from "@dsv4-kv/low/internal";', // 6: internal
      'import { fixture } from "@dsv4-kv/low/testing";', // 7: testing
      'import { gpuPlan as g, plan as p } from "@dsv4-kv/low";', // 8: gpuPlan is not on the root
      'import * as low from "@dsv4-kv/low";', // 9: namespace
      'const lazy = await import("@dsv4-kv/low/internal");', // 10: dynamic import of internal
    ),
    "",
    block("sh", "node -e 'import(\"@dsv4-kv/low/internal\")'"), // not a code language checked
    "",
    block("js", 'export { nothing } from "@dsv4-kv/low/nowhere";'), // 18: no such subpath
  ].join("\n"),
  "packages/priv/package.json": { name: "@dsv4-kv/priv", private: true },
  "packages/priv/README.md": block("ts", 'import { x } from "@dsv4-kv/low/internal";'), // private: not checked
});
afterAll(() => tree.remove());

describe("check-readme-examples on a fixture tree", () => {
  const { findings } = checkReadmeExamples(tree.root);
  const at = findings.map((f) => `${f.file}:${f.line}: ${f.message}`);

  it("reports private subpaths, names not on the entry, namespace imports and unknown subpaths, on their lines", () => {
    expect(at).toEqual([
      "packages/low/README.md:6: @dsv4-kv/low/internal: ./internal is for this repository's packages and tests, not for users",
      "packages/low/README.md:7: @dsv4-kv/low/testing: ./testing is for this repository's packages and tests, not for users",
      "packages/low/README.md:8: @dsv4-kv/low: gpuPlan not exported by the root entry",
      "packages/low/README.md:9: @dsv4-kv/low: a namespace import reaches every export: import the names the example uses",
      "packages/low/README.md:10: @dsv4-kv/low/internal: ./internal is for this repository's packages and tests, not for users",
      "packages/low/README.md:18: @dsv4-kv/low/nowhere: @dsv4-kv/low exports no ./nowhere subpath",
    ]);
  });
  it("reads only code blocks of a script language", () => {
    expect(codeBlocks(`${block("sh", "x")}\n${block("ts", "a", "b")}`).map((b) => b.code)).toEqual(["a\nb"]);
  });
});

describe("check-readme-examples on the repository", () => {
  it("every README example imports only what its package's public entries export", () => {
    const { findings, imports } = checkReadmeExamples(REPO_ROOT);
    expect(imports).toBeGreaterThan(15);
    expect(findings.map((f) => `${f.file}:${f.line}: ${f.message}`)).toEqual([]);
  });
});
