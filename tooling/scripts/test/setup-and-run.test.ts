// setup-and-run.sh shows the report, not the build log: install and build output go to .setup.log and are
// printed only when a step fails. Runs the real script in a scratch copy of the repository layout, with a fake
// pnpm and a fake CLI, so it installs and builds nothing.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect, test } from "vitest";

const SCRIPTS = fileURLToPath(new URL("..", import.meta.url));
const PNPM_VERSION = "12.4.2";
let root = "";

const FAKE_PNPM = `#!/usr/bin/env bash
if [ "$1" = "--version" ]; then echo ${PNPM_VERSION}; exit 0; fi
for i in $(seq 1 150); do echo "pnpm $* line $i"; done
echo "pnpm $* warning on stderr" >&2
if [ "$1" = "build" ] && [ -n "\${FAKE_BUILD_FAILS:-}" ]; then echo "error TS2322: the build broke"; exit 3; fi
exit 0
`;

function scratchRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-setup-"));
  mkdirSync(join(dir, "tooling", "scripts"), { recursive: true });
  mkdirSync(join(dir, "packages", "cli", "dist"), { recursive: true });
  mkdirSync(join(dir, "bin"));
  for (const name of ["setup-and-run.sh", "ensure-pnpm.sh"]) {
    copyFileSync(join(SCRIPTS, name), join(dir, "tooling", "scripts", name));
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ packageManager: `pnpm@${PNPM_VERSION}` }));
  writeFileSync(
    join(dir, "packages", "cli", "dist", "bin.js"),
    'console.log("the report", JSON.stringify(process.argv.slice(2)));\n',
  );
  writeFileSync(join(dir, "bin", "pnpm"), FAKE_PNPM);
  chmodSync(join(dir, "bin", "pnpm"), 0o755);
  return dir;
}

function setup(args: string[], env: Record<string, string> = {}) {
  root = scratchRepo();
  return spawnSync("bash", [join(root, "tooling", "scripts", "setup-and-run.sh"), ...args], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${join(root, "bin")}:${process.env.PATH}`, ...env },
  });
}

afterEach(() => rmSync(root, { recursive: true, force: true }));

test("on success the screen shows the report and one line per step; the build output is in .setup.log", () => {
  const r = setup(["--tp-size", "4"]);
  expect(r.status).toBe(0);
  expect(r.stdout).toBe('the report ["--tp-size","4"]\n');
  expect(r.stderr.trim().split("\n")).toEqual([
    "setup: installing the locked dependencies",
    "setup: building every package (log: .setup.log)",
  ]);
  const log = readFileSync(join(root, ".setup.log"), "utf8");
  expect(log).toContain("pnpm install --frozen-lockfile line 150");
  expect(log).toContain("pnpm build warning on stderr");
});

test("a failing step shows the end of the log, exits 1 and does not run the CLI", () => {
  const r = setup([], { FAKE_BUILD_FAILS: "1" });
  expect(r.status).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain(
    "setup: building every package (log: .setup.log) failed; the last 200 lines of .setup.log:",
  );
  expect(r.stderr).toContain("error TS2322: the build broke");
  expect(r.stderr.split("\n").length).toBeLessThan(210);
});
