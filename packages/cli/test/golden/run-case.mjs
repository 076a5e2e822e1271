// Runs one golden case of cases.json with the built CLI and renders what it produced as one text: the exit code,
// stdout, stderr and each written file (a large file by its SHA-256), with the temporary folder written {OUT} and
// wall-clock seconds written {T}.
// Shared by record.mjs (which writes outputs/) and golden-outputs.test.ts (which compares).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const BIN = fileURLToPath(new URL("../../dist/bin.js", import.meta.url));
export const CASES = JSON.parse(readFileSync(new URL("cases.json", import.meta.url), "utf8")).cases;
export const outputPath = (name) => fileURLToPath(new URL(`outputs/${name}.txt`, import.meta.url));

const INLINE_FILE_BYTES = 256 * 1024;

/** @param {{name: string, args: string[], stdin?: string, files?: string[]}} c @returns {string} */
export function runCase(c) {
  const out = mkdtempSync(join(tmpdir(), "dsv4kv-golden-"));
  try {
    const args = c.args.map((a) => a.replaceAll("{OUT}", out));
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: REPO_ROOT,
      input: c.stdin ?? "",
      encoding: "utf8",
      env: { ...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined, COLUMNS: "120" },
      timeout: 120_000,
    });
    const hide = (s) => hideTimes((s ?? "").replaceAll(out, "{OUT}"));
    const parts = [`exit: ${r.status}`, "--- stdout", hide(r.stdout), "--- stderr", hide(r.stderr)];
    for (const f of c.files ?? []) parts.push(`--- file ${f}`, renderFile(join(out, f), hide));
    return parts.join("\n");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Wall-clock figures differ run to run; everything else must not. */
function hideTimes(text) {
  return text.replace(/"seconds": \d+(?:\.\d+)?/gu, '"seconds": {T}').replace(/\b\d+(?:\.\d+)? s\)/gu, "{T} s)");
}

/**
 * An HTML page's bundled script (an inline `<script>` with no type) changes with every refactor of the modules it
 * bundles: its minified names and module order. Its behaviour is the browser tests' job; the golden output keeps the
 * page's markup and data, and the script's place.
 */
function maskBundle(text) {
  return text.replace(/<script>[\s\S]*?<\/script>/gu, "<script>{BUNDLE}</script>");
}

function renderFile(path, hide) {
  const text = maskBundle(hide(readFileSync(path, "utf8")));
  if (text.length <= INLINE_FILE_BYTES) return text;
  return `${text.length} characters, sha256 ${createHash("sha256").update(text).digest("hex")}`;
}
