import { afterAll, describe, expect, it } from "vitest";
import { checkLayers } from "../check-layers.mjs";
import { writeTree } from "./fixture.js";

// A driver's tests and benches import no package above it; a listed exemption passes, a stale one is a finding.
const tree = writeTree({
  "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
  "package.json": { name: "fixture", private: true, devDependencies: { vitest: "1.0.0" } },
  "tooling/scripts/layers.json": {
    packages: { "@fx/driver": { imports: [] }, "@fx/domain": { imports: ["@fx/driver"] } },
    private: [],
  },
  "tooling/scripts/layer-upward-exemptions.json": {
    exemptions: [
      { file: "packages/driver/bench/old.mjs", imports: "@fx/domain", why: "not moved yet" },
      { file: "packages/driver/test/gone.test.ts", imports: "@fx/domain", why: "moved already" },
    ],
  },
  "docs/architecture.md":
    "<!-- layer-table:start -->\n<!-- layer-table:end -->\n<!-- import-graph:start -->\n<!-- import-graph:end -->\n",
  "packages/driver/package.json": { name: "@fx/driver", devDependencies: { "@fx/domain": "workspace:*" } },
  "packages/driver/src/index.ts": "export const driver = 1;\n",
  "packages/driver/test/up.test.ts": 'import { domain } from "@fx/domain";\nexport const x = domain;\n',
  "packages/driver/bench/old.mjs": 'import { domain } from "@fx/domain";\nexport const y = domain;\n',
  "packages/domain/package.json": { name: "@fx/domain", dependencies: { "@fx/driver": "workspace:*" } },
  "packages/domain/src/index.ts": 'export { driver as domain } from "@fx/driver";\n',
  "packages/domain/test/down.test.ts": 'import { driver } from "@fx/driver";\nexport const z = driver;\n',
});
afterAll(() => tree.remove());

describe("check-layers: tests, benches and scripts import no package above their own", () => {
  const { violations } = checkLayers(tree.root);

  it("refuses a driver test importing a domain package, naming both layers and the fix", () => {
    const found = violations.filter((v) => v.startsWith("packages/driver/test/up.test.ts:1:"));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/@fx\/driver \(layer \d+\) imports @fx\/domain \(layer \d+\).*move the file/);
  });

  it("lets a listed file pass and calls an exemption no import needs a finding", () => {
    expect(violations.some((v) => v.startsWith("packages/driver/bench/old.mjs"))).toBe(false);
    expect(violations).toContain(
      'tooling/scripts/layer-upward-exemptions.json: "packages/driver/test/gone.test.ts -> @fx/domain" no longer applies: remove it',
    );
  });

  it("accepts a domain test importing the driver below it", () => {
    expect(violations.some((v) => v.startsWith("packages/domain/test/"))).toBe(false);
  });
});
