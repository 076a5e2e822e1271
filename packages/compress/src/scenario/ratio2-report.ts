/** What a ratio-2 scenario found (`simulate compress --ratio 2`), and its first failures in words. */
import type { V41EntryLayout } from "../v41/layouts.js";
import type { Ratio2VerifyWriter } from "./ratio2-options.js";
import type { WrongRingRow } from "./report.js";

export type Ratio2BatchKind = "extend" | "decode" | "verify";

/** The first entry whose bytes differ from the offline compression of its committed pair. */
export interface Ratio2WrongEntry {
  /** The request's unique id and its slot. */
  request: number;
  slot: number;
  /** The odd position that completed the pair (the entry pools position − 1 and position). */
  position: number;
  step: number;
  batchKind: Ratio2BatchKind;
  /** The element with the largest error, the stored and the offline value there. */
  element: number;
  got: number;
  want: number;
  /** Bytes of the entry that differ. */
  bytesWrong: number;
  /** Why, in words: where the partner came from and what it held. */
  cause: string;
}

/** The first ring row that did not hold the committed token a later position pairs with (V4's record). */
export type Ratio2WrongRingRow = WrongRingRow;

export interface Ratio2ScenarioReport {
  compressRatio: 2;
  ringSize: number;
  speculativeRingSize: number;
  draftTokens: number;
  layout: V41EntryLayout;
  verifyWriter: Ratio2VerifyWriter;
  seed: number;
  steps: number;
  batches: Record<Ratio2BatchKind, number>;
  requestsServed: number;
  entries: number;
  entriesByKind: Record<Ratio2BatchKind, number>;
  wrongEntries: number;
  /** Largest |decoded entry − float64 oracle| over the right entries, and the largest of that over its bound. */
  maxAbsError: number;
  maxBoundRatio: number;
  firstWrong: Ratio2WrongEntry | null;
  ringRowsChecked: number;
  wrongRingRows: number;
  firstWrongRingRow: Ratio2WrongRingRow | null;
}

/** `firstWrong` as one sentence. */
export function describeRatio2WrongEntry(w: Ratio2WrongEntry): string {
  return (
    `step ${w.step} (${w.batchKind}): the ratio-2 entry of request ${w.request} (slot ${w.slot}) at position ` +
    `${w.position} (pair ${w.position - 1}, ${w.position}) has ${w.bytesWrong} bytes unlike the offline compression ` +
    `of the committed pair (element ${w.element}: ${w.got} where it gives ${w.want}); ${w.cause}`
  );
}

/** `firstWrongRingRow` as one sentence. */
export function describeRatio2WrongRingRow(r: Ratio2WrongRingRow): string {
  return (
    `after step ${r.step}: pair-state row ${r.row} should hold position ${r.position} of request ${r.request} ` +
    `(slot ${r.slot}), the partner of its next position, but it holds ${r.holds}`
  );
}
