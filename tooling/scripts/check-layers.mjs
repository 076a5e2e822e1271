#!/usr/bin/env node
// The layer check of `pnpm lint`. From the sources of every workspace package it finds which packages each one
// imports, then fails when:
//   - a published package's src/ imports a workspace package of its own or a higher layer (tooling/scripts/layers.json);
//   - src/ imports a package that is not in its dependencies or peerDependencies;
//   - a test, bench, script or config file imports a package in none of the package's dependency lists nor the
//     root's devDependencies (the workspace-wide tools: vitest, fast-check, …);
//   - a declared dependency is used by nothing in the package (a `dependencies` entry only tests use belongs in
//     devDependencies);
//   - the import graph in docs/architecture.md (between the import-graph markers) is not the generated one.
// A dependency counts as used when a file imports it (type-only and `import()` included), when tsconfig.json
// extends it, when a package.json script runs one of its binaries, when a CMake file `require`s it, and, for
// `@types/x`, when `x` is used (`@types/node`: any node: import, or tsconfig `types`).
// Usage: node tooling/scripts/check-layers.mjs [--write] [--root DIR]   (--write regenerates the docs block)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles } from "./lib/files.mjs";
import { importSpecifiers, packageOf, requireSpecifiers, workspacePackages } from "./lib/workspace.mjs";

export const GRAPH_DOC = "docs/architecture.md";
export const GRAPH_START = "<!-- import-graph:start -->";
export const GRAPH_END = "<!-- import-graph:end -->";
const LAYERS_FILE = "tooling/scripts/layers.json";
const JS_FILE = /\.(?:[cm]?[jt]s|tsx)$/;
const CMAKE_FILE = /(?:^|\/)CMakeLists\.txt$|\.cmake$/;
const RUNTIME_BLOCKS = ["dependencies", "peerDependencies", "optionalDependencies"];

/**
 * @param {string} root repository root
 * @returns {{ violations: string[], graph: PackageImports[], doc: { path: string, text: string, expected: string } | null }}
 */
export function checkLayers(root) {
  const { layerOf, bundled } = readLayerTable(root);
  const files = listFiles(root);
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const rootDevDeps = new Set(Object.keys(rootManifest.devDependencies ?? {}));
  const violations = [];
  const graph = [];
  for (const pkg of workspacePackages(root)) {
    const name = pkg.manifest.name;
    if (!layerOf.has(name)) {
      violations.push(`${pkg.dir}/package.json: ${name} is not in the layer table (${LAYERS_FILE})`);
      continue;
    }
    const imports = collectImports(root, pkg, files, bundled[name] ?? []);
    violations.push(...importViolations(pkg, imports, layerOf, rootDevDeps));
    violations.push(...unusedDependencies(root, pkg, imports));
    graph.push(summarize(pkg, imports, layerOf));
  }
  const doc = graphDoc(root, graph, layerOf);
  if (doc === null) violations.push(`${GRAPH_DOC}: no ${GRAPH_START} … ${GRAPH_END} block`);
  else if (doc.text !== doc.expected) {
    violations.push(`${GRAPH_DOC}: the import graph is stale; run node tooling/scripts/check-layers.mjs --write`);
  }
  return { violations, graph, doc };
}

/** @typedef {{ name: string, layer: number, runtime: string[], devOnly: string[] }} PackageImports */

/**
 * The layer of each package, and (layers.json `bundled`) the source folders of a package that its build bundles into
 * a browser asset: what they import from outside the workspace is inlined at build time, so a devDependency declares
 * it.
 */
function readLayerTable(root) {
  const table = JSON.parse(readFileSync(join(root, LAYERS_FILE), "utf8"));
  const layerOf = new Map();
  table.layers.forEach((layer, index) => {
    for (const name of layer.packages) layerOf.set(name, { index, name: layer.name });
  });
  return { layerOf, bundled: table.bundled ?? {} };
}

/**
 * Every import of the package's files: `{ file, line, specifier, pkg, runtime, bundled }`; runtime = published
 * src/; bundled = under one of `bundled` (a folder the build inlines into a browser asset).
 */
function collectImports(root, pkg, files, bundled = []) {
  const prefix = `${pkg.dir}/`;
  const published = pkg.manifest.private !== true;
  const out = [];
  for (const file of files) {
    if (!file.startsWith(prefix)) continue;
    const local = file.slice(prefix.length);
    const isJs = JS_FILE.test(local);
    if (!isJs && !CMAKE_FILE.test(local)) continue;
    const text = readFileSync(join(root, file), "utf8");
    const specifiers = isJs ? importSpecifiers(text) : requireSpecifiers(text);
    for (const specifier of specifiers) {
      const target = packageOf(specifier);
      if (target === null) continue;
      out.push({
        file,
        line: lineOf(text, specifier),
        specifier,
        pkg: target,
        runtime: published && local.startsWith("src/"),
        bundled: bundled.some((folder) => local.startsWith(folder)),
      });
    }
  }
  return out;
}

function lineOf(text, specifier) {
  const at = Math.max(text.indexOf(`"${specifier}"`), text.indexOf(`'${specifier}'`));
  return at < 0 ? 1 : text.slice(0, at).split("\n").length;
}

function importViolations(pkg, imports, layerOf, rootDevDeps) {
  const m = pkg.manifest;
  const own = layerOf.get(m.name);
  const runtimeDeclared = new Set(RUNTIME_BLOCKS.flatMap((b) => Object.keys(m[b] ?? {})));
  const devDeclared = new Set([...runtimeDeclared, ...Object.keys(m.devDependencies ?? {}), ...rootDevDeps]);
  const out = [];
  for (const imp of imports) {
    if (imp.pkg === "node:") continue;
    const where = `${imp.file}:${imp.line}`;
    const inlined = imp.bundled && !layerOf.has(imp.pkg);
    if (imp.runtime && !inlined) {
      const target = layerOf.get(imp.pkg);
      if (target !== undefined && target.index >= own.index) {
        const relation = imp.pkg === m.name ? "itself" : `${imp.pkg} (layer ${target.name})`;
        out.push(
          `${where}: src of ${m.name} (layer ${own.name}) imports ${relation}: only lower layers may be imported`,
        );
      } else if (!runtimeDeclared.has(imp.pkg)) {
        out.push(`${where}: src imports "${imp.specifier}" but ${imp.pkg} is not in dependencies of ${m.name}`);
      }
    } else if (imp.pkg !== m.name && !devDeclared.has(imp.pkg)) {
      out.push(`${where}: imports "${imp.specifier}" but ${imp.pkg} is not a dependency or devDependency of ${m.name}`);
    }
  }
  return out;
}

function unusedDependencies(root, pkg, imports) {
  const m = pkg.manifest;
  const published = m.private !== true;
  const importedBySrc = new Set(imports.filter((i) => i.runtime).map((i) => i.pkg));
  const importedAnywhere = new Set(imports.map((i) => i.pkg));
  const toolUse = toolUsage(root, pkg);
  const used = (dep) => importedAnywhere.has(dep) || toolUse(dep) || typesUsed(dep, importedAnywhere, toolUse);
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
      if (!used(dep)) out.push(`${pkg.dir}/package.json: ${block} entry ${dep} is not used (nothing imports it)`);
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

function summarize(pkg, imports, layerOf) {
  const name = pkg.manifest.name;
  const external = (p) => p !== "node:" && p !== name;
  const runtime = [...new Set(imports.filter((i) => i.runtime && external(i.pkg)).map((i) => i.pkg))].sort();
  const devOnly = [
    ...new Set(
      imports
        .filter((i) => !i.runtime && external(i.pkg) && layerOf.has(i.pkg) && !runtime.includes(i.pkg))
        .filter((i) => layerOf.get(i.pkg).name !== "private")
        .map((i) => i.pkg),
    ),
  ].sort();
  return { name, layer: layerOf.get(name).index, runtime, devOnly };
}

/** The generated block: a Mermaid graph of src imports between workspace packages, then a table per package. */
export function renderGraph(graph, layerOf) {
  const published = graph.filter((p) => layerOf.get(p.name).name !== "private").sort((a, b) => b.layer - a.layer);
  const privates = graph
    .filter((p) => layerOf.get(p.name).name === "private")
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const short = (n) => n.replace(/^@[^/]+\//, "");
  const code = (list) => (list.length === 0 ? "none" : list.map((n) => `\`${n}\``).join(", "));
  const lines = [
    "<!-- generated by `node tooling/scripts/check-layers.mjs --write` from the sources; do not edit by hand -->",
    "",
    "```mermaid",
    "graph TD",
  ];
  for (const p of published) {
    for (const dep of p.runtime.filter((d) => layerOf.has(d))) lines.push(`  ${short(p.name)} --> ${short(dep)}`);
  }
  lines.push(
    "```",
    "",
    "| layer | package | src/ imports | tests, bench and scripts also import |",
    "| --- | --- | --- | --- |",
  );
  for (const p of [...published, ...privates]) {
    const layer = layerOf.get(p.name);
    const layerCell = layer.name === "private" ? "private" : `${layer.index} ${layer.name}`;
    const src = layer.name === "private" ? "(no src/)" : code(p.runtime);
    const deps = layer.name === "private" ? code([...new Set([...p.runtime, ...p.devOnly])].sort()) : code(p.devOnly);
    lines.push(`| ${layerCell} | \`${p.name}\` | ${src} | ${deps} |`);
  }
  return lines.join("\n");
}

function graphDoc(root, graph, layerOf) {
  const path = join(root, GRAPH_DOC);
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8");
  const start = text.indexOf(GRAPH_START);
  const end = text.indexOf(GRAPH_END);
  if (start < 0 || end < start) return null;
  const block = `${GRAPH_START}\n${renderGraph(graph, layerOf)}\n${GRAPH_END}`;
  return { path, text, expected: text.slice(0, start) + block + text.slice(end + GRAPH_END.length) };
}

function main(argv) {
  const rootAt = argv.indexOf("--root");
  const root = rootAt >= 0 ? resolve(argv[rootAt + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const result = checkLayers(root);
  let { violations } = result;
  if (argv.includes("--write") && result.doc !== null) {
    writeFileSync(result.doc.path, result.doc.expected);
    violations = violations.filter((v) => !v.startsWith(`${GRAPH_DOC}: the import graph is stale`));
    console.log(`wrote the import graph into ${GRAPH_DOC}`);
  }
  for (const v of violations) console.error(v);
  console.log(`layer check: ${violations.length} violation(s) in ${result.graph.length} packages`);
  return violations.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
