// docs/reference/vllm-flags.md is generated from the vLLM flag table (vllm-flags.ts); this fails when they drift.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { VLLM_ARG_ENTRIES, VLLM_OTHER_FLAGS, type VllmServerFlag } from "../src/index.js";
import { VLLM_FLAGS_SOURCE } from "../src/vllm-flags.js";
import { rangeText } from "./flag-doc-text.js";

const DOC = fileURLToPath(new URL("../../../docs/reference/vllm-flags.md", import.meta.url));

const EFFECT: Record<string, string> = { unmodelled: "not modelled", ignored: "ignored" };

const cell = (text: string) => text.replace(/\|/g, "\\|");
const code = (text: string) => `\`${cell(text)}\``;

/** A flag's spellings as typed: the primary, its aliases, and `--no-NAME` for a switch. */
function spellings(names: readonly string[], form: string): string {
  const negated = form === "bool" && names[0]?.startsWith("--") ? [`--no-${names[0].slice(2)}`] : [];
  return [...names, ...negated].map(code).join(", ");
}

function argumentRow(entry: VllmServerFlag): string {
  const flag = entry.spellings.length > 0 ? spellings(entry.spellings, entry.form) : `env ${code(entry.dest)}`;
  const dflt = entry.default === null ? "unset" : code(String(entry.default));
  const cells = [flag, code(entry.dest), entry.form, rangeText(entry.value), dflt, entry.touches.join(", ")];
  return `| ${[...cells, cell(entry.help)].join(" | ")} |`;
}

function render(): string {
  const args = VLLM_ARG_ENTRIES.map(([, entry]) => argumentRow(entry));
  const others = VLLM_OTHER_FLAGS.map(
    (f) => `| ${spellings(f.spellings, f.form)} | ${f.form} | ${EFFECT[f.effect]} | ${code(f.dest)} |`,
  );
  const count = (effect: string) => VLLM_OTHER_FLAGS.filter((f) => f.effect === effect).length;
  const sources = VLLM_FLAGS_SOURCE.files.map(
    (f) => `- \`${VLLM_FLAGS_SOURCE.repository}\`, \`${f.path}\` at commit \`${f.commit}\`: ${f.decides}.`,
  );
  return `# vLLM server flags

\`dsv4-kv check --engine vllm\` accepts these flags of \`vllm serve\` as vLLM spells them, on its own command line or
after \`--\` in a pasted launch command. This table is generated from packages/server-config/src/vllm-flags.ts (the
one table the CLI parses with and the vLLM log reader reads launch commands with); regenerate it with
\`cd packages/server-config && UPDATE_VLLM_FLAGS_DOC=1 npx vitest run test/vllm-flags-doc.test.ts\`.

Followed:
${sources.join("\n")}

Value forms: \`bool\` is a switch with its \`--no-NAME\` form (no value); \`int\`, \`float\` and \`str\` take one word
(\`--flag value\` or \`--flag=value\`); \`humanInt\` is an integer that may carry a size suffix (\`128k\`); \`json\` takes
one word of JSON, or its keys one by one (\`--flag.key value\`); \`list\` takes one or more words. As vLLM's parser,
dsv4-kv takes \`_\` for \`-\` in a flag's name and an unambiguous prefix of a long flag.

## The arguments the check reads

${VLLM_ARG_ENTRIES.length} arguments, each in the report's resolved arguments: vLLM's key (its EngineArgs field, the key
of a start-up log's \`non-default args\`), the value form, the range, the default (unset: vLLM decides at start-up or
leaves it off, and the report says which and why) and what the value touches.

| flag (aliases) | vLLM key | value | range | default | touches | what it does |
|---|---|---|---|---|---|---|
${args.join("\n")}

## The other flags

Effect: **ignored** flags do not change the KV cache and are listed in the report with their values; **not
modelled** flags can change the KV cache or its budget in vLLM (offloading, KV transfer, quantised weights of
another size), which dsv4-kv does not model: they are accepted and listed separately, so the figures are not
mistaken for covering them. ${count("ignored")} ignored, ${count("unmodelled")} not modelled. A flag in neither
table is refused with a suggestion.

| flag (aliases) | value | effect | vLLM key |
|---|---|---|---|
${others.join("\n")}
`;
}

describe("docs/reference/vllm-flags.md", () => {
  it("is generated from the vLLM flag table", () => {
    const text = render();
    if (process.env.UPDATE_VLLM_FLAGS_DOC === "1") writeFileSync(DOC, text);
    expect(readFileSync(DOC, "utf8")).toBe(text);
  });

  it("lists every spelling the table knows", () => {
    const text = render();
    for (const [, entry] of VLLM_ARG_ENTRIES) for (const s of entry.spellings) expect(text).toContain(`\`${s}\``);
    for (const f of VLLM_OTHER_FLAGS) for (const s of f.spellings) expect(text).toContain(`\`${s}\``);
  });
});
