import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { Dsv4KvError, ERROR_CODES, formatMessage, isErrorCode } from "../src/index.js";
import { closestMatch, formatValue } from "../src/internal.js";
import { renderErrorsDoc } from "./render-doc.js";

class PlannerLikeError extends Dsv4KvError {
  static override readonly kind = "PlannerLikeError";
}
class OtherError extends Dsv4KvError {
  static override readonly kind = "OtherError";
}

describe("Dsv4KvError", () => {
  test("carries code, field, value, rule and params; the message is built from them", () => {
    const e = new PlannerLikeError({ code: "EXTEND_LEN", field: "extendLens[2]", value: -1, rule: "must be >= 0" });
    expect(e.message).toBe("extendLens[2] = -1: must be >= 0");
    expect(e.name).toBe("PlannerLikeError");
    expect(e.toJSON()).toEqual({
      name: "PlannerLikeError",
      code: "EXTEND_LEN",
      field: "extendLens[2]",
      value: -1,
      rule: "must be >= 0",
      params: {},
      message: "extendLens[2] = -1: must be >= 0",
    });
  });

  test("isInstance works through the brand, per subclass, across copies", () => {
    const e = new PlannerLikeError({ code: "INVALID_RING", field: "ringSize", value: 7, rule: "r" });
    expect(Dsv4KvError.isInstance(e)).toBe(true);
    expect(PlannerLikeError.isInstance(e)).toBe(true);
    expect(OtherError.isInstance(e)).toBe(false);
    expect(Dsv4KvError.isInstance(new Error("x"))).toBe(false);
    expect(Dsv4KvError.isInstance(null)).toBe(false);
    // A copy from another build of the package: same brand symbol, other class objects.
    const foreign = Object.assign(Object.create(Error.prototype), {
      [Symbol.for("dsv4-kv.error")]: true,
      kinds: ["Dsv4KvError", "PlannerLikeError"],
    });
    expect(PlannerLikeError.isInstance(foreign)).toBe(true);
    expect(OtherError.isInstance(foreign)).toBe(false);
  });

  test("a suggestion in params ends the message", () => {
    const data = { field: "use_req_ring", value: true, rule: "unknown key", params: { suggestion: "useReqRing" } };
    expect(formatMessage(data)).toBe('use_req_ring = true: unknown key (did you mean "useReqRing"?)');
  });

  test("toJSON is JSON-safe: bigints, infinities, nested errors", () => {
    const inner = new OtherError({ code: "SHAPE", field: "a", value: 10n, rule: "r" });
    const e = new PlannerLikeError({
      code: "CAPACITY",
      field: "",
      value: Number.POSITIVE_INFINITY,
      rule: "two errors",
      params: { errors: [inner] },
    });
    const json = JSON.parse(JSON.stringify(e));
    expect(json.value).toBe("Infinity");
    expect(json.params.errors[0].value).toBe("10n");
    expect(json.message).toBe("two errors");
  });
});

describe("formatValue", () => {
  test("echoes at most 100 characters of a value", () => {
    const huge = "x".repeat(50_000_000);
    const shown = formatValue(huge);
    expect(shown.length).toBeLessThanOrEqual(120);
    expect(shown).toContain("(50000002 chars)");
    expect(formatValue(Array.from({ length: 1000 }, (_, i) => i))).toMatch(
      /^\[0, 1, 2, 3, 4, 5, 6, 7, … \(1000 items\)\]$/,
    );
    expect(formatValue(new Int32Array([1, 2]))).toBe("Int32Array[1, 2]");
    expect(formatValue(5n)).toBe("5n");
    expect(formatValue({ a: 1 })).toBe('{"a":1}');
  });
});

describe("closestMatch", () => {
  test("suggests the nearest known name, ignoring case and -/_", () => {
    expect(closestMatch("use_req_ring", ["useReqRing", "seqLens"])).toBe("useReqRing");
    expect(closestMatch("--speculative-num-draft-token", ["speculative-num-draft-tokens", "tp-size"])).toBe(
      "speculative-num-draft-tokens",
    );
    expect(closestMatch("zzzzzz", ["seqLens"])).toBeNull();
  });
});

describe("the code table", () => {
  test("isErrorCode knows every code and nothing else", () => {
    for (const code of Object.keys(ERROR_CODES)) expect(isErrorCode(code)).toBe(true);
    expect(isErrorCode("toString")).toBe(false);
    expect(isErrorCode("NOPE")).toBe(false);
  });

  test("docs/errors.md is generated from it", () => {
    const path = fileURLToPath(new URL("../../../docs/errors.md", import.meta.url));
    const expected = renderErrorsDoc();
    if (process.env.UPDATE_ERRORS_DOC === "1") writeFileSync(path, expected);
    expect(readFileSync(path, "utf8")).toBe(expected);
  });
});
