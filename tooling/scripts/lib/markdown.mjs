// Markdown facts the document-reference check needs: heading anchors (GitHub's slug rules), numbered sections,
// and the links of a file, all outside fenced code blocks.

/** GitHub's heading slug (github-slugger): rendered text, lower case, punctuation dropped, each space a hyphen. */
export function githubSlug(heading) {
  const text = heading
    .replace(/<[^>]*>/g, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Lines outside fenced code blocks, as `{ line, text }` (1-based line numbers). */
export function proseLines(markdown) {
  const out = [];
  let fence = null;
  markdown.split("\n").forEach((text, i) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(text);
    if (marker) {
      if (fence === null) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text });
  });
  return out;
}

/**
 * @returns {{ anchors: Set<string>, sections: Set<string> }} `anchors`: heading slugs (duplicates numbered -1,
 *   -2, … as GitHub does) and explicit `id`/`name` anchors; `sections`: leading section numbers of headings
 *   (`## 3.2 Write rules` → "3.2").
 */
export function headingIndex(markdown) {
  const anchors = new Set();
  const sections = new Set();
  const seen = new Map();
  for (const { text } of proseLines(markdown)) {
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (!heading) continue;
    const base = githubSlug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
    const number = /^(?:\u00a7\s*)?([A-Z]|\d+)((?:\.\d+)*)\.?(?:\s|$)/.exec(heading[1].replace(/[`*_]/g, ""));
    if (number) sections.add(number[1] + number[2]);
  }
  return { anchors, sections };
}

/** Inline links `[text](target)` outside code blocks and code spans: `{ line, text, target, index, end }`. */
export function markdownLinks(markdown) {
  const out = [];
  for (const { line, text } of proseLines(markdown)) {
    const masked = text.replace(/`[^`]*`/g, (span) => " ".repeat(span.length));
    for (const m of masked.matchAll(/\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ line, text: m[1], target: m[2], index: m.index, end: m.index + m[0].length });
    }
  }
  return out;
}
