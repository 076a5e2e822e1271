import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkLayers } from "../check-layers.mjs";
import { REPO_ROOT, writeTree } from "./fixture.js";

const START = "<!-- import-graph:start -->";
const END = "<!-- import-graph:end -->";
const TABLE_START = "<!-- layer-table:start -->";
const TABLE_END = "<!-- layer-table:end -->";

const tree = writeTree({
  "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
  "package.json": { name: "fixture", private: true, devDependencies: { vitest: "1.0.0" } },
  "tooling/scripts/layers.json": {
    packages: {
      "@fx/low": { imports: [] },
      "@fx/mid": { imports: ["@fx/low"] },
      "@fx/high": { imports: ["@fx/mid"] },
    },
    private: ["@fx/checks"],
  },
  "docs/architecture.md": `# Architecture\n\n${TABLE_START}\n${TABLE_END}\n\n${START}\nhand-drawn\n${END}\n`,
  "packages/low/package.json": { name: "@fx/low", dependencies: { "@fx/mid": "workspace:*" } },
  // a lower layer importing a higher one, and a package importing itself
  "packages/low/src/index.ts":
    'import { m } from "@fx/mid/internal";\nexport { own } from "@fx/low";\nexport const l = m;\n',
  "packages/mid/package.json": {
    name: "@fx/mid",
    dependencies: {
      "@fx/low": "workspace:*",
      "type-only-dep": "1.0.0",
      "never-imported": "1.0.0",
      "tests-only": "1.0.0",
    },
    devDependencies: {
      "@fx/tsconfig": "workspace:*",
      "@types/node": "20.0.0",
      "cmake-js": "8.0.0",
      "node-addon-api": "8.0.0",
      "unused-tool": "1.0.0",
    },
    scripts: { "build:native": "cmake-js compile --out build" },
  },
  "packages/mid/tsconfig.json": { extends: "@fx/tsconfig/base.json" },
  "packages/mid/CMakeLists.txt": "execute_process(COMMAND node -p \"require('node-addon-api').include\")\n",
  "packages/mid/src/index.ts": [
    'import { readFileSync } from "node:fs";',
    'import type { T } from "type-only-dep";',
    'import { low } from "@fx/low";',
    'export { pad } from "undeclared-reexport";',
    "export async function load(): Promise<unknown> {",
    '  return import("undeclared-dynamic");',
    "}",
    'export const legacy = require("undeclared-require");',
    "export const x: T | string = readFileSync.name + low;",
    "",
  ].join("\n"),
  "packages/mid/test/mid.test.ts": [
    'import { expect, it } from "vitest";',
    'import fc from "fast-check";',
    'import { t } from "tests-only";',
    'import { load } from "@fx/mid";',
    "it('x', () => expect([fc, t, load]).toBeTruthy());",
    "",
  ].join("\n"),
  "packages/high/package.json": { name: "@fx/high", dependencies: { "@fx/mid": "workspace:*" } },
  "packages/high/src/index.ts": 'export { x } from "@fx/mid";\n',
  "packages/checks/package.json": {
    name: "@fx/checks",
    private: true,
    devDependencies: { "@fx/high": "workspace:*", "@fx/mid": "workspace:*" },
  },
  "packages/checks/test/all.test.ts": 'import { x } from "@fx/high";\nimport { m } from "@fx/mid";\nexport { x, m };\n',
  "packages/stray/package.json": { name: "@fx/stray" },
});
afterAll(() => tree.remove());

describe("check-layers on a fixture tree with one violation of each kind", () => {
  const { violations } = checkLayers(tree.root);
  const found = (...parts: string[]) => violations.filter((v) => parts.every((p) => v.includes(p)));

  it("reports a src import of a higher layer (subpath imports count as the package)", () => {
    expect(found("packages/low/src/index.ts:1", "imports @fx/mid (layer 1)")).toHaveLength(1);
  });
  it("reports a src import of the package itself", () => {
    expect(found("packages/low/src/index.ts:2", "imports itself")).toHaveLength(1);
  });
  it("reports src imports missing from dependencies: export-from, import() and require alike", () => {
    for (const [line, name] of [
      [4, "undeclared-reexport"],
      [6, "undeclared-dynamic"],
      [8, "undeclared-require"],
    ] as const) {
      expect(found(`packages/mid/src/index.ts:${line}`, `${name} is not in dependencies`)).toHaveLength(1);
    }
  });
  it("reports a test import that is in no dependency list (root devDependencies are allowed)", () => {
    expect(found("packages/mid/test/mid.test.ts:2", "fast-check is not a dependency")).toHaveLength(1);
    expect(found("vitest")).toEqual([]);
  });
  it("reports declared dependencies nothing uses, and runtime dependencies only tests use", () => {
    expect(found("dependency never-imported", "nothing imports it")).toHaveLength(1);
    expect(found("dependency tests-only", "make it a devDependency")).toHaveLength(1);
    expect(found("devDependencies entry unused-tool")).toHaveLength(1);
    expect(found("packages/low/package.json: dependency @fx/mid")).toEqual([]); // imported through a subpath
  });
  it("does not report tools used by scripts, CMake, tsconfig, node: imports or type-only imports", () => {
    for (const name of ["cmake-js", "node-addon-api", "@fx/tsconfig", "@types/node", "type-only-dep", "node:fs"]) {
      expect(found(name)).toEqual([]);
    }
  });
  it("lets a private package's tests import any layer", () => {
    expect(found("packages/checks/")).toEqual([]);
  });
  it("reports a package missing from the layer table", () => {
    expect(found("packages/stray/package.json", "@fx/stray is not in the layer table")).toHaveLength(1);
  });
  it("reports a stale graph, and the generated block holds the real edges", () => {
    expect(found("docs/architecture.md", "stale")).toHaveLength(1);
    const { doc } = checkLayers(tree.root);
    expect(doc?.expected).toContain("  high --> mid\n");
    expect(doc?.expected).toContain("  mid --> low\n");
    expect(doc?.expected).toContain("  low --> mid\n");
    writeFileSync(join(tree.root, "docs/architecture.md"), doc!.expected);
    expect(checkLayers(tree.root).violations.filter((v) => v.includes("docs/architecture.md"))).toEqual([]);
  });
  it("reports nothing else", () => {
    expect(violations).toHaveLength(11);
  });
});

describe("check-layers on the repository", () => {
  it("finds no violation, and docs/architecture.md holds the generated graph", () => {
    const { violations, doc } = checkLayers(REPO_ROOT);
    expect(violations).toEqual([]);
    expect(readFileSync(join(REPO_ROOT, "docs/architecture.md"), "utf8")).toBe(doc?.expected);
  });
});
