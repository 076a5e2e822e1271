// Every TypeScript example of a published package's README runs: each code block is written to a module of its own
// (tooling/scripts/.readme-examples/, ignored by git) and imported, with the workspace packages read from their
// sources as in every other test. A block that needs a CUDA GPU is skipped, with the reason, where there is none.
// What the blocks print is checked by the packages' own README tests where they have one (compress, the
// controller); here a block must run to its end.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { KernelsCudaUnavailableError } from "@dsv4-kv/kernels-cuda";
import { afterAll, describe, expect, test, vi } from "vitest";
import { codeBlocks } from "../check-readme-examples.mjs";
import { workspacePackages } from "../lib/workspace.mjs";
import { REPO_ROOT } from "./fixture.js";

const OUT = join(REPO_ROOT, "tooling/scripts/.readme-examples");
rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

const readmes = workspacePackages(REPO_ROOT)
  .filter((p) => !p.manifest.private)
  .flatMap((p) => {
    const file = join(REPO_ROOT, p.dir, "README.md");
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return [];
    }
    const blocks = codeBlocks(text) as { line: number; code: string }[];
    return blocks.length ? [{ name: p.manifest.name as string, dir: p.dir, blocks }] : [];
  });

test("the README examples are found", () => {
  expect(readmes.map((r) => r.name)).toEqual(expect.arrayContaining(["@dsv4-kv/planner", "@dsv4-kv/server-config"]));
});

for (const { name, dir, blocks } of readmes) {
  describe(`${name} README`, () => {
    for (const { line, code } of blocks) {
      test(`the example at ${dir}/README.md:${line} runs`, async (ctx) => {
        const module = join(OUT, `${dir.replaceAll("/", "-")}-${line}.ts`);
        writeFileSync(module, `${code}\nexport {};\n`);
        const log = vi.spyOn(console, "log").mockImplementation(() => {});
        try {
          await import(pathToFileURL(module).href);
        } catch (e) {
          if (KernelsCudaUnavailableError.isInstance(e)) ctx.skip(`needs a CUDA GPU: ${(e as Error).message}`);
          throw e;
        } finally {
          log.mockRestore();
        }
      });
    }
  });
}
