/**
 * The shared host validator: one refusal per plan-row rule (each naming the row, field, value and rule), the rows it
 * must accept, and the shape refusals; the CPU backend refuses the same way before doing any work.
 */
import { CompressPlanTable, DecodePlanTable } from "@dsv4-kv/planner";
import { describe, expect, test } from "vitest";
import { CompressError, CpuCompressBackend, validateDecodeBatch, validatePrefillBatch } from "../src/index.js";
import { BAD_CASES, BAD_INPUT_ROWS, type BadCase, EDGE_OK, badGeometry } from "./bad-plans.js";

function validate(c: BadCase): void {
  if (c.op === "prefill") validatePrefillBatch(badGeometry(c.cr), c.prefill!);
  else validateDecodeBatch(badGeometry(c.cr), c.decode!);
}

function errorOf(fn: () => unknown): CompressError {
  try {
    fn();
  } catch (e) {
    if (CompressError.isInstance(e)) return e as CompressError;
    throw e;
  }
  throw new Error("did not throw");
}

function cpuFor(c: BadCase): CpuCompressBackend {
  const b = new CpuCompressBackend(badGeometry(c.cr));
  b.setApe(new Float32Array((c.cr === 4 ? 8 : 128) * 128));
  b.writeStateRows(0, new Float32Array(b.geometry.stateRows * b.rowElems).fill(0.5));
  return b;
}

describe("plan-row refusals (BAD_PLAN_ROW)", () => {
  for (const c of BAD_CASES) {
    test(`${c.name}: ${c.field} = ${c.value}`, () => {
      const e = errorOf(() => validate(c));
      expect(e.name).toBe("CompressError");
      expect([e.code, e.field, e.value]).toEqual(["BAD_PLAN_ROW", c.field, c.value]);
      expect(e.rule.length).toBeGreaterThan(10);
      expect(e.message).toContain(c.field);
      // The CPU backend raises the same error, before any write of the batch lands.
      const b = cpuFor(c);
      const before = b.readStateBits(0, b.geometry.stateRows);
      const e2 = errorOf(() => (c.op === "prefill" ? b.prefill(c.prefill!) : b.decode(c.decode!)));
      expect(e2.toJSON()).toEqual(e.toJSON());
      expect(b.readStateBits(0, b.geometry.stateRows)).toEqual(before);
    });
  }
  test("the ring rule names the rows read and the bound", () => {
    const e = errorOf(() => validate(BAD_CASES.find((c) => c.field === "planC[0].readPage0" && c.value === 16)!));
    expect(e.rule).toBe("window elements [0, 4) read state rows [64, 67], which must lie in [0, stateRows = 64)");
    expect(e.params).toMatchObject({ row: 0, firstRow: 64, lastRow: 67, stateRows: 64 });
  });
});

describe("rows the rules accept", () => {
  for (const c of EDGE_OK) test(c.name, () => expect(() => validate(c)).not.toThrow());
});

describe("shape refusals", () => {
  const good = BAD_CASES[0]!.prefill!;
  const g = badGeometry(4);
  const cases: [string, () => unknown, string, string][] = [
    [
      "input length",
      () => validatePrefillBatch(g, { ...good, input: new Float32Array(5) }),
      "BUFFER_SHAPE",
      "input.length",
    ],
    [
      "input not a Float32Array",
      () => validatePrefillBatch(g, { ...good, input: [] as never }),
      "INVALID_TYPE",
      "input",
    ],
    [
      "input not finite",
      () => {
        const input = good.input.slice();
        input[3] = Number.NaN;
        return validatePrefillBatch(g, { ...good, input });
      },
      "INVALID_ARGUMENT",
      "input[3]",
    ],
    [
      "inputRows a string",
      () => validatePrefillBatch(g, { ...good, inputRows: "16" as never }),
      "INVALID_TYPE",
      "inputRows",
    ],
    ["inputRows negative", () => validatePrefillBatch(g, { ...good, inputRows: -1 }), "INVALID_ARGUMENT", "inputRows"],
    [
      "planC bytes",
      () => validatePrefillBatch(g, { ...good, planC: new Uint8Array(15) }),
      "PLAN_TABLE",
      "planC.byteLength",
    ],
    [
      "planW bytes",
      () => validatePrefillBatch(g, { ...good, planW: new Uint8Array(12) }),
      "PLAN_TABLE",
      "planW.byteLength",
    ],
    [
      "planC not bytes",
      () => validatePrefillBatch(g, { ...good, planC: new Uint32Array(4) as never }),
      "INVALID_TYPE",
      "planC",
    ],
    ["unknown batch key", () => validatePrefillBatch(g, { ...good, planc: 1 } as never), "UNKNOWN_KEY", "batch.planc"],
    [
      "geometry ratio",
      () => validatePrefillBatch({ ...g, compressRatio: 8 as never }, good),
      "INVALID_ARGUMENT",
      "geometry.compressRatio",
    ],
    [
      "geometry ratio a string",
      () => validatePrefillBatch({ ...g, compressRatio: "4" as never }, good),
      "INVALID_TYPE",
      "geometry.compressRatio",
    ],
    [
      "geometry headDim",
      () => validatePrefillBatch({ ...g, headDim: 256 }, good),
      "INVALID_ARGUMENT",
      "geometry.headDim",
    ],
    [
      "geometry dtype",
      () => validatePrefillBatch({ ...g, stateDtype: "fp16" as never }, good),
      "INVALID_ARGUMENT",
      "geometry.stateDtype",
    ],
    [
      "geometry rows",
      () => validatePrefillBatch({ ...g, stateRows: 0 }, good),
      "INVALID_ARGUMENT",
      "geometry.stateRows",
    ],
    ["geometry key", () => validatePrefillBatch({ ...g, ratio: 4 } as never, good), "UNKNOWN_KEY", "geometry.ratio"],
    [
      "decode rows",
      () =>
        validateDecodeBatch(g, {
          input: new Float32Array(2 * 512),
          planD: DecodePlanTable.allocate(1).bytes,
          batch: 2,
        }),
      "PLAN_TABLE",
      "planD.byteLength",
    ],
    [
      "decode input",
      () =>
        validateDecodeBatch(g, { input: new Float32Array(511), planD: DecodePlanTable.allocate(1).bytes, batch: 1 }),
      "BUFFER_SHAPE",
      "input.length",
    ],
  ];
  for (const [name, fn, code, field] of cases) {
    test(`${name}: ${code} ${field}`, () => {
      const e = errorOf(fn);
      expect([e.code, e.field]).toEqual([code, field]);
    });
  }
  test("an unknown key suggests the known one", () => {
    const e = errorOf(() => validatePrefillBatch(g, { ...good, planc: 1 } as never));
    expect(e.params.suggestion).toBe("planC");
  });
  test("a valid empty batch passes", () => {
    const empty = { input: new Float32Array(0), inputRows: 0, planC: new Uint8Array(0), planW: new Uint8Array(0) };
    expect(validatePrefillBatch(g, empty).numPlanC).toBe(0);
    expect(CompressPlanTable.allocate(0).rowCount).toBe(0);
    expect(BAD_INPUT_ROWS).toBe(16);
  });
});
