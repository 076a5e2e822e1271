import { describe, expect, test } from "vitest";
import { FieldError, fieldChecks, typeOf } from "../src/index.js";

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
