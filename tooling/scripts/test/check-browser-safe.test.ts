import { afterAll, describe, expect, it } from "vitest";
import { BROWSER_SAFE_PACKAGES, checkBrowserSafe, scanSource } from "../check-browser-safe.mjs";
import { REPO_ROOT, writeTree } from "./fixture.js";

const manifest = (name: string) => ({ name, exports: { ".": { "@dsv4-kv/source": "./src/index.ts" } } });

const tree = writeTree({
  "packages/planner/package.json": manifest("@fx/planner"),
  "packages/planner/src/index.ts": 'import fs from "node:fs";\nexport const size = fs.statSync(".").size;\n',
  "packages/memory-pool/package.json": manifest("@fx/memory-pool"),
  "packages/memory-pool/src/index.ts": "export const budget = Number(process.env.BUDGET ?? 0);\n",
  // a test file may use Node: only src/ runtime files count
  "packages/memory-pool/test/pool.test.ts": 'import { readFileSync } from "node:fs";\nexport { readFileSync };\n',
  "packages/server-config/package.json": manifest("@fx/server-config"),
  "packages/server-config/src/index.ts": [
    "// process.env and Buffer in a comment are fine, and so is a property named process",
    'export const note = "require(\\"node:fs\\")";',
    "export const env = (globalThis as { process?: { env?: object } }).process?.env;",
    "export const o = { process: 1, Buffer: 2 };",
    'export type { Stats } from "node:fs";',
    "",
  ].join("\n"),
  // the source scan is clean, but a dependency imports a Node built-in: only the bundle sees it
  "packages/transitive/package.json": manifest("@fx/transitive"),
  "packages/transitive/src/index.ts": 'export { home } from "needs-node";\n',
  "packages/transitive/node_modules/needs-node/package.json": { name: "needs-node", main: "index.js" },
  "packages/transitive/node_modules/needs-node/index.js": 'const os = require("os");\nexports.home = os.homedir;\n',
});
afterAll(() => tree.remove());

describe("check-browser-safe", () => {
  it("flags an import of node:fs with its file and line", () => {
    const { violations } = checkBrowserSafe(tree.root, { packages: ["packages/planner"], bundle: false });
    expect(violations).toEqual(['packages/planner/src/index.ts:1: import of "node:fs" (a Node built-in)']);
  });

  it("flags a process.env read, not a test file's Node import", () => {
    const { violations, files } = checkBrowserSafe(tree.root, { packages: ["packages/memory-pool"], bundle: false });
    expect(files).toBe(1);
    expect(violations).toEqual(["packages/memory-pool/src/index.ts:1: use of the Node global `process`"]);
  });

  it("passes a clean file (comments, strings, property names, globalThis.process, type-only imports)", () => {
    const { violations } = checkBrowserSafe(tree.root, { packages: ["packages/server-config"] });
    expect(violations).toEqual([]);
  });

  it("fails the browser bundle when a dependency imports a Node built-in", () => {
    const { violations } = checkBrowserSafe(tree.root, { packages: ["packages/transitive"] });
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/^packages\/transitive\/node_modules\/needs-node\/index\.js:1: browser bundle/);
    expect(violations[0]).toContain('"os"');
  });

  it("finds bare built-ins, dynamic import(), require, Buffer and __dirname", () => {
    const text = [
      'import { join } from "path";',
      'export * from "fs/promises";',
      'const m = await import("node:crypto");',
      'const c = require("child_process");',
      "const b = Buffer.from([1]);",
      "const d = __dirname;",
      "",
    ].join("\n");
    expect(scanSource(text, "x.ts").map((f) => `${f.line}: ${f.what}`)).toEqual([
      '1: import of "path" (a Node built-in)',
      '2: re-export from "fs/promises" (a Node built-in)',
      '3: dynamic import() of "node:crypto" (a Node built-in)',
      '4: require of "child_process" (a Node built-in)',
      "4: use of the Node global `require`",
      "5: use of the Node global `Buffer`",
      "6: use of the Node global `__dirname`",
    ]);
  });

  it("passes on this repository", () => {
    const { violations, files } = checkBrowserSafe(REPO_ROOT);
    expect(violations).toEqual([]);
    expect(files).toBeGreaterThan(BROWSER_SAFE_PACKAGES.length);
  });
});
