// docs/cli.md is generated from the command tables; this fails when they drift apart.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { CHECK_HELP_FLAGS } from "../src/check/flags.js";
import { VLLM_ALL_FLAGS } from "../src/check/vllm/flags.js";
import { renderCliDoc } from "./render-cli-doc.js";

const DOC = fileURLToPath(new URL("../../../docs/cli.md", import.meta.url));

test("docs/cli.md matches the command tables (UPDATE_CLI_DOC=1 regenerates it)", async () => {
  const doc = await renderCliDoc();
  if (process.env.UPDATE_CLI_DOC) writeFileSync(DOC, doc);
  expect(readFileSync(DOC, "utf8")).toBe(doc);
});

test("docs/cli.md lists every flag of check's table, --engine among them", async () => {
  const doc = await renderCliDoc();
  for (const name of Object.keys(CHECK_HELP_FLAGS)) expect(doc).toContain(`\`--${name}`);
});

test("docs/cli.md's check --engine vllm section lists every flag of the vLLM table", async () => {
  const doc = await renderCliDoc();
  const vllm = doc.slice(doc.indexOf("## `dsv4-kv check --engine vllm`"));
  for (const name of Object.keys(VLLM_ALL_FLAGS)) expect(vllm).toContain(`| \`--${name}`);
});
