import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkLayers } from "../check-layers.mjs";
import { writeTree } from "./fixture.js";

const BLOCKS =
  "<!-- layer-table:start -->\nby hand\n<!-- layer-table:end -->\n<!-- import-graph:start -->\n<!-- import-graph:end -->\n";
const exportsOf = (subpaths: Record<string, string>) =>
  Object.fromEntries(Object.entries(subpaths).map(([sub, src]) => [sub, { "@dsv4-kv/source": src }]));

// The layer table as a DAG: siblings, a subpath-only driver, relative imports across packages, the generated page.
const tree = writeTree({
  "pnpm-workspace.yaml": "packages:\n  - packages/*\n  - tooling/*\n",
  "package.json": { name: "fixture", private: true },
  "tooling/scripts/layers.json": {
    packages: {
      "@fx/base": { imports: [] },
      "@fx/driver": { imports: ["@fx/base"] },
      "@fx/domain": { imports: ["@fx/base"], subpaths: { "./gpu": ["@fx/driver"] } },
      "@fx/left": { imports: ["@fx/base", "@fx/domain"] },
      "@fx/right": { imports: ["@fx/base", "@fx/domain"] },
    },
    private: ["@fx/tools"],
  },
  "docs/architecture.md": BLOCKS,
  "packages/base/package.json": { name: "@fx/base", description: "the base" },
  "packages/base/src/index.ts": "export const base = 1;\n",
  "packages/driver/package.json": { name: "@fx/driver", dependencies: { "@fx/base": "workspace:*" } },
  "packages/driver/src/index.ts": 'export { base } from "@fx/base";\n',
  "packages/driver/scripts/tool.mjs": "export const tool = 1;\n",
  "packages/domain/package.json": {
    name: "@fx/domain",
    exports: exportsOf({ ".": "./src/index.ts", "./gpu": "./src/gpu.ts" }),
    dependencies: { "@fx/base": "workspace:*" },
    peerDependencies: { "@fx/driver": "workspace:*" },
  },
  // the ./gpu entry reaches gpu/run.ts (allowed); the root entry reaches shared.ts (refused); orphan.ts: no entry
  "packages/domain/src/gpu.ts": 'export { run } from "./gpu/run.js";\n',
  "packages/domain/src/gpu/run.ts": 'import { base } from "@fx/driver";\nexport const run = base;\n',
  "packages/domain/src/index.ts": 'export { shared } from "./shared.js";\nexport { base } from "@fx/base";\n',
  "packages/domain/src/shared.ts": 'import type { base } from "@fx/driver";\nexport const shared: typeof base = 1;\n',
  "packages/domain/src/orphan.ts": 'export { base } from "@fx/driver";\n',
  // siblings: left may not import right; right reaches into domain's files by relative path
  "packages/left/package.json": {
    name: "@fx/left",
    dependencies: { "@fx/domain": "workspace:*", "@fx/right": "workspace:*" },
    peerDependencies: { "@fx/driver": "workspace:*" },
    devDependencies: { "@fx/driver": "workspace:*" },
  },
  "packages/left/src/index.ts": 'export { shared } from "@fx/domain";\nexport { r } from "@fx/right";\n',
  "packages/right/package.json": { name: "@fx/right", dependencies: { "@fx/base": "workspace:*" } },
  "packages/right/src/index.ts":
    'import { shared } from "../../domain/src/shared.js";\nexport { base } from "@fx/base";\nexport const r = shared;\n',
  "packages/right/test/own.test.ts": 'import { r } from "../src/index.js";\nexport const t = r;\n',
  "tooling/tools/package.json": { name: "@fx/tools", private: true },
  "tooling/tools/run.mjs": 'import { tool } from "../../packages/driver/scripts/tool.mjs";\nexport { tool };\n',
});
afterAll(() => tree.remove());

describe("check-layers with a DAG layer table", () => {
  const { violations } = checkLayers(tree.root);
  const found = (...parts: string[]) => violations.filter((v) => parts.every((p) => v.includes(p)));

  it("refuses an import between siblings (one layer, neither lists the other)", () => {
    expect(found("packages/left/src/index.ts:2", "imports @fx/right (layer 3)", "not among the imports")).toHaveLength(
      1,
    );
  });
  it("lets a subpath's files import what only that subpath may, and nothing the root entry reaches", () => {
    expect(found("packages/domain/src/gpu/run.ts")).toEqual([]);
    expect(found("packages/domain/src/shared.ts:1", "only for ./gpu", "the . entry reaches it")).toHaveLength(1);
    expect(found("packages/domain/src/orphan.ts:1", "no entry of its exports reaches it")).toHaveLength(1);
  });
  it("sees relative imports into another package, from src/ and from a private package's script", () => {
    expect(
      found("packages/right/src/index.ts:1", "by relative path into @fx/domain (packages/domain/src/shared.ts)"),
    ).toHaveLength(1);
    expect(found("tooling/tools/run.mjs:1", "by relative path into @fx/driver")).toHaveLength(1);
    expect(found("packages/right/test/own.test.ts")).toEqual([]);
  });
  it("counts a peer dependency passed on by an imported workspace package as used", () => {
    expect(found("packages/left/package.json")).toEqual([]);
  });
  it("reports nothing else, and a hand-edited layer table as stale", () => {
    expect(found("docs/architecture.md", "the layer table", "stale")).toHaveLength(1);
    expect(violations).toHaveLength(6);
  });
  it("generates the layer table from layers.json: derived layers (a subpath import counts), siblings on one", () => {
    const { doc } = checkLayers(tree.root);
    writeFileSync(join(tree.root, "docs/architecture.md"), doc!.expected);
    const page = readFileSync(join(tree.root, "docs/architecture.md"), "utf8");
    expect(page).toContain("Five published packages.");
    expect(page).toContain("| 0 | `@fx/base` | none | the base |");
    expect(page).toContain("| 2 | `@fx/domain` | `base`; ./gpu: `driver` |");
    expect(page).toContain("| 3 | `@fx/left` | `base`, `domain` |");
    expect(page).toContain("| 3 | `@fx/right` | `base`, `domain` |");
    expect(checkLayers(tree.root).violations.filter((v) => v.startsWith("docs/"))).toEqual([]);
  });
});

describe("check-layers on a layer table that is not a DAG", () => {
  const broken = writeTree({
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
    "package.json": { name: "fixture", private: true },
    "tooling/scripts/layers.json": {
      packages: {
        "@fx/a": { imports: ["@fx/b"] },
        "@fx/b": { imports: ["@fx/a", "@fx/ghost"] },
      },
      private: ["@fx/a"],
    },
    "docs/architecture.md": BLOCKS,
    "packages/a/package.json": { name: "@fx/a" },
    "packages/b/package.json": { name: "@fx/b" },
  });
  afterAll(() => broken.remove());

  it("reports the cycle, the unknown name and a package listed twice", () => {
    const { violations } = checkLayers(broken.root);
    expect(violations).toContain(
      "tooling/scripts/layers.json: the allowed imports form a cycle: @fx/a -> @fx/b -> @fx/a",
    );
    expect(violations).toContain(
      "tooling/scripts/layers.json: @fx/b may import @fx/ghost, which is not a published entry",
    );
    expect(violations).toContain("tooling/scripts/layers.json: @fx/a is listed both as published and as private");
  });
});
