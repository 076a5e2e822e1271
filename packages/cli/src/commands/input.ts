/**
 * Reading a JSON input (a file or stdin, through read-input.ts) with bounds checked before anything recursive
 * touches it: its size while it is read, its nesting depth by an iterative scan before `JSON.parse`.
 */
import { InputError } from "./args.js";
import { rejectDuplicateKeys } from "./json-keys.js";
import { STDIN_PATH, readInputBytes } from "./read-input.js";
import type { InputStream } from "./registry.js";

/**
 * Why 256 MiB: an explicit `reqToToken` table for 256 requests of 128 Ki positions is ~230 MB of JSON; parsing
 * 256 MiB takes ~1 GiB of a default 4 GiB Node heap, and the text stays well under V8's longest string (~512 MiB).
 * Larger tables have the `{"identity": …}` form.
 */
export const MAX_INPUT_BYTES = 256 * 2 ** 20;

/** Why 64: the deepest real case is an array of cases holding `reqToToken: {identity: {…}}` (4 levels). */
export const MAX_INPUT_DEPTH = 64;

export interface InputLimits {
  maxBytes: number;
  maxDepth: number;
}

export const INPUT_LIMITS: InputLimits = { maxBytes: MAX_INPUT_BYTES, maxDepth: MAX_INPUT_DEPTH };

export interface InputSource {
  /** How the user named it: `--input` or `stdin`. */
  field: string;
  /** The path, for a file (`-`: standard input); none: standard input. */
  path?: string;
}

/** Reads and parses JSON from `source`; every refusal is an InputError naming the source. */
export async function readJsonInput(
  source: InputSource,
  stdin: InputStream,
  limits: InputLimits = INPUT_LIMITS,
): Promise<unknown> {
  const at = source.path;
  const bytes = await readInputBytes({ field: source.field, path: at ?? STDIN_PATH, maxBytes: limits.maxBytes }, stdin);
  const tooDeep = firstTooDeep(bytes, limits.maxDepth);
  if (tooDeep >= 0) {
    throw new InputError(source.field, at, `nests deeper than ${limits.maxDepth} levels (at byte ${tooDeep})`, {
      maxDepth: limits.maxDepth,
      byteOffset: tooDeep,
    });
  }
  const text = bytes.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : String(error);
    throw new InputError(source.field, at, `is not JSON: ${reason.slice(0, 200)}`);
  }
  rejectDuplicateKeys(source.field, at, text);
  return parsed;
}

/**
 * A text file a flag names (a config file, a log, a config.json), or standard input for `-`, refused like a JSON
 * input when it passes `maxBytes`.
 */
export async function readTextInput(
  field: string,
  path: string,
  stdin?: InputStream,
  maxBytes = MAX_INPUT_BYTES,
): Promise<string> {
  return (await readInputBytes({ field, path, maxBytes }, stdin)).toString("utf8");
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]);
const CLOSE = new Set([0x5d, 0x7d]);

/**
 * The byte offset where brackets outside strings first nest deeper than `maxDepth`, or -1. One pass, no
 * recursion: bytes of multi-byte UTF-8 characters never equal these ASCII codes.
 */
export function firstTooDeep(bytes: Uint8Array, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (OPEN.has(b)) {
      if (++depth > maxDepth) return i;
    } else if (CLOSE.has(b)) depth--;
  }
  return -1;
}
