#!/usr/bin/env node
// The browser-safety check of `pnpm lint`: the runtime code of planner, memory-pool and server-config runs in the
// HTML report's page, so it must not need Node. Two passes:
//   - a scan of each package's src/**/*.ts (tests, bench and scripts live outside src/) for imports of Node
//     built-ins (`node:*` and the bare names of `module.builtinModules`: static, `export … from`, `import()`,
//     `require`, `import x = require()`; type-only imports are erased and allowed) and for references to the Node
//     globals `process`, `Buffer`, `__dirname`, `__filename`, `require` (a property access such as
//     `globalThis.process?.env` is the feature-detecting form and allowed; a local of one of those names is
//     flagged too: rename it);
//   - an esbuild bundle of each package's root entry for `platform: "browser"` (esbuild from packages/cli's
//     devDependencies), so that a Node import reached through a dependency fails too.
// Usage: node tooling/scripts/check-browser-safe.mjs [--root DIR] [--no-bundle]
import { existsSync, readFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles } from "./lib/files.mjs";

export const BROWSER_SAFE_PACKAGES = ["packages/planner", "packages/memory-pool", "packages/server-config"];
export const NODE_GLOBALS = new Set(["process", "Buffer", "__dirname", "__filename", "require"]);

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const requireHere = createRequire(import.meta.url);
/** The source export condition: workspace imports resolve to src/, as in the tests. */
const SOURCE_CONDITION = "@dsv4-kv/source";

let ts;
function typescript() {
  ts ??= requireHere("typescript");
  return ts;
}

/** Is `node` the name being declared or a property name (not a reference to a global)? */
function isNameSlot(node) {
  const t = typescript();
  const p = node.parent;
  if (!p) return false;
  if ((t.isPropertyAccessExpression(p) || t.isQualifiedName(p)) && (p.name ?? p.right) === node) return true;
  if (t.isPropertyAssignment(p) && p.name === node) return true;
  const declarations = [
    t.isPropertyDeclaration,
    t.isPropertySignature,
    t.isMethodDeclaration,
    t.isMethodSignature,
    t.isGetAccessorDeclaration,
    t.isSetAccessorDeclaration,
    t.isEnumMember,
    t.isImportSpecifier,
    t.isExportSpecifier,
  ];
  return declarations.some((is) => is(p)) && p.name === node;
}

function literalArgument(call) {
  const t = typescript();
  const arg = call.arguments[0];
  return arg !== undefined && (t.isStringLiteral(arg) || t.isNoSubstitutionTemplateLiteral(arg)) ? arg.text : null;
}

/**
 * Node built-in imports and Node global references in one TypeScript source.
 * @param {string} text
 * @param {string} file the name findings carry
 * @returns {{ file: string, line: number, what: string }[]}
 */
export function scanSource(text, file) {
  const t = typescript();
  const source = t.createSourceFile(file, text, t.ScriptTarget.Latest, true, t.ScriptKind.TS);
  const findings = [];
  const at = (node, what) =>
    findings.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, what });
  const builtinImport = (node, specifier, how) => {
    if (specifier !== null && isBuiltin(specifier)) at(node, `${how} "${specifier}" (a Node built-in)`);
  };
  const visit = (node) => {
    if (t.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      builtinImport(node, node.moduleSpecifier.text, "import of");
    } else if (t.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      builtinImport(node, node.moduleSpecifier.text, "re-export from");
    } else if (t.isImportEqualsDeclaration(node) && t.isExternalModuleReference(node.moduleReference)) {
      builtinImport(node, node.moduleReference.expression.text, "import = require of");
    } else if (t.isCallExpression(node) && node.expression.kind === t.SyntaxKind.ImportKeyword) {
      builtinImport(node, literalArgument(node), "dynamic import() of");
    } else if (t.isCallExpression(node) && t.isIdentifier(node.expression) && node.expression.text === "require") {
      builtinImport(node, literalArgument(node), "require of");
    }
    if (t.isIdentifier(node) && NODE_GLOBALS.has(node.text) && !isNameSlot(node)) {
      at(node, `use of the Node global \`${node.text}\``);
    }
    t.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/** The runtime sources of a package: src/**\/*.ts without tests and declarations. */
function runtimeSources(files, dir) {
  return files.filter(
    (f) => f.startsWith(`${dir}/src/`) && f.endsWith(".ts") && !f.endsWith(".d.ts") && !/\.(test|spec)\.ts$/.test(f),
  );
}

/** The package's root entry: its `.` export under the source condition, else src/index.ts. */
function rootEntry(root, dir) {
  const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
  const dot = typeof manifest.exports === "object" ? manifest.exports["."] : undefined;
  const source = typeof dot === "object" && dot !== null ? dot[SOURCE_CONDITION] : undefined;
  return join(root, dir, typeof source === "string" ? source : "src/index.ts");
}

function loadEsbuild() {
  const fromCli = createRequire(join(REPO_ROOT, "packages/cli/package.json"));
  return fromCli("esbuild");
}

/**
 * Bundles the root entry for the browser; a Node built-in anywhere in its import graph fails the build.
 * @returns {string[]} the build errors, as `file:line: text`
 */
export function bundleErrors(root, dir) {
  const esbuild = loadEsbuild();
  const entry = rootEntry(root, dir);
  try {
    esbuild.buildSync({
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: "browser",
      format: "esm",
      conditions: [SOURCE_CONDITION],
      // Locations in errors are relative to this folder (not to the process's cwd).
      absWorkingDir: root,
      logLevel: "silent",
    });
    return [];
  } catch (e) {
    const errors = Array.isArray(e?.errors) ? e.errors : [{ text: String(e?.message ?? e) }];
    return errors.map((m) => {
      const where = m.location ? `${relative(root, resolve(root, m.location.file))}:${m.location.line}` : dir;
      return `${where}: browser bundle of ${relative(root, entry)}: ${m.text}`;
    });
  }
}

/**
 * @param {string} root repository root
 * @param {{ bundle?: boolean, packages?: string[] }} [options]
 * @returns {{ violations: string[], files: number }}
 */
export function checkBrowserSafe(root, options = {}) {
  const packages = options.packages ?? BROWSER_SAFE_PACKAGES;
  const files = listFiles(root);
  const violations = [];
  let scanned = 0;
  for (const dir of packages) {
    if (!existsSync(join(root, dir, "package.json"))) {
      violations.push(`${dir}: no package.json (the browser-safe package list is stale)`);
      continue;
    }
    for (const file of runtimeSources(files, dir)) {
      scanned++;
      for (const f of scanSource(readFileSync(join(root, file), "utf8"), file))
        violations.push(`${f.file}:${f.line}: ${f.what}`);
    }
    if (options.bundle !== false) violations.push(...bundleErrors(root, dir));
  }
  return { violations, files: scanned };
}

function main(argv) {
  const rootAt = argv.indexOf("--root");
  const root = rootAt >= 0 ? resolve(argv[rootAt + 1]) : REPO_ROOT;
  const { violations, files } = checkBrowserSafe(root, { bundle: !argv.includes("--no-bundle") });
  for (const v of violations) console.error(v);
  console.log(`browser-safe check: ${violations.length} violation(s) in ${files} runtime files`);
  return violations.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
