import { afterAll, expect, it } from "vitest";
import { checkLayers } from "../check-layers.mjs";
import { writeTree } from "./fixture.js";

// A folder the build inlines into a browser asset may import a devDependency; the rest of src/ may not, and the
// layer rule still holds inside the bundled folder.
const tree = writeTree({
  "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
  "package.json": { name: "fixture", private: true },
  "tooling/scripts/layers.json": {
    packages: { "@fx/low": { imports: [] }, "@fx/app": { imports: ["@fx/low"] } },
    bundled: { "@fx/app": ["src/page/"] },
  },
  "docs/architecture.md":
    "<!-- layer-table:start -->\n<!-- layer-table:end -->\n<!-- import-graph:start -->\n<!-- import-graph:end -->\n",
  "packages/low/package.json": { name: "@fx/low" },
  "packages/low/src/index.ts": 'export { a } from "@fx/app";\nexport const low = 1;\n',
  "packages/app/package.json": {
    name: "@fx/app",
    dependencies: { "@fx/low": "workspace:*" },
    devDependencies: { "chart-lib": "1.0.0" },
  },
  "packages/app/src/page/chart.ts":
    'import { plot } from "chart-lib";\nimport { low } from "@fx/low";\nexport const c = [plot, low];\n',
  "packages/app/src/index.ts": 'import { plot } from "chart-lib";\nexport const a = plot;\n',
});
afterAll(() => tree.remove());

it("lets a bundled folder import a devDependency, and nothing else in src/", () => {
  const { violations } = checkLayers(tree.root);
  const app = violations.filter((v) => v.startsWith("packages/app/src/"));
  expect(app).toEqual([
    'packages/app/src/index.ts:1: src imports "chart-lib" but chart-lib is not in dependencies of @fx/app',
  ]);
  // The layer rule is not relaxed: low still may not import app.
  expect(violations.some((v) => v.startsWith("packages/low/src/index.ts:1:"))).toBe(true);
});
