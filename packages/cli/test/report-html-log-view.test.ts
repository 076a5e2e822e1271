/**
 * The page's "Against the log" part, rendered with a minimal stand-in for the DOM (the whole page is tested in
 * Chromium, test/browser): a section's heading, its figures, the other sections, and the skipped and cut lines.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { CheckPayload } from "../src/report-html/check-payload.js";
import { cli } from "./cli-helpers.js";

/** Just enough of the DOM for `el`: elements with attributes and children, and text nodes. */
class FakeNode {
  children: FakeNode[] = [];
  attributes: Record<string, string> = {};
  constructor(
    readonly tag: string,
    readonly text = "",
  ) {}
  setAttribute(name: string, value: string) {
    this.attributes[name] = value;
  }
  appendChild(child: FakeNode) {
    this.children.push(child);
    return child;
  }
  append(...children: FakeNode[]) {
    for (const c of children) this.appendChild(c);
  }
  get textContent(): string {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  find(predicate: (n: FakeNode) => boolean): FakeNode[] {
    return [...(predicate(this) ? [this] : []), ...this.children.flatMap((c) => c.find(predicate))];
  }
}

beforeAll(() => {
  (globalThis as { document?: unknown }).document = {
    createElement: (tag: string) => new FakeNode(tag),
    createTextNode: (text: string) => new FakeNode("#text", text),
  };
});

const CORPUS = new URL("../../server-config/test/fixtures/sglang-logs/", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-logview-"));

function payloadOf(args: string[]): CheckPayload {
  const path = join(dir, `${args.join("-").replace(/[^a-z0-9]/gi, "")}.html`);
  cli(["check", ...args, "--html", path]);
  const html = readFileSync(path, "utf8");
  const m = /<script type="application\/json" id="dsv4kv-data">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error("no payload in the page");
  return JSON.parse(m[1]!) as CheckPayload;
}

describe("the page's log part", () => {
  it("shows the section, every section of the file, and the skipped lines", async () => {
    const { logSection } = await import("../src/report-html/page/log-view.js");
    const file = join(CORPUS, "amd-infera-mtt-working-process-prose.log");
    const node = logSection(payloadOf(["--against-log", file, "--section", "2"]), false) as unknown as FakeNode;
    expect(node.find((n) => n.tag === "h2")[0]!.textContent).toContain("Against the log: section 2");
    const skipped = node.find((n) => n.attributes.id === "log-skipped")[0]!;
    expect(skipped.find((n) => n.tag === "li").length).toBeGreaterThan(0);
    expect(node.find((n) => n.tag === "tr" && n.attributes["data-figure"] !== undefined).length).toBeGreaterThan(0);
    const all = logSection(payloadOf(["--against-log", file]), false) as unknown as FakeNode;
    expect(all.find((n) => n.attributes.id === "log-sections")[0]!.find((n) => n.tag === "li")).toHaveLength(2);
  });

  it("shows the cut lines", async () => {
    const { logSection } = await import("../src/report-html/page/log-view.js");
    const file = join(CORPUS, "v41-miaai-issue-27-gb10-tp4-swa-sizing-truncated.log");
    const node = logSection(payloadOf(["--against-log", file]), false) as unknown as FakeNode;
    const cut = node.find((n) => n.attributes.id === "log-truncated")[0]!;
    expect(cut.textContent).toContain("the line is cut");
  });
});
