/**
 * Colour for human output on a terminal. FORCE_COLOR (any value but 0/false) turns it on even through a pipe
 * (as in Node); otherwise a non-empty NO_COLOR (no-color.org), a stream that is not a TTY, or TERM=dumb turns
 * it off. JSON output is never painted: commands paint only their text renderings.
 */
export interface Paint {
  /** A good verdict (VALID, proved, clean). */
  ok(text: string): string;
  /** A bad verdict and error lines. */
  bad(text: string): string;
  warn(text: string): string;
}

export type Env = Readonly<Record<string, string | undefined>>;

export function colourEnabled(stream: { readonly isTTY?: boolean }, env: Env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== "0" && force.toLowerCase() !== "false";
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return stream.isTTY === true && env.TERM !== "dumb";
}

const sgr =
  (open: number) =>
  (text: string): string =>
    `\x1b[${open}m${text}\x1b[39m`;

export const COLOUR_PAINT: Paint = { ok: sgr(32), bad: sgr(31), warn: sgr(33) };

const plain = (text: string): string => text;
export const NO_PAINT: Paint = { ok: plain, bad: plain, warn: plain };

export function paintFor(stream: { readonly isTTY?: boolean }, env: Env): Paint {
  return colourEnabled(stream, env) ? COLOUR_PAINT : NO_PAINT;
}
