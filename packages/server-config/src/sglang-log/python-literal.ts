/**
 * A safe reader of the Python literals SGLang prints for its arguments: `repr()` of a dataclass
 * (`ServerArgs(model_path='…', tp_size=8)`) and of a dict (`{'model_path': '…'}`). It evaluates nothing: it
 * reads None, True/False, numbers (inf, nan), strings in either quote with their escapes, lists, tuples, sets,
 * dicts and `Name(key=value, …)` calls (read as objects); `<…>` reprs and dotted names are kept as text.
 */

/** Why a literal could not be read: `truncated` when the text ends inside it. */
export class PythonLiteralError extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
    readonly truncated: boolean,
  ) {
    super(reason);
  }
}

export type PythonValue = null | boolean | number | string | PythonValue[] | { [key: string]: PythonValue };

const MAX_DEPTH = 64;
const NUMBER = /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  n: "\n",
  r: "\r",
  t: "\t",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  "0": "\0",
};

/** Reads one literal starting at `start`; returns it and the offset just after it. */
export function readPythonLiteral(text: string, start = 0): { value: PythonValue; end: number } {
  const reader = new Reader(text, start);
  const value = reader.value(0);
  return { value, end: reader.pos };
}

class Reader {
  constructor(
    readonly text: string,
    public pos: number,
  ) {}

  fail(reason: string, at = this.pos): never {
    throw new PythonLiteralError(at, reason, at >= this.text.length);
  }

  skipBlanks(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  value(depth: number): PythonValue {
    if (depth > MAX_DEPTH) this.fail(`nests deeper than ${MAX_DEPTH} levels`);
    this.skipBlanks();
    const c = this.text[this.pos];
    if (c === undefined) this.fail("ends where a value should be");
    if (c === "'" || c === '"') return this.string();
    if (c === "[") return this.sequence("]", depth);
    if (c === "(") return this.sequence(")", depth);
    if (c === "{") return this.braces(depth);
    if (c === "<") return this.angle();
    if (/[-+\d.]/.test(c)) return this.number();
    return this.named(depth);
  }

  number(): number {
    const sign = this.text[this.pos];
    if ((sign === "-" || sign === "+") && this.text.startsWith("inf", this.pos + 1)) {
      this.pos += 4;
      return sign === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    }
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) this.fail("is not a number");
    this.pos += m[0].length;
    const n = Number(m[0]);
    if (Number.isNaN(n)) this.fail(`${JSON.stringify(m[0])} is not a number`, this.pos - m[0].length);
    return n;
  }

  string(): string {
    const quote = this.text[this.pos]!;
    const open = this.pos++;
    let out = "";
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined || c === "\n") this.fail("a string is not closed", c === undefined ? this.pos : open);
      this.pos++;
      if (c === quote) return out;
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = this.text[this.pos];
      if (e === undefined) this.fail("a string ends in a backslash");
      this.pos++;
      if (e in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[e];
      else if (e === "x" || e === "u" || e === "U") out += this.codePoint(e === "x" ? 2 : e === "u" ? 4 : 8);
      else out += `\\${e}`;
    }
  }

  codePoint(digits: number): string {
    const hex = this.text.slice(this.pos, this.pos + digits);
    if (hex.length < digits) this.fail("a string escape is cut off");
    if (!/^[0-9a-fA-F]+$/.test(hex)) this.fail(`\\${hex} is not a hexadecimal escape`);
    this.pos += digits;
    const cp = Number.parseInt(hex, 16);
    if (cp > 0x10ffff) this.fail(`\\${hex} is not a code point`);
    return String.fromCodePoint(cp);
  }

  /** `[a, b]` or `(a, b)`: items separated by commas, a trailing comma allowed. */
  sequence(close: string, depth: number): PythonValue[] {
    this.pos++;
    const items: PythonValue[] = [];
    for (;;) {
      this.skipBlanks();
      if (this.text[this.pos] === close) {
        this.pos++;
        return items;
      }
      items.push(this.value(depth + 1));
      this.separator(close);
    }
  }

  /** After an item: a comma, or the closing bracket (left for the caller). */
  separator(close: string): void {
    this.skipBlanks();
    const c = this.text[this.pos];
    if (c === ",") this.pos++;
    else if (c !== close) this.fail(c === undefined ? `ends before the closing ${close}` : `expected , or ${close}`);
  }

  /** `{k: v, …}` (a dict, keys read as text) or `{a, b}` (a set, read as a list). */
  braces(depth: number): PythonValue {
    this.pos++;
    this.skipBlanks();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return {};
    }
    const first = this.value(depth + 1);
    this.skipBlanks();
    if (this.text[this.pos] !== ":") {
      const items = [first];
      this.separator("}");
      for (;;) {
        this.skipBlanks();
        if (this.text[this.pos] === "}") {
          this.pos++;
          return items;
        }
        items.push(this.value(depth + 1));
        this.separator("}");
      }
    }
    const out: { [key: string]: PythonValue } = {};
    let key: PythonValue = first;
    for (;;) {
      this.skipBlanks();
      if (this.text[this.pos] !== ":") this.fail(this.pos >= this.text.length ? "ends inside a dict" : "expected :");
      this.pos++;
      out[keyText(key)] = this.value(depth + 1);
      this.separator("}");
      this.skipBlanks();
      if (this.text[this.pos] === "}") {
        this.pos++;
        return out;
      }
      key = this.value(depth + 1);
    }
  }

  /** `<ComponentType.FULL: 0>`-style reprs, kept as their text. */
  angle(): string {
    const open = this.pos;
    let level = 0;
    for (; this.pos < this.text.length; this.pos++) {
      const c = this.text[this.pos];
      if (c === "<") level++;
      else if (c === ">" && --level === 0) {
        this.pos++;
        return this.text.slice(open, this.pos);
      }
    }
    return this.fail("a <…> repr is not closed");
  }

  /** None, True, False, inf, nan, a dotted name (kept as text), or `Name(key=value, …)` (an object). */
  named(depth: number): PythonValue {
    NAME.lastIndex = this.pos;
    const m = NAME.exec(this.text);
    if (!m) this.fail(`unexpected ${JSON.stringify(this.text[this.pos])}`);
    this.pos += m[0].length;
    const name = m[0];
    if (this.text[this.pos] === "(") return this.call(depth);
    if (name === "None") return null;
    if (name === "True") return true;
    if (name === "False") return false;
    if (name === "inf") return Number.POSITIVE_INFINITY;
    if (name === "nan") return Number.NaN;
    return name;
  }

  /** The keyword arguments of a dataclass repr. */
  call(depth: number): { [key: string]: PythonValue } {
    this.pos++;
    const out: { [key: string]: PythonValue } = {};
    for (;;) {
      this.skipBlanks();
      if (this.text[this.pos] === ")") {
        this.pos++;
        return out;
      }
      NAME.lastIndex = this.pos;
      const m = NAME.exec(this.text);
      if (!m) this.fail(this.pos >= this.text.length ? "ends inside a (…) repr" : "expected a field name");
      this.pos += m[0].length;
      this.skipBlanks();
      if (this.text[this.pos] !== "=")
        this.fail(this.pos >= this.text.length ? "ends after a field name" : "expected =");
      this.pos++;
      out[m[0]] = this.value(depth + 1);
      this.separator(")");
    }
  }
}

function keyText(key: PythonValue): string {
  if (typeof key === "string") return key;
  if (key === null || typeof key !== "object") return String(key === null ? "None" : key);
  return JSON.stringify(key);
}
