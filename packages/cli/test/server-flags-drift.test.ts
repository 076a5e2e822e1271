/**
 * check's table of server flags (help, ranges) restates the server arguments; this test keeps it in step with the
 * two sources it restates: every entry names a field of server-config's ServerArgsSchema, and every SGLang flag the
 * flag table marks as changing KV state has an entry (so its help and range checks exist).
 */
import { SGLANG_FLAGS, ServerArgsSchema } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { SERVER_FLAGS } from "../src/check/flags.js";

const camel = (kebab: string): string => kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const fields = new Set(Object.keys(ServerArgsSchema.shape));

describe("check's server-flag table and its sources", () => {
  it("every entry sets a ServerArgs field", () => {
    const orphans = Object.keys(SERVER_FLAGS).filter((flag) => !fields.has(camel(flag)));
    expect(orphans).toEqual([]);
  });

  it("every ServerArgs field an SGLang flag sets has an entry (its help and range checks)", () => {
    const covered = new Set(Object.keys(SERVER_FLAGS).map(camel));
    const missing = SGLANG_FLAGS.filter((f) => f.effect === "kv" && f.field !== null && !covered.has(f.field)).map(
      (f) => `--${f.name} → ${f.field}`,
    );
    expect(missing).toEqual([]);
  });
});
