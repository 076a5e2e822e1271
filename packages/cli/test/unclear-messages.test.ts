// Unclear refusals: those that named a value the user never gave, the wrong field, or an impossible rule,
// and pasted launch commands whose invisible characters gave ": is not a flag".
import { describe, expect, test } from "vitest";
import { tokenizeCommand } from "../src/check/launch.js";
import { cli } from "./cli-helpers.js";

const LAUNCH = ["check", "--json", "--"];
const SERVER = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V4-Flash"];

describe("pasted launch commands with CRLF line ends and other invisible characters", () => {
  test("one pasted word with CRLF line ends (backslash continuations) reads as with LF", () => {
    const crlf = `${SERVER.join(" ")} \\\r\n  --tp 8 \\\r\n  --speculative-num-draft-tokens 4\r\n`;
    const lf = crlf.replace(/\r/g, "");
    const a = cli([...LAUNCH, crlf]);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual(JSON.parse(cli([...LAUNCH, lf]).stdout));
  });

  test("words a shell split from a CRLF file: a lone CR word and a trailing CR are line ends", () => {
    const r = cli([...LAUNCH, ...SERVER, "\r", "--tp", "8\r"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).ok).toBe(true);
  });

  test("a no-break space is a blank; a zero-width space or a BOM is named with its code point", () => {
    expect(tokenizeCommand("sglang serve\u00a0--tp\u00a08")).toEqual(["sglang", "serve", "--tp", "8"]);
    const zw = cli([...LAUNCH, `${SERVER.join(" ")} --tp 8\u200b`]);
    expect(zw.code).toBe(2);
    expect(zw.stderr).toContain("holds an invisible character, U+200B (ZERO WIDTH SPACE), at character");
    const bom = cli([...LAUNCH, "\ufeffpython3", ...SERVER.slice(1)]);
    expect(bom.stderr).toContain("U+FEFF (BYTE ORDER MARK)");
  });
});

const CASE = { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };
const plan = (extra: Record<string, unknown>) => cli(["plan"], JSON.stringify({ ...CASE, ...extra }));

describe("plan: the field and rule that decide", () => {
  test("tokensPerReq 1e10 names tokensPerReq and int32, not reqPoolIndices < 0", () => {
    const r = plan({ reqToToken: { identity: { tokensPerReq: 1e10 } } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "INT32_OVERFLOW",
      field: "reqToToken.identity.tokensPerReq",
      value: 1e10,
    });
    expect(r.stderr).toContain("must be at most 2147483647: reqToToken holds int32 full-pool locations");
    expect(r.stderr).not.toContain("must be < 0");
  });

  test("useReqRing: 1 is a number, not a string", () => {
    const r = plan({ useReqRing: 1 });
    expect(r.stderr).toContain("useReqRing = 1: must be true or false (a number is not a boolean)");
    expect(plan({ useReqRing: "false" }).stderr).toContain("(a string is not a boolean)");
  });
});

describe("simulate residency on large SWA pages: no refusal of a value the user never gave", () => {
  test.each([
    ["--ring 1048576 --swa-page 1048576", ["--ring", "1048576", "--swa-page", "1048576"]],
    ["--swa-page 65536", ["--ring", "16", "--swa-page", "65536"]],
  ])("%s runs (its initial prefill is chunked)", (_name, flags) => {
    const r = cli(["simulate", "residency", "--ratio", "4", ...flags, "--draft-tokens", "4", "--steps", "50"]);
    expect(r.stderr).not.toMatch(/tokens = \d+: must be in \[1, 65535\]/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/result: clean/);
  });
});
