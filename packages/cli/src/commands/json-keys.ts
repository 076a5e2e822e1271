/**
 * Duplicate keys in JSON text. `JSON.parse` keeps the last of two equal keys without a word, so every JSON reader of
 * the CLI (plan and replay inputs, model config.json files, `--config` files) runs this scan on text that parsed:
 * a key given twice in one object is refused, naming both places.
 */
import { FieldError } from "@dsv4-kv/errors/internal";
import { InputError } from "./args.js";

/** One setting given twice (code DUPLICATE_KEY): a JSON key twice in an object, a --config flag in two spellings. */
export class DuplicateKeyError extends FieldError {
  static override readonly kind: string = "DuplicateKeyError";

  constructor(field: string, value: unknown, rule: string, params?: Readonly<Record<string, unknown>>) {
    super("DUPLICATE_KEY", field, value, rule, params);
  }
}

/** A key of a JSON object: its decoded text, the object's path (`$.batches[3]`), and where the key starts. */
export interface JsonKey {
  key: string;
  objectPath: string;
  offset: number;
  /** 1 for the keys of the top-level object. */
  depth: number;
}

interface Frame {
  /** Keys seen in this object (offset of the first); null for an array. */
  keys: Map<string, number> | null;
  path: string;
  lastKey: string;
  index: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function childPath(top: Frame | undefined): string {
  if (top === undefined) return "$";
  if (top.keys === null) return `${top.path}[${top.index}]`;
  return IDENTIFIER.test(top.lastKey) ? `${top.path}.${top.lastKey}` : `${top.path}[${JSON.stringify(top.lastKey)}]`;
}

/** The offset of the quote that closes the string opened at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i += 2;
    else if (c === QUOTE) return i;
    else i++;
  }
  return text.length;
}

/**
 * Visits every object key of `text`, which must be JSON that `JSON.parse` accepted, in order. One pass, no
 * recursion (the nesting is already bounded by the readers); `visit` returns true to stop.
 */
export function scanJsonKeys(text: string, visit: (key: JsonKey, seenAt: number | undefined) => boolean): void {
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const seenAt = top.keys.get(key);
        if (visit({ key, objectPath: top.path, offset: i, depth: stack.length }, seenAt)) return;
        if (seenAt === undefined) top.keys.set(key, i);
        top.lastKey = key;
        expectKey = false;
      }
      i = end;
    } else if (c === "{" || c === "[") {
      stack.push({ keys: c === "{" ? new Map() : null, path: childPath(top), lastKey: "", index: 0 });
      expectKey = c === "{";
    } else if (c === "}" || c === "]") stack.pop();
    else if (c === "," && top !== undefined) {
      if (top.keys) expectKey = true;
      else top.index++;
    }
  }
}

/** 1-based line and column of `offset`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Refuses JSON text (already parsed) that gives a key twice in one object. `field` and `at` name the input as the
 * reader's other refusals do (`--input`, the path).
 */
export function rejectDuplicateKeys(field: string, at: string | undefined, text: string): void {
  let found: { key: JsonKey; first: number } | null = null;
  scanJsonKeys(text, (key, seenAt) => {
    if (seenAt === undefined) return false;
    found = { key, first: seenAt };
    return true;
  });
  if (found === null) return;
  const { key, first } = found as { key: JsonKey; first: number };
  const a = lineColumn(text, first);
  const b = lineColumn(text, key.offset);
  const where = (p: { line: number; column: number }) => `line ${p.line}, column ${p.column}`;
  throw new DuplicateKeyError(
    field,
    at,
    `gives the key ${JSON.stringify(key.key)} twice in ${key.objectPath} (at ${where(a)} and at ${where(b)}); ` +
      "JSON readers keep one of them silently, so neither is taken: remove one",
    { key: key.key, objectPath: key.objectPath, first: a, second: b },
  );
}

/**
 * A JSON file's text as a value: not JSON is an InputError ("is not valid JSON (reason)", the parser's first line), a
 * key given twice a DuplicateKeyError. The readers of --config, --model-config and a checkpoint's config.json.
 */
export function parseJsonFile(field: string, path: string, text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 200);
    throw new InputError(field, path, `is not valid JSON (${reason})`);
  }
  rejectDuplicateKeys(field, path, text);
  return parsed;
}
