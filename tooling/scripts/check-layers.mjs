#!/usr/bin/env node
// The layer check of `pnpm lint`. From the sources of every workspace package it finds which packages each one
// imports, then fails when:
//   - the layer table (tooling/scripts/layers.json) names an unknown package, lists one twice or has a cycle;
//   - a published package's src/ imports a workspace package its entry in the table does not allow (itself
//     included), or a package allowed only for a subpath (`subpaths`, e.g. `./gpu`) from a file that the root
//     entry or another subpath reaches;
//   - src/ imports a package that is not in its dependencies or peerDependencies;
//   - a test, bench, script or config file imports a package in none of the package's dependency lists nor the
//     root's devDependencies (the workspace-wide tools: vitest, fast-check, …), or, in a published package, a
//     published workspace package that is not below it in the table (a driver's tests import no domain package);
//   - any file imports another package's file by relative path (`../../planner/src/x.js`) instead of its name;
//   - a declared dependency is used by nothing in the package (a `dependencies` entry only tests use belongs in
//     devDependencies);
//   - the layer table or the import graph in docs/architecture.md (between their markers) is not the generated one.
// A dependency counts as used when a file imports it (type-only and `import()` included), when tsconfig.json
// extends it, when a package.json script runs one of its binaries, when a CMake file `require`s it, for
// `@types/x`, when `x` is used (`@types/node`: any node: import, or tsconfig `types`), and for a peer dependency,
// when a workspace package that src/ imports has the same peer dependency (the user installs it for that one).
// Usage: node tooling/scripts/check-layers.mjs [--write] [--root DIR]   (--write regenerates the docs blocks)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles } from "./lib/files.mjs";
import { allowedImports, LAYERS_FILE, readLayerTable, renderLayerTable, roleOf } from "./lib/layer-table.mjs";
import { isRelative, ownerOf, reachableFrom, resolveRelative, sourceEntries } from "./lib/relative-imports.mjs";
import { importSpecifiers, packageOf, requireSpecifiers, workspacePackages } from "./lib/workspace.mjs";

export const GRAPH_DOC = "docs/architecture.md";
export const GRAPH_START = "<!-- import-graph:start -->";
export const GRAPH_END = "<!-- import-graph:end -->";
export const TABLE_START = "<!-- layer-table:start -->";
export const TABLE_END = "<!-- layer-table:end -->";
const JS_FILE = /\.(?:[cm]?[jt]s|tsx)$/;
const CMAKE_FILE = /(?:^|\/)CMakeLists\.txt$|\.cmake$/;
const RUNTIME_BLOCKS = ["dependencies", "peerDependencies", "optionalDependencies"];
const STALE = "is stale; run node tooling/scripts/check-layers.mjs --write";
// Test, bench and script files that still import a package above their own, each with why; the list only shrinks
// (an entry no import needs is a finding too). docs/decisions.md D47 says what moving each one takes.
export const UPWARD_EXEMPTIONS_FILE = "tooling/scripts/layer-upward-exemptions.json";

/** @returns {Map<string, {file: string, imports: string, why: string}>} keyed by `file -> package` */
function readUpwardExemptions(root) {
  const path = join(root, UPWARD_EXEMPTIONS_FILE);
  if (!existsSync(path)) return new Map();
  const entries = JSON.parse(readFileSync(path, "utf8")).exemptions ?? [];
  return new Map(entries.map((e) => [`${e.file} -> ${e.imports}`, e]));
}

/**
 * @param {string} root repository root
 * @returns {{ violations: string[], graph: PackageImports[], doc: { path: string, text: string, expected: string } | null }}
 */
export function checkLayers(root) {
  const table = readLayerTable(root);
  const files = listFiles(root);
  const fileSet = new Set(files);
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const rootDevDeps = new Set(Object.keys(rootManifest.devDependencies ?? {}));
  const packages = workspacePackages(root);
  const manifests = new Map(packages.map((p) => [p.manifest.name, p.manifest]));
  const violations = [...table.problems];
  const graph = [];
  const upward = { exempt: readUpwardExemptions(root), used: new Set() };
  for (const pkg of packages) {
    const name = pkg.manifest.name;
    if (roleOf(table, name) === undefined) {
      violations.push(`${pkg.dir}/package.json: ${name} is not in the layer table (${LAYERS_FILE})`);
      continue;
    }
    const { imports, relative } = collectImports(root, pkg, files, table.bundled[name] ?? []);
    violations.push(...importViolations(pkg, imports, table, rootDevDeps, upward));
    violations.push(...subpathViolations(root, pkg, imports, table, fileSet));
    violations.push(...relativeViolations(pkg, relative, packages, fileSet));
    violations.push(...unusedDependencies(root, pkg, imports, manifests));
    graph.push(summarize(pkg, imports, table));
  }
  for (const key of upward.exempt.keys()) {
    if (!upward.used.has(key)) violations.push(`${UPWARD_EXEMPTIONS_FILE}: "${key}" no longer applies: remove it`);
  }
  const doc = docBlocks(root, graph, table, manifests);
  if (doc === null) {
    violations.push(`${GRAPH_DOC}: no ${TABLE_START} … ${TABLE_END} and ${GRAPH_START} … ${GRAPH_END} blocks`);
  } else {
    if (doc.stale.length > 0) violations.push(`${GRAPH_DOC}: ${doc.stale.join(" and ")} ${STALE}`);
  }
  return { violations, graph, doc };
}

/** @typedef {{ name: string, layer: number | "private", runtime: string[], devOnly: string[] }} PackageImports */

/**
 * Every import of the package's files: `{ file, line, specifier, pkg, runtime, bundled }` for package specifiers
 * (runtime = published src/; bundled = under one of `bundled`, a folder the build inlines into a browser asset), and
 * `{ file, line, specifier }` for relative ones.
 */
function collectImports(root, pkg, files, bundled = []) {
  const prefix = `${pkg.dir}/`;
  const published = pkg.manifest.private !== true;
  const imports = [];
  const relative = [];
  for (const file of files) {
    if (!file.startsWith(prefix)) continue;
    const local = file.slice(prefix.length);
    const isJs = JS_FILE.test(local);
    if (!isJs && !CMAKE_FILE.test(local)) continue;
    const text = readFileSync(join(root, file), "utf8");
    const specifiers = isJs ? importSpecifiers(text) : requireSpecifiers(text);
    for (const specifier of specifiers) {
      if (isRelative(specifier)) {
        relative.push({ file, line: lineOf(text, specifier), specifier });
        continue;
      }
      const target = packageOf(specifier);
      if (target === null) continue;
      imports.push({
        file,
        line: lineOf(text, specifier),
        specifier,
        pkg: target,
        runtime: published && local.startsWith("src/"),
        bundled: bundled.some((folder) => local.startsWith(folder)),
      });
    }
  }
  return { imports, relative };
}

function lineOf(text, specifier) {
  const at = Math.max(text.indexOf(`"${specifier}"`), text.indexOf(`'${specifier}'`));
  return at < 0 ? 1 : text.slice(0, at).split("\n").length;
}

function isWorkspace(table, name) {
  return roleOf(table, name) !== undefined;
}

function importViolations(pkg, imports, table, rootDevDeps, upward) {
  const m = pkg.manifest;
  const rule = table.rules.get(m.name);
  const allowed = new Set(rule ? allowedImports(rule) : []);
  const runtimeDeclared = new Set(RUNTIME_BLOCKS.flatMap((b) => Object.keys(m[b] ?? {})));
  const devDeclared = new Set([...runtimeDeclared, ...Object.keys(m.devDependencies ?? {}), ...rootDevDeps]);
  const below = packagesBelow(table, m.name);
  const out = [];
  for (const imp of imports) {
    if (imp.pkg === "node:") continue;
    const where = `${imp.file}:${imp.line}`;
    const inlined = imp.bundled && !isWorkspace(table, imp.pkg);
    if (imp.runtime && !inlined) {
      if (isWorkspace(table, imp.pkg) && !allowed.has(imp.pkg)) {
        const own = `${m.name} (layer ${roleOf(table, m.name)})`;
        const relation = imp.pkg === m.name ? "itself" : `${imp.pkg} (layer ${roleOf(table, imp.pkg)})`;
        out.push(`${where}: src of ${own} imports ${relation}: not among the imports ${LAYERS_FILE} allows it`);
      } else if (!runtimeDeclared.has(imp.pkg)) {
        out.push(`${where}: src imports "${imp.specifier}" but ${imp.pkg} is not in dependencies of ${m.name}`);
      }
    } else if (imp.pkg !== m.name && !devDeclared.has(imp.pkg)) {
      out.push(`${where}: imports "${imp.specifier}" but ${imp.pkg} is not a dependency or devDependency of ${m.name}`);
    } else if (rule && imp.pkg !== m.name && table.rules.has(imp.pkg) && !below.has(imp.pkg)) {
      const key = `${imp.file} -> ${imp.pkg}`;
      if (upward?.exempt.has(key)) {
        upward.used.add(key);
        continue;
      }
      // A test of a lower package that needs a higher one tests the higher one: it belongs in that package.
      const own = `${m.name} (layer ${roleOf(table, m.name)})`;
      out.push(
        `${where}: a test, bench or script of ${own} imports ${imp.pkg} (layer ${roleOf(table, imp.pkg)}), ` +
          `which is not below it in ${LAYERS_FILE}: move the file to the package it exercises`,
      );
    }
  }
  return out;
}

/** Every published package a package's src/ may reach through allowed imports (subpaths included). */
function packagesBelow(table, name) {
  const seen = new Set();
  const visit = (n) => {
    for (const dep of allowedImports(table.rules.get(n) ?? { imports: [], subpaths: {} })) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      visit(dep);
    }
  };
  visit(name);
  return seen;
}

/**
 * A package allowed only for some subpaths may be imported only by files those subpaths' entries reach and no other
 * entry does (a file no entry reaches counts as the root's), so the root entry never loads it.
 */
function subpathViolations(root, pkg, imports, table, fileSet) {
  const rule = table.rules.get(pkg.manifest.name);
  if (!rule || Object.keys(rule.subpaths).length === 0) return [];
  const entries = sourceEntries(pkg);
  const reach = new Map([...entries].map(([subpath, file]) => [subpath, reachableFrom(root, [file], fileSet)]));
  const out = [];
  for (const imp of imports) {
    if (!imp.runtime || rule.imports.includes(imp.pkg)) continue;
    const owners = Object.keys(rule.subpaths).filter((sub) => rule.subpaths[sub].includes(imp.pkg));
    if (owners.length === 0) continue;
    const reachedBy = [...reach].filter(([, files]) => files.has(imp.file)).map(([sub]) => sub);
    const others = reachedBy.filter((sub) => !owners.includes(sub));
    if (reachedBy.length > 0 && others.length === 0) continue;
    const from = others.length > 0 ? `the ${others.join(", ")} entry reaches it` : "no entry of its exports reaches it";
    out.push(
      `${imp.file}:${imp.line}: imports ${imp.pkg}, which ${LAYERS_FILE} allows only for ${owners.join(", ")}, ` +
        `but ${from}`,
    );
  }
  return out;
}

/** A relative import that leaves its package: another package's files are reached through its name. */
function relativeViolations(pkg, relative, packages, fileSet) {
  const out = [];
  for (const imp of relative) {
    const target = resolveRelative(imp.file, imp.specifier, fileSet);
    if (target.startsWith(`${pkg.dir}/`) && ownerOf(target, packages) === pkg) continue;
    const owner = ownerOf(target, packages);
    const into = owner ? `into ${owner.manifest.name} (${target})` : `out of ${pkg.manifest.name} (${target})`;
    const fix = owner ? `import it by its package name, declared as a dependency` : "keep imports inside the package";
    out.push(`${imp.file}:${imp.line}: imports "${imp.specifier}" by relative path ${into}: ${fix}`);
  }
  return out;
}

function unusedDependencies(root, pkg, imports, manifests) {
  const m = pkg.manifest;
  const published = m.private !== true;
  const importedBySrc = new Set(imports.filter((i) => i.runtime).map((i) => i.pkg));
  const importedAnywhere = new Set(imports.map((i) => i.pkg));
  const toolUse = toolUsage(root, pkg);
  const used = (dep) => importedAnywhere.has(dep) || toolUse(dep) || typesUsed(dep, importedAnywhere, toolUse);
  // A peer dependency the user installs for a workspace package this one imports (e.g. an optional GPU driver).
  const passedOn = (dep) =>
    [...importedBySrc].some((p) => Object.hasOwn(manifests.get(p)?.peerDependencies ?? {}, dep));
  const out = [];
  for (const dep of Object.keys(m.dependencies ?? {})) {
    if (published && !importedBySrc.has(dep)) {
      const hint = used(dep) ? "only tests or tools use it: make it a devDependency" : "nothing imports it";
      out.push(`${pkg.dir}/package.json: dependency ${dep} is not imported by src/ (${hint})`);
    } else if (!published && !used(dep)) {
      out.push(`${pkg.dir}/package.json: dependency ${dep} is not used (nothing imports it)`);
    }
  }
  for (const block of ["devDependencies", "peerDependencies", "optionalDependencies"]) {
    for (const dep of Object.keys(m[block] ?? {})) {
      // A devDependency that mirrors a peer dependency is the workspace's install of that peer.
      const peer =
        block === "peerDependencies" || (block === "devDependencies" && Object.hasOwn(m.peerDependencies ?? {}, dep));
      if (used(dep) || (peer && passedOn(dep))) continue;
      out.push(`${pkg.dir}/package.json: ${block} entry ${dep} is not used (nothing imports it)`);
    }
  }
  return out;
}

/** Uses that are not imports: tsconfig `extends`/`types`, binaries in scripts, CMake `require`s. */
function toolUsage(root, pkg) {
  const dir = join(root, pkg.dir);
  const tsconfigPath = join(dir, "tsconfig.json");
  const tsconfig = existsSync(tsconfigPath) ? readFileSync(tsconfigPath, "utf8") : "";
  const scripts = Object.values(pkg.manifest.scripts ?? {}).join(" && ");
  const words = new Set(scripts.split(/[\s;&|()]+/).filter(Boolean));
  return (dep) =>
    tsconfig.includes(`"${dep}/`) ||
    tsconfig.includes(`"${dep}"`) ||
    binariesOf(root, pkg.dir, dep).some((b) => words.has(b));
}

function binariesOf(root, pkgDir, dep) {
  for (const base of [join(root, pkgDir), root]) {
    const manifestPath = join(base, "node_modules", dep, "package.json");
    if (!existsSync(manifestPath)) continue;
    const { bin, name } = JSON.parse(readFileSync(manifestPath, "utf8"));
    if (typeof bin === "string") return [name.split("/").pop()];
    return Object.keys(bin ?? {});
  }
  return [dep.split("/").pop()];
}

function typesUsed(dep, importedAnywhere, toolUse) {
  if (!dep.startsWith("@types/")) return false;
  const bare = dep.slice("@types/".length);
  const target = bare.includes("__") ? `@${bare.replace("__", "/")}` : bare;
  if (target === "node") return importedAnywhere.has("node:") || toolUse("node");
  return importedAnywhere.has(target);
}

function summarize(pkg, imports, table) {
  const name = pkg.manifest.name;
  const external = (p) => p !== "node:" && p !== name;
  const runtime = [...new Set(imports.filter((i) => i.runtime && external(i.pkg)).map((i) => i.pkg))].sort();
  const devOnly = [
    ...new Set(
      imports
        .filter((i) => !i.runtime && external(i.pkg) && table.rules.has(i.pkg) && !runtime.includes(i.pkg))
        .map((i) => i.pkg),
    ),
  ].sort();
  return { name, layer: roleOf(table, name), runtime, devOnly };
}

/** The generated import graph: a Mermaid graph of src imports between workspace packages, then a table per package. */
export function renderGraph(graph, table) {
  const rank = (p) => (p.layer === "private" ? -1 : p.layer);
  const published = graph.filter((p) => p.layer !== "private").sort((a, b) => rank(b) - rank(a) || cmp(a, b));
  const privates = graph.filter((p) => p.layer === "private").sort(cmp);
  const short = (n) => n.replace(/^@[^/]+\//, "");
  const code = (list) => (list.length === 0 ? "none" : list.map((n) => `\`${n}\``).join(", "));
  const lines = [
    "<!-- generated by `node tooling/scripts/check-layers.mjs --write` from the sources; do not edit by hand -->",
    "",
    "```mermaid",
    "graph TD",
  ];
  for (const p of published) {
    for (const dep of p.runtime.filter((d) => isWorkspace(table, d)))
      lines.push(`  ${short(p.name)} --> ${short(dep)}`);
  }
  lines.push(
    "```",
    "",
    "| layer | package | src/ imports | tests, bench and scripts also import |",
    "| --- | --- | --- | --- |",
  );
  for (const p of [...published, ...privates]) {
    const src = p.layer === "private" ? "(no src/)" : code(p.runtime);
    const deps = p.layer === "private" ? code([...new Set([...p.runtime, ...p.devOnly])].sort()) : code(p.devOnly);
    lines.push(`| ${p.layer} | \`${p.name}\` | ${src} | ${deps} |`);
  }
  return lines.join("\n");
}

function cmp(a, b) {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The page with both generated blocks replaced, and which of them differ from what the page holds. */
function docBlocks(root, graph, table, manifests) {
  const path = join(root, GRAPH_DOC);
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8");
  const descriptions = new Map([...manifests].map(([name, m]) => [name, m.description ?? ""]));
  const blocks = [
    { what: "the layer table", start: TABLE_START, end: TABLE_END, body: renderLayerTable(table, descriptions) },
    { what: "the import graph", start: GRAPH_START, end: GRAPH_END, body: renderGraph(graph, table) },
  ];
  let expected = text;
  const stale = [];
  for (const block of blocks) {
    const start = expected.indexOf(block.start);
    const end = expected.indexOf(block.end);
    if (start < 0 || end < start) return null;
    const replaced = `${block.start}\n${block.body}\n${block.end}`;
    if (expected.slice(start, end + block.end.length) !== replaced) stale.push(block.what);
    expected = expected.slice(0, start) + replaced + expected.slice(end + block.end.length);
  }
  return { path, text, expected, stale };
}

function main(argv) {
  const rootAt = argv.indexOf("--root");
  const root = rootAt >= 0 ? resolve(argv[rootAt + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const result = checkLayers(root);
  let { violations } = result;
  if (argv.includes("--write") && result.doc !== null) {
    writeFileSync(result.doc.path, result.doc.expected);
    violations = violations.filter((v) => !(v.startsWith(`${GRAPH_DOC}: `) && v.endsWith(STALE)));
    console.log(`wrote the layer table and the import graph into ${GRAPH_DOC}`);
  }
  for (const v of violations) console.error(v);
  console.log(`layer check: ${violations.length} violation(s) in ${result.graph.length} packages`);
  return violations.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
