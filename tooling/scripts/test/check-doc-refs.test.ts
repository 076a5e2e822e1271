import { afterAll, describe, expect, it } from "vitest";
import { checkDocRefs } from "../check-doc-refs.mjs";
import { githubSlug } from "../lib/markdown.mjs";
import { REPO_ROOT, writeTree } from "./fixture.js";

// Built from pieces so that this file itself cites nothing the checker forbids.
const S = "\u00a7";
const doc = (path: string) => `docs/${path}`;
const md = (name: string) => `${name}.md`;

const GUIDE = [
  "# Guide", // 1
  "## 1. Scope", // 2
  "### 1.1 Notation", // 3
  "## The `writePad` rule", // 4
  "## Dup", // 5
  "## Dup", // 6
  '<a id="custom"></a>', // 7
  "```", // 8
  "## Not a heading", // 9
  "```", // 10
  `See [notation](#11-notation), [${S}1](#1-scope) and [nothing](#nowhere).`, // 11
  "",
].join("\n");

const GOOD = [
  `// ${doc(md("guide"))}#11-notation`,
  `// ${doc(md("guide"))}#the-writepad-rule and ${doc(md("guide"))}#dup-1 and ${doc(md("guide"))}#custom`,
  `// ${doc(md("guide"))} ${S}1.1, ${doc(md("guide"))} ${S}1 and plain ${doc(md("guide"))}.`,
  `// lists: ${doc(md("guide"))} ${S}1, ${S}1.1 and ${S}1; ${doc(md("reference/rules"))} ${S}2/${S}2.1`,
  `// short names of docs/reference files: rules ${S}2.1, (rules ${S}2, ${S}2.1)`,
];
const BAD = [
  [`// ${doc(md("missing"))}`, "docs-path"],
  [`// ${doc(md("guide"))}#no-such`, "docs-path"],
  [`// ${doc(md("guide"))}#not-a-heading`, "docs-path"],
  [`// ${doc(md("guide"))} ${S}9.9`, "docs-path"],
  [`// spec ${S}3.2`, "outside"],
  ["// see spec" + "s/planner", "outside"],
  [`// ${md("ecosystem")} 2`, "outside"],
  [`// ${md("planner")} ${S}3`, "outside"],
  [`// ${md("online-mtp")} ${S}2`, "outside"],
  [`// ${md("memory-pool-and-config")}`, "outside"],
  ["// ../" + "shared/device/pack.sh", "outside"],
  [`// the rule of ${S}4`, "bare-section"],
  [`// ${doc(md("guide"))} ${S}1, ${S}9`, "docs-path"],
  [`// rules ${S}7`, "docs-path"],
  [`// README ${S}1`, "bare-section"],
] as const;

const tree = writeTree({
  [doc(md("guide"))]: GUIDE,
  [doc(md("reference/rules"))]: "# Rules\n## 2. Scope\n### 2.1 One\n",
  [doc(md("reference/README"))]: "# Reference\n## 1. Documents\n",
  "packages/p/src/a.ts": [...GOOD, ...BAD.map(([line]) => line), ""].join("\n"),
  "packages/p/native/k.cu": `// kernel of ${S}5\n`,
  "packages/p/scripts/run.sh": "# bash ../" + "shared/x.sh\n",
  "packages/p/data.json": `{ "note": "${S}6" }\n`,
  "packages/p/README.md": [
    `[ok](../../${doc(md("guide"))}#1-scope) and [${S}1.1](../../${doc(md("guide"))}#11-notation)`, // 1
    `[bad anchor](../../${doc(md("guide"))}#nope)`, // 2
    `[outside](../../../${md("elsewhere")})`, // 3
    `[missing](./${md("nothing")})`, // 4
    "[web](https://example.com/x.md#y) and `[in code](./no.md)`", // 5
    "",
  ].join("\n"),
});
afterAll(() => tree.remove());

describe("check-doc-refs on a fixture tree", () => {
  const { findings } = checkDocRefs(tree.root);
  const at = (file: string) =>
    findings
      .filter((f) => f.file === file)
      .map((f) => `${f.line}:${f.kind}`)
      .sort();

  it("accepts good references and reports each bad one in code, on its line, once", () => {
    const expected = BAD.map(([, kind], i) => `${GOOD.length + i + 1}:${kind}`).sort();
    expect(at("packages/p/src/a.ts")).toEqual(expected);
  });
  it("scans CUDA sources and shell scripts, not JSON", () => {
    expect(at("packages/p/native/k.cu")).toEqual(["1:bare-section"]);
    expect(at("packages/p/scripts/run.sh")).toEqual(["1:outside"]);
    expect(at("packages/p/data.json")).toEqual([]);
  });
  it("checks Markdown links relative to the file: missing anchors and files, links out of the repository", () => {
    expect(at("packages/p/README.md")).toEqual(["2:link", "3:outside", "4:link"]);
    expect(at(doc(md("guide")))).toEqual(["11:link"]);
  });
  it("prints file:line findings with --report (the CLI)", async () => {
    const { execFileSync } = await import("node:child_process");
    const script = `${REPO_ROOT}/tooling/scripts/check-doc-refs.mjs`;
    let stderr = "";
    try {
      execFileSync(process.execPath, [script, "--report", "--root", tree.root], { stdio: "pipe" });
    } catch (e) {
      stderr = String((e as { stderr: Buffer }).stderr);
    }
    expect(stderr).toContain(`packages/p/src/a.ts:${GOOD.length + 1}: docs-path: ${doc(md("missing"))} does not exist`);
  });
});

describe("check-doc-refs on mentions of the project's issues", () => {
  // Built from pieces so that this file itself names no issue.
  const I = (n: string) => `issue${n}`;
  const issues = writeTree({
    "packages/p/src/b.ts": [
      `// Strict inputs (${I(" 10")}, point 2).`, // 1
      `// ${I(" #12")} and ${I(" 23")}'s bounds.`, // 2
      `/** ${"Issue"} 5: the layout contract. */`, // 3
      "// a lane issues 16 loads; sgl-project/sglang#2591; sglang-issue-25118.log; ISSUE_2591", // 4
      `// ${I("23")}-style names run together too`, // 5
      "",
    ].join("\n"),
    [doc(md("notes"))]: `# Notes\n\n## Re-verification (${I(" 13")}, point 6)\n`,
    ".changeset/x.md": `---\n"@dsv4-kv/p": patch\n---\n\nBounded inputs (${I(" 23")}).\n`,
  });
  afterAll(() => issues.remove());
  const { findings } = checkDocRefs(issues.root);
  const lines = (file: string) => findings.filter((f) => f.file === file && f.kind === "issue").map((f) => f.line);

  it("flags the word and a number in code, Markdown and changesets, on its line", () => {
    expect(lines("packages/p/src/b.ts")).toEqual([1, 2, 2, 3, 5]);
    expect(lines(doc(md("notes")))).toEqual([3]);
    expect(lines(".changeset/x.md")).toEqual([5]);
  });
  it("leaves the verb, owner/repo#N, identifiers and file names alone", () => {
    expect(findings.filter((f) => f.line === 4)).toEqual([]);
  });
});

describe("githubSlug", () => {
  it("follows GitHub's rules", () => {
    expect(githubSlug("1.1 Notation")).toBe("11-notation");
    expect(githubSlug("The `writePad` rule")).toBe("the-writepad-rule");
    expect(githubSlug("Pools & sizing (both modes)")).toBe("pools--sizing-both-modes");
    expect(githubSlug("[Link](x.md) text_1")).toBe("link-text_1");
  });
});

describe("check-doc-refs on the repository", () => {
  it("finds no unresolved reference in the tree", () => {
    const { findings, scanned } = checkDocRefs(REPO_ROOT);
    expect(scanned).toBeGreaterThan(100);
    expect(findings.map((f) => `${f.file}:${f.line}: ${f.kind}: ${f.message}`)).toEqual([]);
  });
});
