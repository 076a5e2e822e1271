import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SERVER_ARG_ENTRIES, SGLANG_FLAGS, SGLANG_FLAGS_SOURCE, sglangFlag, serverFlagName } from "../src/index.js";
import { ServerArgsSchema } from "../src/schema.js";
import { rangeText } from "./flag-doc-text.js";

const DOC = fileURLToPath(new URL("../../../docs/reference/sglang-flags.md", import.meta.url));

const EFFECT: Record<string, string> = {
  kv: "KV",
  unmodelled: "not modelled",
  ignored: "ignored",
  config: "config file",
};

/** The server arguments the check models, from the flag table (server-flags.ts). */
function argumentRows(): string[] {
  return SERVER_ARG_ENTRIES.map(([field, f]) => {
    const dflt = f.default === null ? "unset" : `\`${String(f.default)}\``;
    const judged = f.judgedBy
      ? ` (library: ${f.judgedBy.rule} reports ${f.judgedBy.bound === "max" ? "above" : "outside"})`
      : "";
    const env = f.env ? `\`${f.env}\`` : "";
    const cells = [
      `\`--${serverFlagName(field)}\``,
      `\`${field}\``,
      rangeText(f.value) + judged,
      dflt,
      f.touches.join(", "),
      env,
    ];
    return `| ${cells.join(" | ")} |`;
  });
}

function render(): string {
  const rows = SGLANG_FLAGS.map((f) => {
    const names = [f.name, ...f.aliases, ...(f.kind === "optbool" ? [`no-${f.name}`] : [])].map((n) => `\`--${n}\``);
    const kind = f.nargs === null ? f.kind : `${f.kind} (${f.nargs})`;
    return `| ${names.join(", ")} | ${kind} | ${EFFECT[f.effect]} | ${f.field === null ? "" : `\`${f.field}\``} |`;
  });
  const count = (effect: string) => SGLANG_FLAGS.filter((f) => f.effect === effect).length;
  return `# SGLang server flags

\`dsv4-kv check\` accepts every server flag of SGLang's launcher (\`sglang serve\`, \`python -m sglang.launch_server\`)
as SGLang spells it, on its own command line, after \`--\` in a pasted launch command, or as a key of \`--config\`.
This table is generated from packages/server-config/src/sglang-flags.ts (the one table the CLI parses with);
regenerate it with \`cd packages/server-config && UPDATE_SGLANG_FLAGS_DOC=1 npx vitest run test/sglang-flags-doc.test.ts\`.

Followed: \`${SGLANG_FLAGS_SOURCE.repository}\`, \`${SGLANG_FLAGS_SOURCE.path}\` at commit
\`${SGLANG_FLAGS_SOURCE.commit}\`: the dataclass fields its \`add_cli_args\` derives flags from, and the flags it
registers by hand (dynamic choices, \`--config\`, deprecated spellings).

Effect: **KV** flags are read into the ServerArgs field shown; **ignored** flags do not change KV state and are listed
in the report with their values; **not modelled** flags can change KV state in SGLang but dsv4-kv does not model
them: they are accepted and listed separately so the figures are not mistaken for covering them.
${count("kv")} KV, ${count("unmodelled")} not modelled, ${count("ignored")} ignored.

Value forms: \`bool\` is a switch (present = true, no value); \`optbool\` also has \`--no-NAME\`; \`int\`, \`float\`,
\`str\` and \`json\` take one word (\`--flag value\` or \`--flag=value\`); \`list (+)\` takes one or more words, \`list (*)\`
zero or more, \`str (?)\` an optional word. SGLang's parser also takes any unambiguous prefix of a flag; dsv4-kv
accepts only \`--tp\` and \`--dp\` (the short forms SGLang's documentation uses) and refuses other abbreviations, so
that a typo gets a suggestion instead of silently meaning a longer flag.

| flag (aliases) | value | effect | field |
|---|---|---|---|
${rows.join("\n")}

## The server arguments the check models

Generated from packages/server-config/src/server-flags.ts, the one definition of each: its range (what the flag
accepts; \`parseServerArgs\` applies it too, except where a start-up rule reports the value in its own words), its
default in the library (\`unset\`: the resolution fills it in and says why), what it touches, and the environment
variable SGLang reads it from.

| flag | field | range | default | touches | environment |
|---|---|---|---|---|---|
${argumentRows().join("\n")}
`;
}

describe("docs/reference/sglang-flags.md", () => {
  it("is generated from the flag table", () => {
    const text = render();
    if (process.env.UPDATE_SGLANG_FLAGS_DOC === "1") writeFileSync(DOC, text);
    expect(readFileSync(DOC, "utf8")).toBe(text);
  });
});

describe("SGLANG_FLAGS", () => {
  it("has one entry per spelling, and every KV flag names a ServerArgs field", () => {
    const spellings = SGLANG_FLAGS.flatMap((f) => [f.name, ...f.aliases]);
    expect(new Set(spellings).size).toBe(spellings.length);
    for (const f of SGLANG_FLAGS) {
      if (f.effect === "kv") expect(Object.keys(ServerArgsSchema.shape), f.name).toContain(f.field);
      else expect(f.field, f.name).toBeNull();
    }
  });

  it("looks up aliases and --no- forms", () => {
    expect(sglangFlag("tp")?.name).toBe("tp-size");
    expect(sglangFlag("tensor-parallel-size")?.name).toBe("tp-size");
    expect(sglangFlag("ep")?.field).toBe("epSize");
    expect(sglangFlag("model")?.name).toBe("model-path");
    expect(sglangFlag("no-dllm-fdfo")?.name).toBe("dllm-fdfo");
    expect(sglangFlag("no-host")).toBeUndefined();
    expect(sglangFlag("speculative-num-draft-token")).toBeUndefined();
  });
});
