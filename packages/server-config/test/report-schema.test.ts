// The `dsv4-kv check --json` contract: the committed JSON Schema is the zod schema's, real reports validate
// against it with a JSON Schema validator (ajv, draft 2020-12), and an undocumented field fails.
import { readFileSync } from "node:fs";
import type { ErrorCode } from "@dsv4-kv/errors";
import type { RingAdvice, SizingResult } from "@dsv4-kv/memory-pool";
import type { ResidencyProofStatus } from "@dsv4-kv/planner";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import {
  CHECK_REPORT_SCHEMA_VERSION,
  type CheckReportJson,
  type ConfigIssue,
  type ConfigNote,
  type DerivedValues,
  type RuleId,
  type ServerArgs,
  MODEL_PRESETS,
  checkReportJson,
  checkReportJsonSchema,
  checkServerConfig,
  parseServerArgs,
} from "../src/index.js";
import type {
  ConfigIssueSchema,
  ConfigNoteSchema,
  DerivedValuesSchema,
  ResidencyProofStatusSchema,
  RingAdviceSchema,
  SizingResultSchema,
} from "../src/report-schema.js";

const SCHEMA_FILE = new URL("../check-report.schema.json", import.meta.url);
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(checkReportJsonSchema());
const flash = MODEL_PRESETS["DeepSeek-V4-Flash"]!;

/** The check's default deployment shape: one rank of 8×H200 TP loading 1/8 of the checkpoint. */
function report(raw: Record<string, unknown>, sizing: "exact" | "sglang-gen-b" = "exact"): unknown {
  const parsed = parseServerArgs({ tpSize: 8, ...raw });
  if (!parsed.ok) throw new Error(parsed.issues.join("; "));
  const budget = { kind: "gpu", gpuMemoryGiB: 139, weightsGiB: flash.checkpointGiB / parsed.args.tpSize } as const;
  // Through JSON text, as a consumer reads it.
  return JSON.parse(JSON.stringify(checkReportJson(checkServerConfig(parsed.args, flash, budget, { sizing }))));
}

function expectValid(value: unknown): CheckReportJson {
  const ok = validate(value);
  expect(validate.errors ?? []).toEqual([]);
  expect(ok).toBe(true);
  return value as CheckReportJson;
}

const EAGLE = { speculativeAlgorithm: "EAGLE", speculativeNumSteps: 3, speculativeEagleTopk: 1 };
const rulesAndCodes = (issues: CheckReportJson["errors"]) => issues.map((i) => [i.rule, i.code]);

describe("check report JSON Schema", () => {
  it("the committed check-report.schema.json is the zod schema's (rebuild: pnpm build)", () => {
    const committed = JSON.parse(readFileSync(SCHEMA_FILE, "utf8"));
    expect(committed).toEqual(checkReportJsonSchema());
  });

  it("is draft 2020-12, strict at every level, and carries schemaVersion as an integer constant", () => {
    type ObjectSchema = { required: string[]; properties: Record<string, { type?: string; const?: unknown }> };
    // One branch per generation (D44), then the vLLM report (D39); each carries the version.
    const union = checkReportJsonSchema() as { $schema: string; anyOf: ObjectSchema[] };
    expect(union.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(union.anyOf).toHaveLength(3);
    const [schema, v41] = union.anyOf as [ObjectSchema, ObjectSchema];
    expect(schema.required).toContain("schemaVersion");
    expect(v41.required).toEqual(expect.arrayContaining(["schemaVersion", "generation", "sizing"]));
    expect(v41.properties.generation!.const).toBe("V4.1");
    // 2 since reconciliation anchored on logged figures (docs/decisions.md D31): logComparison's figures gained role, derivedFrom and cause, and `match` may be null.
    expect(schema.properties.schemaVersion!.const).toBe(3);
    expect(v41.properties.schemaVersion!.const).toBe(3);
    expect(Number.isInteger(CHECK_REPORT_SCHEMA_VERSION)).toBe(true);
    const objects: Array<Record<string, unknown>> = [];
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== "object") return;
      const o = node as Record<string, unknown>;
      if (o.type === "object" && o.properties !== undefined) objects.push(o);
      for (const child of Object.values(o)) walk(child);
    };
    walk(union);
    expect(objects.length).toBeGreaterThan(10);
    for (const o of objects) expect(o.additionalProperties).toBe(false);
  });
});

describe("real reports validate against the JSON Schema", () => {
  it("the default check (EAGLE 3/1/4): valid, every pool with id, shape and bytes, the proof of each ring", () => {
    const r = expectValid(report(EAGLE));
    expect(r.schemaVersion).toBe(3);
    expect(r.ok).toBe(true);
    expect(r.sizing!.stages[0]!.pools.map((p) => p.id)).toContain("c4-indexer-k");
    expect(r.residency.find((c) => c.ratio === 4)!.proof!.status).toBe("proved");
  });

  it("an invalid configuration: every error with its rule id, code and params", () => {
    const r = expectValid(report({ ...EAGLE, tpSize: 1, kvCacheDtype: "bf16" }));
    expect(r.ok).toBe(false);
    expect(rulesAndCodes(r.errors)).toEqual([
      ["V-A3", "UNSUPPORTED_ARGUMENT"],
      ["V-M1", "NO_MEMORY"],
    ]);
    expect(r.errors[1]!.params).toMatchObject({ memFractionStatic: 0.85 });
  });

  it("a configuration with warnings: speculative arguments without an algorithm (V-S0)", () => {
    const r = expectValid(report({ speculativeNumSteps: 3 }));
    expect(r.ok).toBe(true);
    expect(rulesAndCodes(r.warnings)).toEqual([["V-S0", "IGNORED_ARGUMENT"]]);
  });

  it("the draft tokens exceeding a ring: the error and the ring-sizing advice", () => {
    const r = expectValid(report({ ...EAGLE, speculativeNumSteps: 11 }));
    expect(r.errors.map((e) => e.rule)).toContain("V-S8");
    expect(r.advice.length).toBeGreaterThan(0);
  });

  it("online c128 with MTP: the c128 ring is skipped, the experimental warning", () => {
    const r = expectValid(report({ ...EAGLE, onlineCompress: true, onlineC128Mtp: true }));
    expect(r.derived.onlineC128).toBe(true);
    expect(r.residency.find((c) => c.ratio === 128)!.skipped).toMatch(/online/);
    expect(r.residency.find((c) => c.ratio === 128)!.proof).toBeUndefined();
    expect(rulesAndCodes(r.warnings)).toEqual([["V-S7", "EXPERIMENTAL"]]);
  });

  it("non-speculative, upstream's Gen B sizing", () => {
    const r = expectValid(report({}, "sglang-gen-b"));
    expect(r.derived.isSpeculative).toBe(false);
    expect(r.sizing!.mode).toBe("sglang-gen-b");
    expect(r.residency.every((c) => c.skipped !== null)).toBe(true);
  });

  it("a KV budget in bytes too small for one page: no sizing, the V-M2 error", () => {
    const parsed = parseServerArgs({});
    if (!parsed.ok) throw new Error(parsed.issues.join("; "));
    const raw = checkServerConfig(parsed.args, flash, { kind: "bytes", kvBudgetBytes: 1 });
    const r = expectValid(JSON.parse(JSON.stringify(checkReportJson(raw))));
    expect(r.sizing).toBeNull();
    expect(rulesAndCodes(r.errors)).toContainEqual(["V-M2", "NOT_ENOUGH_MEMORY"]);
  });
});

describe("what the caller adds", () => {
  it("the settings it accepted and did not read are listed as ignored", () => {
    const parsed = parseServerArgs({});
    if (!parsed.ok) throw new Error(parsed.issues.join("; "));
    const ignored = [{ name: "--host", value: "0.0.0.0", effect: "ignored" as const }];
    const raw = checkServerConfig(parsed.args, flash, { kind: "bytes", kvBudgetBytes: 40e9 }, { ignored });
    const r = expectValid(JSON.parse(JSON.stringify(checkReportJson(raw))));
    expect(r.ignored).toEqual(ignored);
    expect(r.model.resolvedAs).toBe("DeepSeek-V4-Flash");
  });
});

describe("the schema refuses what it does not document", () => {
  const base = () => report(EAGLE) as Record<string, unknown> & { errors: unknown[]; sizing: { sizes: object } };

  it("an unknown top-level field", () => {
    expect(validate({ ...base(), extra: 1 })).toBe(false);
  });

  it("an unknown nested field (in the capacity)", () => {
    const r = base();
    r.sizing.sizes = { ...r.sizing.sizes, extra: 1 };
    expect(validate(r)).toBe(false);
  });

  it("an issue without its rule id, or with a rule id or code that does not exist", () => {
    const r = report({ ...EAGLE, kvCacheDtype: "bf16" }) as { errors: Array<Record<string, unknown>> };
    const issue = r.errors[0]!;
    const { rule: _rule, ...withoutRule } = issue;
    for (const bad of [withoutRule, { ...issue, rule: "V-Z9" }, { ...issue, code: "NOT_A_CODE" }])
      expect(validate({ ...r, errors: [bad] })).toBe(false);
  });

  it("a schemaVersion other than the integer 3", () => {
    for (const v of [1, 2, 4, "3", 2.5]) expect(validate({ ...base(), schemaVersion: v })).toBe(false);
  });

  it("the draft-token count under its version-2 names (numDraftTokens, maxSpeculativeNumDraftTokens)", () => {
    const r = report(EAGLE) as Record<string, unknown> & { derived: Record<string, unknown> };
    const { draftTokens, maxDraftTokens, ...rest } = r.derived;
    expect([draftTokens, maxDraftTokens]).toEqual([4, 4]);
    expect(validate(r)).toBe(true);
    const old = { ...rest, numDraftTokens: draftTokens, maxSpeculativeNumDraftTokens: maxDraftTokens };
    expect(validate({ ...r, derived: old })).toBe(false);
  });
});

describe("the zod schema's types are the report's types", () => {
  it("every part matches the type its package declares (checked by tsc)", () => {
    expectTypeOf<z.output<typeof SizingResultSchema>>().toEqualTypeOf<SizingResult>();
    expectTypeOf<z.output<typeof RingAdviceSchema>>().toEqualTypeOf<RingAdvice>();
    expectTypeOf<z.output<typeof ResidencyProofStatusSchema>>().toEqualTypeOf<ResidencyProofStatus>();
    expectTypeOf<z.output<typeof DerivedValuesSchema>>().toEqualTypeOf<DerivedValues>();
    expectTypeOf<z.output<typeof ConfigNoteSchema>>().toEqualTypeOf<ConfigNote>();
    expectTypeOf<z.output<typeof ConfigIssueSchema>>().toEqualTypeOf<ConfigIssue>();
    expectTypeOf<CheckReportJson["args"]>().toEqualTypeOf<ServerArgs>();
    expectTypeOf<CheckReportJson["errors"][number]["rule"]>().toEqualTypeOf<RuleId>();
    expectTypeOf<CheckReportJson["errors"][number]["code"]>().toEqualTypeOf<ErrorCode>();
  });
});
