/**
 * Pasted launch commands carry what the eye does not see: CRLF line ends from a Windows file or a chat window, a
 * non-breaking space from a web page, a zero-width space or a byte-order mark. Line ends and Unicode blanks are
 * normalised (a CR is a line end, a no-break space a blank); any other invisible character is refused by name,
 * since what it stands for cannot be guessed.
 */
import { UsageError } from "../commands/args.js";

/** Unicode blanks a shell would not split on but a reader sees as one. */
const UNICODE_BLANKS = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/g;

/** Invisible characters with their names; the C0 and C1 controls other than tab and line ends are named by code. */
const NAMED: ReadonlyMap<number, string> = new Map([
  [0x00ad, "SOFT HYPHEN"],
  [0x200b, "ZERO WIDTH SPACE"],
  [0x200c, "ZERO WIDTH NON-JOINER"],
  [0x200d, "ZERO WIDTH JOINER"],
  [0x200e, "LEFT-TO-RIGHT MARK"],
  [0x200f, "RIGHT-TO-LEFT MARK"],
  [0x2028, "LINE SEPARATOR"],
  [0x2029, "PARAGRAPH SEPARATOR"],
  [0x2060, "WORD JOINER"],
  [0xfeff, "BYTE ORDER MARK"],
]);
/** Code point ranges of invisible characters: C0 controls but tab and line ends, DEL and C1, format characters. */
const INVISIBLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00, 0x08],
  [0x0b, 0x0c],
  [0x0e, 0x1f],
  [0x7f, 0x9f],
  [0xad, 0xad],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x206f],
  [0xfeff, 0xfeff],
];

const isInvisible = (code: number): boolean => INVISIBLE_RANGES.some(([lo, hi]) => code >= lo && code <= hi);

function firstInvisible(text: string): number {
  for (let i = 0; i < text.length; i++) if (isInvisible(text.charCodeAt(i))) return i;
  return -1;
}

function refuseInvisible(field: string, text: string): void {
  const index = firstInvisible(text);
  if (index < 0) return;
  const code = text.charCodeAt(index);
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const name = NAMED.get(code) ?? "a control character";
  const around = `${text.slice(Math.max(0, index - 20), index)}⟨here⟩${text.slice(index + 1, index + 20)}`;
  throw new UsageError(
    field,
    around,
    `holds an invisible character, ${hex} (${name}), at character ${index + 1}: ` +
      "delete it and paste the command again",
    { codePoint: hex, index },
  );
}

/** A pasted command's text: CRLF and CR become LF, Unicode blanks a space; other invisible characters refused. */
export function normaliseCommandText(field: string, text: string): string {
  const out = text.replace(/\r\n?/g, "\n").replace(UNICODE_BLANKS, " ");
  refuseInvisible(field, out);
  return out;
}

/**
 * Words a shell already split: a CR the shell kept (a CRLF file's `\` line continuation leaves a word `\r`, a last
 * word `8\r`) is a line end and goes; a word holding a Unicode blank is two words; other invisible characters are
 * refused.
 */
export function normaliseWords(field: string, words: readonly string[]): string[] {
  const out: string[] = [];
  for (const word of words) {
    for (const part of word.replace(/\r/g, "").split(UNICODE_BLANKS)) {
      if (part === "" && word !== "") continue;
      refuseInvisible(field, part);
      out.push(part);
    }
  }
  return out;
}
