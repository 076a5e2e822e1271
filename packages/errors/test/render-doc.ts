import { ERROR_CODES } from "../src/codes.js";

/** docs/errors.md as the code table says it. */
export function renderErrorsDoc(): string {
  const lines = [
    "# Error codes",
    "",
    "Every error dsv4-kv throws is a `Dsv4KvError` (from `@dsv4-kv/errors`) or a subclass of it, carrying a",
    "stable `code`, the `field` at fault, the `value` given, the `rule` it broke and structured `params`.",
    "`Dsv4KvError.isInstance(e)` and each subclass's `isInstance` work across duplicate package copies.",
    "`toJSON()` gives the same fields as plain JSON; the CLI prints it under `--json`. Messages are built from",
    "those fields in one place; no code decides anything on a message.",
    "",
    "This page is generated from `packages/errors/src/codes.ts`; a test fails when they differ",
    "(regenerate with `UPDATE_ERRORS_DOC=1 pnpm --filter @dsv4-kv/errors test`).",
    "",
    "| code | raised by | meaning | fix |",
    "|---|---|---|---|",
  ];
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    const owner = info.owner === "*" ? "several packages" : `\`${info.owner}\``;
    lines.push(`| \`${code}\` | ${owner} | ${cell(info.summary)} | ${cell(info.fix)} |`);
  }
  return `${lines.join("\n")}\n`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}
