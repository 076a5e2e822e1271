// Relative import specifiers, resolved against the repository's file list: where a `./x.js` import lands (the
// TypeScript source when the specifier names the build's .js), and which files an entry reaches through them.
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { importSpecifiers } from "./workspace.mjs";

const SOURCE_OF = { ".js": [".ts", ".tsx"], ".mjs": [".mts"], ".cjs": [".cts"], ".jsx": [".tsx"] };
const BARE_SUFFIXES = [".ts", ".tsx", ".mts", ".js", ".mjs", "/index.ts", "/index.js"];

export function isRelative(specifier) {
  return specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === "..";
}

/**
 * The repository path a relative specifier of `fromFile` names: the file itself when it exists, its TypeScript
 * source for a `.js`-style specifier, or the usual suffixes; the normalised path (which may not exist) otherwise.
 * @param {string} fromFile repository-relative @param {string} specifier @param {Set<string>} files
 */
export function resolveRelative(fromFile, specifier, files) {
  const target = posix.normalize(posix.join(posix.dirname(fromFile), specifier));
  if (files.has(target)) return target;
  const ext = posix.extname(target);
  for (const alt of SOURCE_OF[ext] ?? []) {
    const candidate = target.slice(0, -ext.length) + alt;
    if (files.has(candidate)) return candidate;
  }
  for (const suffix of BARE_SUFFIXES) if (files.has(target + suffix)) return target + suffix;
  return target;
}

/** The files `entries` reach through relative imports (entries included). */
export function reachableFrom(root, entries, files) {
  const seen = new Set();
  const todo = entries.filter((f) => files.has(f));
  while (todo.length > 0) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(root, file), "utf8");
    for (const specifier of importSpecifiers(text).filter(isRelative)) {
      const target = resolveRelative(file, specifier, files);
      if (files.has(target) && !seen.has(target)) todo.push(target);
    }
  }
  return seen;
}

/**
 * The source entry of each export subpath of a package (its `@dsv4-kv/source` condition), repository-relative.
 * @returns {Map<string, string>} subpath (".", "./gpu", …) → file
 */
export function sourceEntries(pkg) {
  const out = new Map();
  const exportsField = pkg.manifest.exports;
  if (typeof exportsField !== "object" || exportsField === null) return out;
  for (const [subpath, target] of Object.entries(exportsField)) {
    const source = typeof target === "object" && target !== null ? target["@dsv4-kv/source"] : undefined;
    if (typeof source === "string") out.set(subpath, posix.normalize(join(pkg.dir, source)));
  }
  return out;
}

/** The workspace package whose folder holds `path` (the deepest one), or null. */
export function ownerOf(path, packages) {
  let best = null;
  for (const pkg of packages) {
    if (path.startsWith(`${pkg.dir}/`) && (best === null || pkg.dir.length > best.dir.length)) best = pkg;
  }
  return best;
}
