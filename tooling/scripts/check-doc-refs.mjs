#!/usr/bin/env node
// The document-reference check of `pnpm lint`: every reference to a document in code, tests, bench, scripts and
// Markdown must resolve inside the repository. It fails on
//   - a `docs/….md` path (optionally `#anchor`) that does not exist, or whose anchor is no heading of that file
//     (GitHub's slug rules); a docs path followed by a section sign and number (or a list of them joined by `,`,
//     `/` or `and`) must name numbered headings of it; a docs/reference file may be cited by its short name
//     (`planner`, `pools-and-sizing`, …: the file name without `.md`, README excepted) followed by such numbers;
//   - a relative Markdown link whose file or anchor does not exist, or that leaves the repository;
//   - a citation of documents outside the repository: the research specs, the ecosystem notes, the shared folder
//     next to the repository;
//   - a bare section-sign citation (not written after a docs/ path nor as the text of a checked Markdown link);
//   - the word "issue" followed by a number: the project's issue tracker is not part of the repository, so a reader
//     cannot open it; say what was decided and why (docs/decisions.md). A public issue elsewhere is cited as
//     `owner/repo#N`, which is not flagged.
// Usage: node tooling/scripts/check-doc-refs.mjs [--report] [--root DIR]
//   --report prints file:line for every finding; without it, counts per kind and per file.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles } from "./lib/files.mjs";
import { headingIndex, markdownLinks } from "./lib/markdown.mjs";

const SCANNED_DIRS = ["packages/", "docs/", "tooling/", ".changeset/"];
const CODE_FILE = /\.(?:ts|mts|cts|mjs|cjs|js|cu|cuh|cpp|cc|h|hpp|cmake|sh)$|(?:^|\/)CMakeLists\.txt$/;
// The patterns are written with escapes so that this file does not cite what it forbids.
const OUTSIDE = [
  { re: /\bspecs?\s*\u00a7/giu, what: "cites the research spec" },
  { re: /(?<![\w./-])specs\//gu, what: "cites the research specs folder" },
  { re: /ecosystem\.md/gu, what: "cites the ecosystem notes" },
  { re: /(?<![\w./-])planner\.md\s*\u00a7/gu, what: "cites the planner spec (write docs/reference/planner.md#…)" },
  {
    re: /(?<![\w./-])online-mtp\.md\s*\u00a7/gu,
    what: "cites the online-MTP spec (write docs/reference/online-mtp.md#…)",
  },
  { re: /memory-pool-and-config\.md/gu, what: "cites the memory-pool and config spec" },
  { re: /\.\.\/shared\//gu, what: "points outside the repository (the shared folder)" },
];
const DOC_PATH = /(?<![\w./-])(?:\.{1,2}\/)*(docs\/[\w./-]*?[\w-]\.(?:md|json))(?![\w-])(?:#([\p{L}\p{N}_-]+))?/gu;
const SECTION_NUMBER = /\u00a7\s*((?:[A-Z]|\d+)(?:\.\d+)*)/gu;
const SECTIONS_AFTER_DOC =
  /^\s*\u00a7\s*(?:[A-Z]|\d+)(?:\.\d+)*(?:\s*(?:,|\/|and)\s*\u00a7\s*(?:[A-Z]|\d+)(?:\.\d+)*)*/u;
const REFERENCE_DIR = "docs/reference";
const SECTION_SIGN = /\u00a7/gu;
// The word followed by a number, in any case, with or without a space or "#"; not the verb ("issues" and a count),
// nor inside an identifier or a file name (a fixture named after a public upstream issue), nor `owner/repo#N`.
const ISSUE_NUMBER = /(?<![\w./-])issue\s*#?\d+/giu;

/** @typedef {{ file: string, line: number, kind: string, message: string }} Finding */

/** @param {string} root @returns {{ findings: Finding[], scanned: number }} */
export function checkDocRefs(root) {
  const files = listFiles(root).filter(
    (f) => (SCANNED_DIRS.some((d) => f.startsWith(d)) || !f.includes("/")) && (CODE_FILE.test(f) || f.endsWith(".md")),
  );
  const docs = new DocIndex(root);
  const findings = [];
  for (const file of files) findings.push(...checkFile(root, file, docs));
  return { findings, scanned: files.length };
}

class DocIndex {
  constructor(root) {
    this.root = root;
    this.cache = new Map();
  }
  /** `<name>` followed by a section sign, for each docs/reference file but the README: the short citation. */
  shortNames() {
    if (!this.short) {
      const dir = join(this.root, REFERENCE_DIR);
      const names = existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith(".md") && f !== "README.md")
            .map((f) => f.slice(0, -3))
        : [];
      const alternatives = names.map((n) => n.replace(/\./g, "\\.")).join("|");
      this.short = names.length ? new RegExp(`(?<![\\w./-])(${alternatives})(?=\\s*\u00a7)`, "gu") : /(?!)/gu;
    }
    return this.short;
  }
  /** The headings of a repository file, or null when it does not exist. */
  get(path) {
    if (!this.cache.has(path)) {
      const abs = join(this.root, path);
      const exists = existsSync(abs);
      const isMd = path.endsWith(".md") && exists && statSync(abs).isFile();
      this.cache.set(path, exists ? (isMd ? headingIndex(readFileSync(abs, "utf8")) : "file") : null);
    }
    return this.cache.get(path);
  }
}

function checkFile(root, file, docs) {
  const text = readFileSync(join(root, file), "utf8");
  const lineAt = lineIndex(text);
  const findings = [];
  const add = (offset, kind, message) => findings.push({ file, line: lineAt(offset), kind, message });
  const covered = new Set(); // offsets of section signs accounted for

  for (const { re, what } of OUTSIDE) {
    for (const m of text.matchAll(re)) {
      add(m.index, "outside", `${what}: "${m[0]}"`);
      markSections(m[0], m.index, covered);
    }
  }
  const isMarkdown = file.endsWith(".md");
  for (const m of text.matchAll(DOC_PATH)) {
    const [whole, path, anchor] = m;
    if (isMarkdown && text.slice(m.index - 2, m.index) === "](") continue; // a link: checked relative to the file
    const problem = docProblem(docs, path, anchor);
    if (problem) add(m.index, "docs-path", problem);
    checkSections(docs, path, text, m.index, m.index + whole.length, covered, add);
  }
  for (const m of text.matchAll(docs.shortNames())) {
    checkSections(docs, `${REFERENCE_DIR}/${m[1]}.md`, text, m.index, m.index + m[0].length, covered, add);
  }
  if (isMarkdown) findings.push(...checkMarkdownLinks(root, file, text, docs, covered));
  for (const m of text.matchAll(ISSUE_NUMBER)) {
    add(
      m.index,
      "issue",
      `"${m[0]}" names an issue no reader of the repository can open: say what was decided and why`,
    );
  }
  for (const m of text.matchAll(SECTION_SIGN)) {
    if (!covered.has(m.index)) {
      const context = text.slice(m.index, m.index + 12).split("\n")[0];
      add(m.index, "bare-section", `bare section citation "${context.trim()}": cite docs/<file>.md#<heading>`);
    }
  }
  return findings.sort((a, b) => a.line - b.line);
}

/** The section numbers written right after a document reference ending at `end`: each must be a heading of it. */
function checkSections(docs, path, text, start, end, covered, add) {
  const list = SECTIONS_AFTER_DOC.exec(text.slice(end));
  if (!list) return;
  const index = docs.get(path);
  for (const n of list[0].matchAll(SECTION_NUMBER)) {
    covered.add(end + n.index);
    if (index && index !== "file" && !index.sections.has(n[1])) {
      add(start, "docs-path", `${path} has no section ${n[1]}`);
    }
  }
}

function docProblem(docs, path, anchor) {
  const index = docs.get(path);
  if (index === null) return `${path} does not exist`;
  if (anchor && index !== "file" && !index.anchors.has(anchor)) return `${path} has no heading #${anchor}`;
  return null;
}

function checkMarkdownLinks(root, file, text, docs, covered) {
  const lineStarts = lineOffsets(text);
  const out = [];
  for (const link of markdownLinks(text)) {
    const base = lineStarts[link.line - 1];
    markSections(link.text, base + link.index + 1, covered);
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // http:, mailto:, …
    const [pathPart, anchor] = splitAnchor(link.target);
    const target = pathPart === "" ? file : relative(root, resolve(root, dirname(file), decodeURI(pathPart)));
    const repoPath = target.split(sep).join("/");
    const where = { file, line: link.line, kind: "link" };
    if (repoPath.startsWith("../") || repoPath === "..") {
      out.push({ ...where, kind: "outside", message: `link leaves the repository: ${link.target}` });
      continue;
    }
    const problem = docProblem(docs, repoPath, anchor);
    if (problem) out.push({ ...where, message: `link ${link.target}: ${problem}` });
  }
  return out;
}

function splitAnchor(target) {
  const at = target.indexOf("#");
  return at < 0 ? [target, undefined] : [target.slice(0, at), target.slice(at + 1)];
}

function markSections(text, offset, covered) {
  for (const m of text.matchAll(SECTION_SIGN)) covered.add(offset + m.index);
}

function lineOffsets(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

function lineIndex(text) {
  const starts = lineOffsets(text);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function summary(findings) {
  const byKind = new Map();
  const byFile = new Map();
  for (const f of findings) {
    byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + 1);
    byFile.set(f.file, (byFile.get(f.file) ?? 0) + 1);
  }
  const kinds = [...byKind].map(([k, n]) => `${k} ${n}`).join(", ");
  const files = [...byFile].sort((a, b) => b[1] - a[1]).map(([f, n]) => `  ${n}\t${f}`);
  return [`by kind: ${kinds}`, "by file:", ...files];
}

function main(argv) {
  const rootAt = argv.indexOf("--root");
  const root = rootAt >= 0 ? resolve(argv[rootAt + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const { findings, scanned } = checkDocRefs(root);
  if (argv.includes("--report")) {
    for (const f of findings) console.error(`${f.file}:${f.line}: ${f.kind}: ${f.message}`);
  } else if (findings.length > 0) {
    for (const line of summary(findings)) console.error(line);
    console.error("(node tooling/scripts/check-doc-refs.mjs --report lists each as file:line)");
  }
  console.log(`doc-reference check: ${findings.length} finding(s) in ${scanned} files`);
  return findings.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
