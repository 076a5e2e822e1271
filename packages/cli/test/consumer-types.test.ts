// The published types must typecheck in a consumer that has no @types/node (the root export's CommandIO is
// structural). Runs tsc on a tiny consumer of the built package, ESM and CommonJS, with `types: []`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
// The GPU machine's pack leaves TypeScript out; everywhere the workspace is installed (CI included) it is there.
const TSC = resolveTsc();
function resolveTsc(): string | null {
  try {
    return createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    return null;
  }
}
const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-consumer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONSUMER = `import { main, type CommandIO } from "@dsv4-kv/cli";

const lines: string[] = [];
const io: CommandIO = {
  stdout: { write: (chunk: string) => lines.push(chunk) },
  stderr: { write: (chunk: string) => lines.push(chunk), isTTY: false },
  stdin: (async function* () {})(),
  env: { NO_COLOR: "1" },
};
export const code: Promise<number> = main(["--version"], io);
`;

const NAME = "the .d.ts of @dsv4-kv/cli typechecks without @types/node (ESM and CJS consumers)";
(TSC ? test : test.skip)(TSC ? NAME : `${NAME} (skipped: TypeScript is not installed here)`, () => {
  mkdirSync(join(dir, "node_modules", "@dsv4-kv"), { recursive: true });
  symlinkSync(PACKAGE, join(dir, "node_modules", "@dsv4-kv", "cli"), "dir");
  writeFileSync(join(dir, "esm.mts"), CONSUMER);
  writeFileSync(join(dir, "cjs.cts"), CONSUMER);
  const compilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: [],
    lib: ["es2022"],
    target: "es2022",
    module: "node16",
    moduleResolution: "node16",
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["esm.mts", "cjs.cts"] }));
  const r = spawnSync(process.execPath, [TSC ?? "", "-p", dir], { encoding: "utf8", timeout: 120_000 });
  expect(r.stdout + r.stderr).toBe("");
  expect(r.status).toBe(0);
});
