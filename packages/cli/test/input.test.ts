// JSON input bounds: size before reading it all, depth by an iterative scan before JSON.parse.
import { Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import { InputError } from "../src/commands/args.js";
import { MAX_INPUT_DEPTH, firstTooDeep, readJsonInput } from "../src/commands/input.js";

const stdin = (text: string | Buffer) => Readable.from([Buffer.from(text)]);

async function refusal(text: string, limits = { maxBytes: 1 << 20, maxDepth: MAX_INPUT_DEPTH }): Promise<InputError> {
  try {
    await readJsonInput({ field: "stdin" }, stdin(text), limits);
  } catch (error) {
    expect(InputError.isInstance(error)).toBe(true);
    return error as InputError;
  }
  throw new Error("accepted");
}

describe("readJsonInput", () => {
  test("parses JSON as given", async () => {
    const text = '{"useReqRing":"false","a":[1,{"b":"]]]"}]}';
    expect(await readJsonInput({ field: "stdin" }, stdin(text))).toEqual(JSON.parse(text));
  });

  test("10,000-deep nesting is refused before any recursive parse, with the limit", async () => {
    const e = await refusal(`${"[".repeat(10_000)}${"]".repeat(10_000)}`);
    expect(e).toMatchObject({ code: "INPUT", field: "stdin", params: { maxDepth: 64, byteOffset: 64 } });
    expect(e.message).toMatch(/nests deeper than 64 levels/);
    const ok = `${"[".repeat(64)}${"]".repeat(64)}`;
    expect(await readJsonInput({ field: "stdin" }, stdin(ok))).toBeDefined();
  });

  test("brackets inside strings (and escaped quotes) do not count", () => {
    expect(firstTooDeep(Buffer.from(`["${"[".repeat(100)}", "\\"${"{".repeat(100)}"]`), 2)).toBe(-1);
    expect(firstTooDeep(Buffer.from("[[[ ]]]"), 2)).toBe(2);
  });

  test("input over the size limit is refused while reading, before parsing", async () => {
    const e = await refusal(" ".repeat(2000), { maxBytes: 1000, maxDepth: 64 });
    expect(e).toMatchObject({ code: "INPUT", field: "stdin", params: { maxBytes: 1000 } });
  });

  test("text that is not JSON: the parser's position, and no echo of a long input", async () => {
    const e = await refusal("{not json");
    expect(e.message).toMatch(/^stdin: is not JSON: .*position 1/);
    const long = await refusal(`"${"x".repeat(50_000)}`);
    expect(long.message.length).toBeLessThan(400);
  });

  test("a file that cannot be read names --input and the errno", async () => {
    await expect(readJsonInput({ field: "--input", path: "/nonexistent/cases.json" }, stdin(""))).rejects.toMatchObject(
      { code: "INPUT", field: "--input", params: { errno: "ENOENT" } },
    );
  });
});
