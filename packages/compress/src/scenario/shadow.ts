/**
 * Who last wrote each state row (request, position, step), kept beside the backend's real rows so that a wrong entry
 * or ring row can be explained: a rejected draft, an aliased position, a row never written.
 */
import type { TokenOrigin } from "./tokens.js";

export class ShadowRing {
  private readonly writers = new Map<number, TokenOrigin>();

  write(row: number, origin: TokenOrigin): void {
    this.writers.set(row, origin);
  }

  /** What `row` holds, in words, beside the committed token `want` it should hold. */
  describe(row: number, want: TokenOrigin): string {
    const held = this.writers.get(row);
    if (held === undefined) return "the pool's initial garbage (no batch ever wrote the row)";
    if (held.uid === want.uid && held.position === want.position) {
      if (held.step === want.step) return "the committed token (its bits differ: a rounding fault)";
      return `position ${held.position} as written at step ${held.step}, a rejected draft (committed at step ${want.step})`;
    }
    const who = held.uid === want.uid ? "" : ` of request ${held.uid}`;
    return `position ${held.position}${who}, written at step ${held.step}`;
  }
}
