// main() in process: how failures are shown, and the curated root export.
import { PassThrough, Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import * as api from "../src/index.js";
import { describeError, main } from "../src/main.js";
import { UsageError } from "../src/commands/args.js";

function io(stdin: NodeJS.ReadableStream = Readable.from([])) {
  const out = { stdout: "", stderr: "" };
  const sink = (key: "stdout" | "stderr") => {
    const s = new PassThrough();
    s.on("data", (d: Buffer) => {
      out[key] += d.toString();
    });
    return s;
  };
  return { out, io: { stdout: sink("stdout"), stderr: sink("stderr"), stdin, env: {} } };
}

describe("main", () => {
  test("a failure that is not a dsv4-kv error is one 'internal error' line, exit 2, no stack", async () => {
    const broken = new Readable({
      read() {
        this.destroy(new TypeError("boom"));
      },
    });
    const { out, io: streams } = io(broken);
    expect(await main(["plan"], streams)).toBe(2);
    expect(out.stderr).toMatch(/^dsv4-kv plan: internal error \(TypeError\)/);
    expect(out.stderr).not.toMatch(/\n\s+at /);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("describeError: a dsv4-kv error by its message (brand, not instanceof); anything else without a stack", () => {
    const e = new UsageError("--steps", "x", "must be an integer");
    expect(describeError(e)).toBe('--steps = "x": must be an integer');
    const otherCopy = Object.assign(new Error("--x = 1: rule"), { [Symbol.for("dsv4-kv.error")]: true, kinds: [] });
    expect(describeError(otherCopy)).toBe("--x = 1: rule");
    expect(describeError(new Error("secret detail"))).toMatch(/^internal error \(Error\)/);
    expect(describeError(new RangeError("Maximum call stack size exceeded"))).not.toMatch(/call stack|\n/);
  });

  test("a usage error names the flag and points at the command's help", async () => {
    const { out, io: streams } = io();
    expect(await main(["check", "--tp-size=0x2"], streams)).toBe(2);
    expect(out.stderr).toBe('dsv4-kv check: --tp-size = "0x2": must be an integer (see dsv4-kv check --help)\n');
  });

  test("the root export is the programmatic entry only", () => {
    expect(Object.keys(api)).toEqual(["main"]);
  });
});
