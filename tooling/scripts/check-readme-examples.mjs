#!/usr/bin/env node
// The README-examples check of `pnpm lint`: every TypeScript or JavaScript code block of a published package's
// README imports from dsv4-kv only what a user may import (docs/decisions.md#d36-internal-subpaths-are-released-in-step).
// It fails on
//   - an import of a `./internal` or `./testing` subpath (no promise to users);
//   - an import of a subpath the package does not export;
//   - a named import (or re-export) that the entry does not export: the names are those of the entry's source file
//     (the `@dsv4-kv/source` condition of its `exports`), read with the TypeScript compiler;
//   - a namespace import of an entry (`import * as p`): what it reaches cannot be checked name by name.
// Usage: node tooling/scripts/check-readme-examples.mjs [--root DIR]
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { workspacePackages } from "./lib/workspace.mjs";

const PRIVATE_SUBPATHS = new Set(["./internal", "./testing"]);
const CODE_LANGS = new Set(["ts", "typescript", "js", "javascript", "mjs", "tsx"]);

/** @typedef {{ file: string, line: number, message: string }} Finding */

/** The fenced code blocks of a Markdown text in a checked language: `{ line, code }` (line of the first code line). */
export function codeBlocks(markdown) {
  const blocks = [];
  let open = null;
  markdown.split("\n").forEach((text, i) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
    if (open === null && marker) open = { fence: marker[1], lang: marker[2].toLowerCase(), line: i + 2, lines: [] };
    else if (open && marker?.[1].startsWith(open.fence) && marker[2] === "") {
      if (CODE_LANGS.has(open.lang)) blocks.push({ line: open.line, code: open.lines.join("\n") });
      open = null;
    } else if (open !== null) open.lines.push(text);
  });
  return blocks;
}

/** The dsv4-kv imports and re-exports of a code block: `{ specifier, names, namespace, line }` (line in the block). */
export function importsOf(code) {
  const sf = ts.createSourceFile("block.ts", code, ts.ScriptTarget.Latest, true);
  const out = [];
  const visit = (node) => {
    const decl = ts.isImportDeclaration(node) || ts.isExportDeclaration(node) ? node : null;
    if (decl?.moduleSpecifier && ts.isStringLiteral(decl.moduleSpecifier)) {
      const line = sf.getLineAndCharacterOfPosition(decl.getStart(sf)).line;
      out.push({ specifier: decl.moduleSpecifier.text, ...bindingsOf(decl), line });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      if (arg && ts.isStringLiteral(arg)) out.push({ specifier: arg.text, names: [], namespace: false, line });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out.filter((i) => i.specifier.startsWith("@dsv4-kv/"));
}

function bindingsOf(decl) {
  const bindings = ts.isImportDeclaration(decl) ? decl.importClause?.namedBindings : decl.exportClause;
  if (!bindings) return { names: [], namespace: ts.isExportDeclaration(decl) };
  if (ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) return { names: [], namespace: true };
  return { names: bindings.elements.map((e) => (e.propertyName ?? e.name).text), namespace: false };
}

/** The names each source entry exports, read once for all entries with one TypeScript program. */
function exportedNames(entryFiles) {
  const program = ts.createProgram(entryFiles, {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    customConditions: ["@dsv4-kv/source"],
    resolveJsonModule: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map();
  for (const file of entryFiles) {
    const sf = program.getSourceFile(file);
    const symbol = sf && checker.getSymbolAtLocation(sf);
    names.set(file, new Set(symbol ? checker.getExportsOfModule(symbol).map((s) => s.getName()) : []));
  }
  return names;
}

/** `@dsv4-kv/x/sub` → { pkg, subpath: "./sub" }. */
function splitSpecifier(specifier) {
  const [scope, name, ...rest] = specifier.split("/");
  return { pkg: `${scope}/${name}`, subpath: rest.length ? `./${rest.join("/")}` : "." };
}

function sourceEntry(exportsField, subpath) {
  const target = exportsField?.[subpath];
  if (typeof target === "string") return target;
  return target?.["@dsv4-kv/source"] ?? null;
}

/** @param {string} root @returns {{ findings: Finding[], blocks: number, imports: number }} */
export function checkReadmeExamples(root) {
  const packages = workspacePackages(root);
  const byName = new Map(packages.map((p) => [p.manifest.name, p]));
  const readmes = packages
    .filter((p) => !p.manifest.private && existsSync(join(root, p.dir, "README.md")))
    .map((p) => ({
      file: `${p.dir}/README.md`,
      blocks: codeBlocks(readFileSync(join(root, p.dir, "README.md"), "utf8")),
    }));
  const uses = readmes.flatMap(({ file, blocks }) =>
    blocks.flatMap((b) => importsOf(b.code).map((i) => ({ ...i, file, line: b.line + i.line }))),
  );
  const entryOf = (use) => {
    const { pkg, subpath } = splitSpecifier(use.specifier);
    const target = byName.get(pkg);
    const source = target && sourceEntry(target.manifest.exports, subpath);
    return source && /\.[cm]?tsx?$/.test(source) ? resolve(root, target.dir, source) : null;
  };
  const names = exportedNames([...new Set(uses.map(entryOf).filter(Boolean))]);
  const findings = [];
  for (const use of uses) {
    const problem = useProblem(use, byName, entryOf(use), names);
    if (problem) findings.push({ file: use.file, line: use.line, message: `${use.specifier}: ${problem}` });
  }
  return { findings, blocks: readmes.reduce((n, r) => n + r.blocks.length, 0), imports: uses.length };
}

function useProblem(use, byName, entry, names) {
  const { pkg, subpath } = splitSpecifier(use.specifier);
  const target = byName.get(pkg);
  if (!target) return "no workspace package of that name";
  if (PRIVATE_SUBPATHS.has(subpath)) return `${subpath} is for this repository's packages and tests, not for users`;
  if (!target.manifest.exports?.[subpath]) return `${pkg} exports no ${subpath} subpath`;
  if (!entry) return null; // a data file (a JSON schema): nothing to name
  if (use.namespace) return "a namespace import reaches every export: import the names the example uses";
  const exported = names.get(entry);
  const missing = use.names.filter((n) => !exported.has(n));
  const where = subpath === "." ? "root entry" : `${subpath} entry`;
  return missing.length ? `${missing.join(", ")} not exported by the ${where}` : null;
}

function main(argv) {
  const rootAt = argv.indexOf("--root");
  const root = rootAt >= 0 ? resolve(argv[rootAt + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const { findings, blocks, imports } = checkReadmeExamples(root);
  for (const f of findings) console.error(`${f.file}:${f.line}: ${f.message}`);
  console.log(`README-examples check: ${findings.length} finding(s) in ${imports} imports of ${blocks} code blocks`);
  return findings.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
