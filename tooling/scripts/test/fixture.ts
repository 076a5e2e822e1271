import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Writes `files` (path → text; objects are written as JSON) under a fresh temporary folder. */
export function writeTree(files: Record<string, string | object>): { root: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), "dsv4kv-check-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
