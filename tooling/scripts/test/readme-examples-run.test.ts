// Every TypeScript example of a published package's README runs: each code block is written to a module of its own
// in its package (`.readme-examples/`, ignored by git, so that the package's own dependencies resolve) and imported;
// workspace packages resolve to their sources (vitest.config.ts). A block that needs a CUDA GPU is skipped, with the
// reason, where there is none.
// What the blocks print is checked by the packages' own README tests where they have one (compress, the
// controller); here a block must run to its end.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, test, vi } from "vitest";
import { codeBlocks } from "../check-readme-examples.mjs";
import { workspacePackages } from "../lib/workspace.mjs";
import { REPO_ROOT } from "./fixture.js";

const OUT_DIR = ".readme-examples";
const outDirs = new Set<string>();
afterAll(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

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
        const out = join(REPO_ROOT, dir, OUT_DIR);
        outDirs.add(out);
        mkdirSync(out, { recursive: true });
        const module = join(out, `readme-${line}.ts`);
        writeFileSync(module, `${code}\nexport {};\n`);
        const log = vi.spyOn(console, "log").mockImplementation(() => {});
        try {
          await import(pathToFileURL(module).href);
        } catch (e) {
          // kernels-cuda's KernelsCudaUnavailableError (the code, never the message, tells it)
          if ((e as { code?: unknown }).code === "GPU_UNAVAILABLE") ctx.skip(`needs a CUDA GPU: ${String(e)}`);
          throw e;
        } finally {
          log.mockRestore();
        }
      });
    }
  });
}
