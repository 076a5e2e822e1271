// The flag-table parser every command uses: one test per refusal class, each naming the flag as typed.
import { Dsv4KvError } from "@dsv4-kv/errors";
import { describe, expect, test } from "vitest";
import { UsageError } from "../src/commands/args.js";
import { type FlagTable, flagValueFromData, parseFlags, rangeHint } from "../src/commands/flags.js";

const TABLE = {
  steps: { type: "int", min: 0, max: 1000, help: "" },
  "weights-gib": { type: "number", min: 0, max: 1024, help: "" },
  "mem-fraction-static": { type: "number", min: 0, max: 1, minExclusive: true, help: "" },
  "chunked-prefill-size": { type: "int", min: -1, max: 100, help: "" },
  backend: { type: "string", choices: ["cpu", "gpu"], help: "" },
  candidates: { type: "intList", min: 1, max: 9, help: "" },
  json: { type: "bool", help: "" },
  requests: { type: "int", min: 1, max: 8, help: "" },
} as const satisfies FlagTable;

function refusal(argv: string[], table: FlagTable = TABLE): UsageError {
  try {
    parseFlags(argv, table);
  } catch (error) {
    expect(UsageError.isInstance(error)).toBe(true);
    return error as UsageError;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
}

describe("parseFlags", () => {
  test("typed values from --name value, --name=value and switches; a negative number is a value", () => {
    const { values, rest } = parseFlags(
      ["--steps", "7", "--weights-gib=1.5", "--json", "--chunked-prefill-size", "-1", "--candidates", "1,3"],
      TABLE,
    );
    expect(values).toEqual({
      steps: 7,
      "weights-gib": 1.5,
      json: true,
      "chunked-prefill-size": -1,
      candidates: [1, 3],
    });
    expect(rest).toEqual([]);
    expect(parseFlags(["--json", "--", "x", "--y"], TABLE).rest).toEqual(["x", "--y"]);
  });

  test("negative where not meaningful", () => {
    const e = refusal(["--weights-gib=-100"]);
    expect(e).toMatchObject({ code: "USAGE", field: "--weights-gib", value: -100, params: { min: 0, max: 1024 } });
    expect(e.message).toBe("--weights-gib = -100: must be in [0, 1024]");
    expect(refusal(["--steps", "-5"]).message).toBe("--steps = -5: must be in [0, 1000]");
  });

  test.each(["0x1", "1e3", "", " 4", "4 ", "+4", "four", "Infinity", "NaN"])("non-decimal integer %j", (raw) => {
    expect(refusal(["--steps", raw])).toMatchObject({ field: "--steps", value: raw, rule: "must be an integer" });
  });

  test.each(["0x1", "", " 0.5", "1/2", "Infinity", "1e999"])("non-decimal number %j", (raw) => {
    expect(refusal([`--mem-fraction-static=${raw}`])).toMatchObject({
      field: "--mem-fraction-static",
      rule: "must be a decimal number",
    });
  });

  test("fractional where an integer is expected", () => {
    expect(refusal(["--steps", "2.5"]).message).toBe('--steps = "2.5": must be an integer');
    expect(refusal(["--steps", "3.0"]).rule).toBe("must be an integer");
  });

  test("out of range, both ends, and an exclusive minimum", () => {
    expect(refusal(["--steps", "1001"]).message).toBe("--steps = 1001: must be in [0, 1000]");
    expect(refusal(["--mem-fraction-static", "0"]).message).toBe("--mem-fraction-static = 0: must be in (0, 1]");
    expect(refusal(["--mem-fraction-static", "1.01"]).field).toBe("--mem-fraction-static");
    expect(refusal(["--steps", "99999999999999999999"]).rule).toBe("must be an integer");
    expect(refusal(["--candidates", "1,0"]).field).toBe("--candidates");
  });

  test("an unknown flag, with a did-you-mean", () => {
    const e = refusal(["--step", "4"]);
    expect(e).toMatchObject({ code: "USAGE", field: "--step", params: { suggestion: "--steps" } });
    expect(e.message).toBe('--step: is not a flag of this command (did you mean "--steps"?)');
    expect(refusal(["--zzzzzzzz"]).params.suggestion).toBeUndefined();
    expect(refusal(["stray"]).field).toBe("stray");
    expect(refusal(["--toString"]).field).toBe("--toString");
  });

  test("a missing value", () => {
    expect(refusal(["--steps"]).message).toBe("--steps: needs a value");
    expect(refusal(["--steps", "--json"]).field).toBe("--steps");
  });

  test("a switch given a value, a choice outside its set", () => {
    expect(refusal(["--json=false"]).message).toBe('--json = "false": is a switch and takes no value');
    expect(refusal(["--backend", "gpux"])).toMatchObject({ field: "--backend", params: { suggestion: "gpu" } });
  });

  test("a required flag", () => {
    const table = { requests: { type: "int", min: 1, max: 8, required: true, help: "" } } as const;
    expect(refusal([], table).message).toBe("--requests: is required");
  });

  test("config-file data is typed by its file and never coerced from a string", () => {
    expect(flagValueFromData("steps", TABLE.steps, 4)).toBe(4);
    expect(() => flagValueFromData("steps", TABLE.steps, "4")).toThrow(UsageError);
    expect(() => flagValueFromData("json", TABLE.json, "false")).toThrow(/must be true or false/);
    expect(() => flagValueFromData("steps", TABLE.steps, 4.5)).toThrow(/must be an integer/);
    expect(() => flagValueFromData("weights-gib", TABLE["weights-gib"], -1)).toThrow(/must be in \[0, 1024\]/);
  });

  test("config-file data: a list of integers is a list, never a comma-separated string", () => {
    expect(flagValueFromData("candidates", TABLE.candidates, [1, 3, 5])).toEqual([1, 3, 5]);
    const error = (() => {
      try {
        flagValueFromData("candidates", TABLE.candidates, "1,3,5");
      } catch (e) {
        return e;
      }
    })();
    expect(UsageError.isInstance(error)).toBe(true);
    expect((error as UsageError).toJSON()).toMatchObject({
      code: "USAGE",
      field: "candidates",
      value: "1,3,5",
      rule: "must be a list of integers",
    });
  });

  test("an integer flag with choices: typed as a number, other integers in range refused, help lists the choices", () => {
    const spec = { type: "int", min: 128, max: 512, choices: [128, 512], help: "" } as const;
    const table = { "head-dim": spec } as const satisfies FlagTable;
    expect(parseFlags(["--head-dim", "128"], table).values["head-dim"]).toBe(128);
    const e = refusal(["--head-dim", "256"], table);
    expect(e.toJSON()).toMatchObject({ field: "--head-dim", value: 256, rule: "must be one of 128, 512" });
    expect(() => flagValueFromData("headDim", spec, 256)).toThrowError(expect.objectContaining({ field: "headDim" }));
    expect(flagValueFromData("headDim", spec, 512)).toBe(512);
    expect(rangeHint(spec)).toBe("128, 512");
  });

  test("a UsageError is a Dsv4KvError, recognised by brand", () => {
    const e = refusal(["--steps", "x"]);
    expect(Dsv4KvError.isInstance(e)).toBe(true);
    expect(e.name).toBe("UsageError");
    expect(e.toJSON()).toMatchObject({ code: "USAGE", field: "--steps", value: "x" });
  });
});
