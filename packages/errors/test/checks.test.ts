import { describe, expect, test } from "vitest";
import { FieldError, fieldChecks, isRecord, typeOf } from "../src/internal.js";

class KitError extends FieldError {
  static override readonly kind = "KitError";
}
const kit = fieldChecks(KitError);

/** The thrown error's data, or "no error". */
function refusal(fn: () => void): unknown {
  try {
    fn();
    return "no error";
  } catch (e) {
    expect(KitError.isInstance(e)).toBe(true);
    const { code, field, value, rule, params } = e as KitError;
    return { code, field, value, rule, params };
  }
}

describe("fieldChecks: checks that throw the package's error class", () => {
  test("check throws the class with the data given, only when not ok", () => {
    expect(refusal(() => kit.check(true, "INVALID_ARGUMENT", "x", 1, "must be 0"))).toBe("no error");
    expect(refusal(() => kit.check(false, "INVALID_ARGUMENT", "x", 1, "must be 0", { max: 0 }))).toEqual({
      code: "INVALID_ARGUMENT",
      field: "x",
      value: 1,
      rule: "must be 0",
      params: { max: 0 },
    });
  });

  test("checkNumber and checkBoolean refuse other types (a string is never coerced)", () => {
    expect(refusal(() => kit.checkNumber(Number.NaN, "n"))).toBe("no error");
    expect(refusal(() => kit.checkNumber("3", "n"))).toMatchObject({
      code: "INVALID_TYPE",
      field: "n",
      rule: "must be a number (got string)",
    });
    expect(refusal(() => kit.checkBoolean(false, "b"))).toBe("no error");
    expect(refusal(() => kit.checkBoolean("true", "b"))).toMatchObject({
      code: "INVALID_TYPE",
      rule: "must be true or false (got string)",
    });
  });

  test("checkObject takes a plain record only: null, arrays and typed arrays are INVALID_TYPE naming their type", () => {
    expect(refusal(() => kit.checkObject({}, "opts"))).toBe("no error");
    expect(refusal(() => kit.checkObject(Object.create(null), "opts"))).toBe("no error");
    for (const [value, type] of [
      [null, "null"],
      [[], "array"],
      [new Float32Array(2), "Float32Array"],
      [new DataView(new ArrayBuffer(1)), "DataView"],
      ["{}", "string"],
      [undefined, "undefined"],
    ] as const) {
      expect(refusal(() => kit.checkObject(value, "opts"))).toEqual({
        code: "INVALID_TYPE",
        field: "opts",
        value,
        rule: `must be an object (got ${type})`,
        params: {},
      });
      expect(isRecord(value)).toBe(false);
    }
  });

  test("checkKeys refuses an unknown key at field.key, with a suggestion when one is close", () => {
    expect(refusal(() => kit.checkKeys({ seqLen: 1 }, ["seqLen", "rows"], "batch"))).toBe("no error");
    expect(refusal(() => kit.checkKeys({ seqLne: 1 }, ["seqLen", "rows"], "batch"))).toEqual({
      code: "UNKNOWN_KEY",
      field: "batch.seqLne",
      value: "seqLne",
      rule: "must be one of seqLen, rows",
      params: { known: ["seqLen", "rows"], suggestion: "seqLen" },
    });
    expect(refusal(() => kit.checkKeys({ zzzzzz: 1 }, ["rows"], ""))).toMatchObject({
      field: "zzzzzz",
      params: { known: ["rows"] },
    });
  });

  test("checkMethods names the first missing method and its type", () => {
    const ok = { a() {}, b() {} };
    expect(refusal(() => kit.checkMethods(ok, ["a", "b"], "backend", "must be a method"))).toBe("no error");
    expect(refusal(() => kit.checkMethods({ a() {}, b: 3 }, ["a", "b"], "backend", "must be a method"))).toEqual({
      code: "INVALID_TYPE",
      field: "backend.b",
      value: "number",
      rule: "must be a method",
      params: {},
    });
  });

  test("checkInt: a non-number is INVALID_TYPE, a number outside [lo, hi] or not an integer the code given", () => {
    expect(refusal(() => kit.checkInt(3, 0, 3, "n"))).toBe("no error");
    expect(refusal(() => kit.checkInt("3", 0, 3, "n"))).toMatchObject({ code: "INVALID_TYPE", field: "n" });
    expect(refusal(() => kit.checkInt(4, 0, 3, "n"))).toEqual({
      code: "INVALID_ARGUMENT",
      field: "n",
      value: 4,
      rule: "must be an integer in [0, 3]",
      params: { min: 0, max: 3 },
    });
    expect(refusal(() => kit.checkInt(1.5, 0, 3, "n", "must be a slot", "REQ_INDEX"))).toEqual({
      code: "REQ_INDEX",
      field: "n",
      value: 1.5,
      rule: "must be a slot",
      params: { min: 0, max: 3 },
    });
  });

  test("checkOneOf: the code by the value's type unless given; a suggestion only for a misspelt name", () => {
    expect(refusal(() => kit.checkOneOf("bf16", ["fp32", "bf16"], "dtype"))).toBe("no error");
    expect(refusal(() => kit.checkOneOf("bf61", ["fp32", "bf16"], "dtype"))).toEqual({
      code: "INVALID_ARGUMENT",
      field: "dtype",
      value: "bf61",
      rule: "must be one of fp32, bf16",
      params: { known: ["fp32", "bf16"], suggestion: "bf16" },
    });
    expect(refusal(() => kit.checkOneOf("4", [4, 128], "ratio"))).toEqual({
      code: "INVALID_TYPE",
      field: "ratio",
      value: "4",
      rule: "must be one of 4, 128",
      params: { known: [4, 128] },
    });
    expect(refusal(() => kit.checkOneOf(8, [4, 128], "ratio"))).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(refusal(() => kit.checkOneOf(8, ["a"], "kind", "STATE_DTYPE"))).toMatchObject({ code: "STATE_DTYPE" });
  });

  test("typeOf names null, arrays and typed arrays apart from typeof", () => {
    expect([null, [], new Float32Array(1), 1, "s", undefined].map(typeOf)).toEqual([
      "null",
      "array",
      "Float32Array",
      "number",
      "string",
      "undefined",
    ]);
  });
});
