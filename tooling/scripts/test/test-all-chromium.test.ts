// test-all.sh's Chromium block: installs Debian's chromium when it is missing and the script runs as root with
// apt-get, logs the apt output out of the way (shown on failure), and otherwise says why the browser tests will
// fail. Runs the block alone with fake `apt-get` and `id` and a scratch browser path, so it installs nothing.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect, test } from "vitest";

const SCRIPT = fileURLToPath(new URL("../test-all.sh", import.meta.url));
const START = "# --- Chromium for the HTML report's browser tests";
const END = "# --- end of the Chromium block";
let dir = "";

function chromiumBlock(): string {
  const text = readFileSync(SCRIPT, "utf8");
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  expect(start).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(start);
  return text.slice(start, end);
}

/** Runs the block with `/usr/bin/chromium` moved to a scratch path and fake tools first on PATH. */
function runBlock(opts: { uid: number; aptFails?: boolean; env?: Record<string, string> }) {
  dir = mkdtempSync(join(tmpdir(), "dsv4-kv-chromium-"));
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const browser = join(dir, "usr-bin-chromium");
  const fake = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  fake("id", `echo ${opts.uid}`);
  fake(
    "apt-get",
    [
      `echo "apt-get $*" >> ${join(dir, "calls")}`,
      'echo "apt output for $1"',
      opts.aptFails ? '[ "$1" = install ] && { echo "E: Unable to locate package chromium" >&2; exit 100; }' : "",
      `[ "$1" = install ] && { printf '#!/bin/sh\\n' > ${browser}; chmod +x ${browser}; }`,
      "exit 0",
    ].join("\n"),
  );
  const script = chromiumBlock().replaceAll("/usr/bin/chromium", browser);
  // the script's own shell options, set inside (a system bashrc may run first and trip over -u)
  const r = spawnSync("bash", ["-c", `set -uo pipefail\n${script}`], {
    encoding: "utf8",
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, TMPDIR: dir, ...opts.env },
  });
  const calls = existsSync(join(dir, "calls")) ? readFileSync(join(dir, "calls"), "utf8") : "";
  return { ...r, calls, browser, log: join(dir, "dsv4kv-chromium-install.log") };
}

afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("as root with apt-get it installs chromium, timed, with apt's output in a log", () => {
  const r = runBlock({ uid: 0 });
  expect(r.status).toBe(0);
  expect(r.calls).toBe("apt-get update\napt-get install -y chromium\n");
  expect(existsSync(r.browser)).toBe(true);
  expect(r.stdout).toBe("");
  expect(r.stderr).toMatch(/^installing Chromium for the browser tests .*\ninstalled Chromium in \d+ s\n$/);
  expect(readFileSync(r.log, "utf8")).toContain("apt output for install");
});

test("a failed install shows apt's output and says the browser tests will fail", () => {
  const r = runBlock({ uid: 0, aptFails: true });
  expect(r.stderr).toContain("E: Unable to locate package chromium");
  expect(r.stderr).toContain("could not install Chromium (apt-get output above): the browser tests will fail");
});

test("without root it installs nothing and says why", () => {
  const r = runBlock({ uid: 1000 });
  expect(r.calls).toBe("");
  expect(r.stderr).toContain("no way to install it here (needs root and apt-get)");
});

test("a DSV4KV_CHROMIUM that is not there is reported, not papered over by an install", () => {
  const r = runBlock({ uid: 0, env: { DSV4KV_CHROMIUM: "/nowhere/chromium" } });
  expect(r.calls).toBe("");
  expect(r.stderr).toContain("DSV4KV_CHROMIUM=/nowhere/chromium is not an executable");
});

test("an existing browser is left alone", () => {
  const r = runBlock({ uid: 0, env: { DSV4KV_CHROMIUM: "/bin/sh" } });
  expect(r.calls).toBe("");
  expect(r.stderr).toBe("");
});
