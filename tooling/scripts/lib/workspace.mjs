// The workspace packages (from pnpm-workspace.yaml) and the import specifiers of a source file.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const BUILTINS = new Set(builtinModules);

/**
 * @param {string} root
 * @returns {{ dir: string, manifest: Record<string, any> }[]} `dir` relative to root, `/` separators
 */
export function workspacePackages(root) {
  const yaml = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8");
  const patterns = [];
  let inPackages = false;
  for (const line of yaml.split("\n")) {
    if (/^\S/.test(line)) inPackages = /^packages\s*:/.test(line);
    const item = inPackages && /^\s+-\s+["']?([^"'\s#]+)/.exec(line);
    if (item) patterns.push(item[1]);
  }
  const dirs = patterns.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [pattern];
    const parent = pattern.slice(0, -2);
    if (!existsSync(join(root, parent))) return [];
    return readdirSync(join(root, parent), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${parent}/${e.name}`);
  });
  return dirs
    .filter((dir) => existsSync(join(root, dir, "package.json")))
    .sort()
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) }));
}

/** The package a bare specifier names (`@a/b/sub` → `@a/b`, `x/y` → `x`); null for relative and `#` imports. */
export function packageOf(specifier) {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("#")) return null;
  if (specifier.startsWith("node:") || BUILTINS.has(specifier.split("/")[0])) return "node:";
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

let ts;
/** Every module specifier of a JS/TS source: static and type-only imports, `export … from`, `import()`, `require`. */
export function importSpecifiers(text) {
  ts ??= require("typescript");
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** `require('x')` calls inside non-JS files (CMake shells out to node to locate node-addon-api). */
export function requireSpecifiers(text) {
  return [...text.matchAll(/require\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]);
}
