// Build step: writes check-report.schema.json (the published JSON Schema of `dsv4-kv check --json`) from the zod
// schema in the freshly built dist. test/report-schema.test.ts fails when the committed file drifts.
import { writeFileSync } from "node:fs";
import { checkReportJsonSchema } from "../dist/index.js";

const LINE_WIDTH = 120;

/** JSON.stringify's layout with arrays of scalars on one line when they fit, as Biome formats JSON. */
function format(value) {
  return JSON.stringify(value, null, 2).replace(
    /^( *)(.*)\[\n((?: *[^\n[\]{}]+\n)+) *\]/gm,
    (whole, indent, head, body) => {
      const items = body
        .split("\n")
        .filter(Boolean)
        .map((line) => line.trim().replace(/,$/, ""));
      const line = `${indent}${head}[${items.join(", ")}]`;
      return line.length + 1 <= LINE_WIDTH ? line : whole;
    },
  );
}

const target = new URL("../check-report.schema.json", import.meta.url);
writeFileSync(target, `${format(checkReportJsonSchema())}\n`);
