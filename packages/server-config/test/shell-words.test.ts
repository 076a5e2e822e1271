// One POSIX tokeniser for every launch command: strict for a pasted command (the CLI), lenient for a logged one.
import { describe, expect, it } from "vitest";
import { shellWords } from "../src/index.js";

describe("shellWords", () => {
  it("splits as a POSIX shell in both modes", () => {
    const text = `a 'b c' "d \\"e\\"" f\\ g \\\n h`;
    for (const mode of ["strict", "lenient"] as const)
      expect(shellWords(text, mode)).toEqual({ words: ["a", "b c", 'd "e"', "f g", "h"] });
  });
  it("strict reads comments and refuses what needs a shell; lenient keeps it as text", () => {
    expect(shellWords("a # note\nb", "strict")).toEqual({ words: ["a", "b"] });
    expect(shellWords("a # note", "lenient")).toEqual({ words: ["a", "#", "note"] });
    expect(shellWords("--model $M", "strict")).toEqual({
      refused: { token: "$M", why: "a variable or command substitution" },
    });
    expect(shellWords("--model $M", "lenient")).toEqual({ words: ["--model", "$M"] });
    expect(shellWords("a | b", "strict")).toMatchObject({ refused: { why: "a pipe, redirection, list or subshell" } });
  });
  it("an unclosed quote is reported in both, naming the quote", () => {
    expect(shellWords(`a "b`, "lenient")).toMatchObject({ refused: { unclosed: '"' } });
    expect(shellWords("a 'b", "strict")).toMatchObject({
      refused: { why: "an unbalanced single quote", unclosed: "'" },
    });
  });
});
