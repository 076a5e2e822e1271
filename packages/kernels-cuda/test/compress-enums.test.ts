/**
 * COMPRESS_ERR and COMPRESS_KERNEL mirror the ErrCode and KernelId enums of native/compress/compress_kernels.cuh
 * (the kernels write those numbers into the error word): the header is parsed here, so a code added, removed or
 * renumbered on either side fails. CPU-side only.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { COMPRESS_ERR, COMPRESS_KERNEL, COMPRESS_STATE_TYPE } from "../src/internal.js";

const header = readFileSync(new URL("../native/compress/compress_kernels.cuh", import.meta.url), "utf8");

/** `enum Name : int32_t { kPrefixFoo = 1, ... };` as [name without prefix, lower camel case] -> value. */
function parseEnum(source: string, name: string, prefix: string): Record<string, number> {
  const body = new RegExp(`enum ${name} : int32_t \\{([\\s\\S]*?)\\};`).exec(source)?.[1];
  if (body === undefined) throw new Error(`enum ${name} not found`);
  const out: Record<string, number> = {};
  for (const raw of body.replace(/\/\/.*$/gm, "").split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const m = new RegExp(`^${prefix}(\\w+) = (\\d+)$`).exec(item);
    if (!m) throw new Error(`enum ${name}: cannot read "${item}"`);
    out[m[1]!.charAt(0).toLowerCase() + m[1]!.slice(1)] = Number(m[2]);
  }
  return out;
}

describe("the compress enums have one source, the contract header", () => {
  test("COMPRESS_ERR = ErrCode", () => {
    expect(COMPRESS_ERR).toEqual(parseEnum(header, "ErrCode", "kErr"));
  });
  test("COMPRESS_KERNEL = KernelId", () => {
    expect(COMPRESS_KERNEL).toEqual(parseEnum(header, "KernelId", "kK"));
  });
  test("COMPRESS_STATE_TYPE = StateType", () => {
    const st = parseEnum(header, "StateType", "k");
    expect(st).toEqual({ f32: 0, bF16: 1 });
    expect(COMPRESS_STATE_TYPE).toEqual({ fp32: st.f32, bf16: st.bF16 });
  });
  test("a code added to the header is seen (so the equality above fails)", () => {
    const fake = header.replace(/(kErrWriteRagged = 6,.*\n)/, "$1  kErrFake = 7,  // a code with no TS name\n");
    expect(fake).not.toBe(header);
    expect(parseEnum(fake, "ErrCode", "kErr")).toMatchObject({ fake: 7 });
  });
  test("an entry the parser does not understand is an error, not a skipped code", () => {
    expect(() => parseEnum(header.replace("kErrBufferLen = 2,", "kErrBufferLen = 0x2,"), "ErrCode", "kErr")).toThrow();
  });
});
