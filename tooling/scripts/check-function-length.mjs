#!/usr/bin/env node
// The function-length check of `pnpm lint`: no function, method, arrow function or class body in a package's source
// (packages/*/src, packages/*/native, packages/*/bench, tooling/scripts) may span more than MAX_LINES lines, and no
// class more than MAX_CLASS_LINES. Long code is split by job (docs/decisions.md, D33); tests, generated files and
// data tables are not source in this sense and are skipped.
// TypeScript and JavaScript are measured with the TypeScript compiler's syntax tree; C++ and CUDA with a brace
// matcher that skips comments, strings and preprocessor lines, counting a top-level `{ … }` that follows a `)` (a
// function body) or a `struct`/`class` head.
// A function may run longer only when tooling/scripts/function-length-exemptions.json names it, with its most lines
// and why; an exemption that no longer applies is a finding too.
// Usage: node tooling/scripts/check-function-length.mjs [--report] [--max N] [--root DIR]
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles } from "./lib/files.mjs";

const MAX_LINES = 100;
const MAX_CLASS_LINES = 400;
const SOURCE = /^(?:packages\/[^/]+\/(?:src|native|bench)\/|tooling\/scripts\/(?!test\/))/u;
const SKIP = /(?:\.test\.|\.d\.ts$|\/generated\/|\.generated\.|\/test\/|\/fixtures\/)/u;
const TS_FILE = /\.(?:ts|mts|cts|mjs|cjs|js)$/u;
const NATIVE_FILE = /\.(?:cu|cuh|cpp|cc|h|hpp)$/u;

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "package.json"));

/** @typedef {{file: string, line: number, name: string, lines: number, limit: number}} Finding */

/** @param {string} root @param {number} maxLines @returns {Finding[]} */
export function findLongFunctions(root, maxLines = MAX_LINES) {
  const ts = require("typescript");
  const findings = [];
  for (const file of listFiles(root)) {
    if (!SOURCE.test(file) || SKIP.test(file)) continue;
    const text = readFileSync(join(root, file), "utf8");
    if (TS_FILE.test(file)) findings.push(...tsFindings(ts, file, text, maxLines));
    else if (NATIVE_FILE.test(file)) findings.push(...nativeFindings(file, text, maxLines));
  }
  return findings;
}

function tsFindings(ts, file, text, maxLines) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out = [];
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node) => {
    const limit = ts.isClassLike(node) ? MAX_CLASS_LINES : ts.isFunctionLike(node) && node.body ? maxLines : 0;
    if (limit > 0) {
      const start = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - start + 1;
      if (lines > limit) out.push({ file, line: start, name: nameOf(ts, node, source), lines, limit });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function nameOf(ts, node, source) {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) {
    return parent.name.getText(source);
  }
  return "(anonymous)";
}

/** Blanks comments, strings, character literals and preprocessor lines, keeping line breaks. */
function stripNative(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//gu, (m) => m.replace(/[^\n]/gu, " "))
    .replace(/\/\/[^\n]*/gu, "")
    .replace(/"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/gu, (m) => " ".repeat(m.length))
    .replace(/^[ \t]*#[^\n]*(?:\\\n[^\n]*)*/gmu, (m) => m.replace(/[^\n]/gu, " "));
}

function nativeFindings(file, text, maxLines) {
  const code = stripNative(text);
  const out = [];
  const stack = [];
  let line = 1;
  for (let i = 0; i < code.length; i += 1) {
    const ch = code[i];
    if (ch === "\n") line += 1;
    else if (ch === "{") stack.push({ line, head: headBefore(code, i) });
    else if (ch === "}") {
      const open = stack.pop();
      if (!open?.head) continue;
      const limit = open.head.kind === "class" ? MAX_CLASS_LINES : maxLines;
      const lines = line - open.line + 1;
      const isOuterBody = stack.every((s) => s.head?.kind === "class" || s.head === null);
      if (isOuterBody && lines > limit) out.push({ file, line: open.line, name: open.head.name, lines, limit });
    }
  }
  return out;
}

/** What a `{` opens: a function body (after `)` and qualifiers), a class/struct, or something else (null). */
function headBefore(code, brace) {
  const before = code.slice(Math.max(0, brace - 400), brace);
  const cls = /\b(?:struct|class)\s+(\w+)[^;{}()]*$/u.exec(before);
  if (cls) return { kind: "class", name: cls[1] };
  const fn = /(\w+)\s*\([^;{}]*\)\s*(?:const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$/u.exec(before);
  if (!fn || /^(?:if|for|while|switch|catch|return|sizeof|decltype)$/u.test(fn[1])) return null;
  const named = fn[0].match(/\w+(?=\s*\()/gu).find((n) => !n.startsWith("__"));
  return { kind: "function", name: named ?? fn[1] };
}

const EXEMPTIONS = "tooling/scripts/function-length-exemptions.json";

/**
 * The findings an exemption does not cover, plus one per exemption that covers nothing (the function shrank, moved
 * or was split): the list may only shrink.
 * @param {string} root @param {Finding[]} findings @returns {string[]}
 */
export function unexempted(root, findings) {
  const path = join(root, EXEMPTIONS);
  const exemptions = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")).exemptions : [];
  const problems = [];
  const used = new Set();
  for (const f of findings) {
    const i = exemptions.findIndex((e) => e.file === f.file && e.name === f.name);
    if (i >= 0) used.add(i);
    const over = `${f.file}:${f.line}  ${f.name}  ${f.lines} lines (limit ${f.limit})`;
    if (i < 0) problems.push(over);
    else if (f.lines > exemptions[i].maxLines)
      problems.push(`${over}: grew past its exemption (${exemptions[i].maxLines})`);
  }
  exemptions.forEach((e, i) => {
    if (!used.has(i)) problems.push(`${EXEMPTIONS}: ${e.file} ${e.name} is no longer over the limit: drop it`);
  });
  return problems;
}

function main(argv) {
  const root = resolve(argv.includes("--root") ? argv[argv.indexOf("--root") + 1] : join(here, "..", ".."));
  const max = argv.includes("--max") ? Number(argv[argv.indexOf("--max") + 1]) : MAX_LINES;
  const findings = unexempted(root, findLongFunctions(root, max));
  for (const f of findings) console.error(f);
  if (findings.length > 0) {
    console.error(`check-function-length: ${findings.length} over the limit; split them by job`);
    process.exit(1);
  }
  console.log("check-function-length: every function within its limit");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
