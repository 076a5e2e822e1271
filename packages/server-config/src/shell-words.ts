/**
 * Words of a command line as a POSIX shell splits them: blanks separate words, single quotes are literal, double
 * quotes allow `\` before `$ \` " \\` and newline, a backslash outside quotes escapes the next character and
 * backslash-newline continues the line. One tokeniser for every launch command dsv4-kv reads, in two modes:
 *
 * - `strict` (a command the user pastes into the CLI): `#` at a word's start comments to the end of the line, and
 *   what needs a shell to run (expansions, substitutions, pipes, redirections, lists), a trailing backslash or an
 *   unbalanced quote is a refusal naming the token and why.
 * - `lenient` (a command shown in a log, which shows what ran): `$X` and the rest are kept as text; only an unclosed
 *   quote is reported.
 */
export type ShellWordsResult = { words: string[] } | { refused: { token: string; why: string; unclosed?: string } };

const SPECIAL = new Set(["|", "&", ";", "<", ">", "(", ")", "`"]);
const BLANK = /\s/;

interface Cursor {
  text: string;
  i: number;
  word: string;
  strict: boolean;
}

type Refusal = { token: string; why: string; unclosed?: string };

/** A double-quoted string from the quote at `c.i`; the cursor ends on the closing quote. */
function doubleQuoted(c: Cursor): Refusal | null {
  const { text } = c;
  let j = c.i + 1;
  for (; j < text.length && text[j] !== '"'; j++) {
    const d = text[j]!;
    const escapes = c.strict ? '$`"\\\n' : '$`"\\';
    if (d === "\\" && j + 1 < text.length && escapes.includes(text[j + 1]!)) {
      if (text[j + 1] !== "\n") c.word += text[j + 1];
      j++;
    } else if (c.strict && (d === "$" || d === "`"))
      return { token: text.slice(j, j + 20), why: "an expansion inside double quotes" };
    else c.word += d;
  }
  if (j >= text.length) return { token: text.slice(c.i, c.i + 20), why: "an unbalanced double quote", unclosed: '"' };
  c.i = j;
  return null;
}

/** What the character at `c.i` does outside quotes in strict mode, if it ends or refuses (else null). */
function strictOnly(c: Cursor, inWord: boolean): Refusal | "comment" | null {
  const ch = c.text[c.i]!;
  if (ch === "#" && !inWord) return "comment";
  if (ch === "$")
    return { token: c.text.slice(c.i, c.i + 20).split(/\s/)[0]!, why: "a variable or command substitution" };
  if (SPECIAL.has(ch))
    return { token: c.text.slice(c.i, c.i + 2).trim(), why: "a pipe, redirection, list or subshell" };
  return null;
}

export function shellWords(text: string, mode: "strict" | "lenient"): ShellWordsResult {
  const c: Cursor = { text, i: 0, word: "", strict: mode === "strict" };
  const words: string[] = [];
  let inWord = false;
  for (; c.i < text.length; c.i++) {
    const ch = text[c.i]!;
    let refused: Refusal | null = null;
    if (ch === "\\") {
      if (text[c.i + 1] === "\n") {
        c.i++;
        continue;
      }
      if (c.i + 1 >= text.length) {
        if (c.strict) refused = { token: "\\", why: "a trailing backslash" };
      } else c.word += text[++c.i];
      inWord = true;
    } else if (ch === "'") {
      const end = text.indexOf("'", c.i + 1);
      if (end < 0) refused = { token: text.slice(c.i, c.i + 20), why: "an unbalanced single quote", unclosed: "'" };
      else {
        c.word += text.slice(c.i + 1, end);
        c.i = end;
        inWord = true;
      }
    } else if (ch === '"') {
      refused = doubleQuoted(c);
      inWord = true;
    } else if (BLANK.test(ch)) {
      if (inWord) words.push(c.word);
      c.word = "";
      inWord = false;
      continue;
    } else {
      const special = c.strict ? strictOnly(c, inWord) : null;
      if (special === "comment") {
        const end = text.indexOf("\n", c.i);
        c.i = end < 0 ? text.length : end - 1;
        continue;
      }
      refused = special;
      if (refused === null) {
        c.word += ch;
        inWord = true;
      }
    }
    if (refused !== null) return { refused };
  }
  if (inWord) words.push(c.word);
  return { words };
}
