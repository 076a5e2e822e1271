/**
 * What a compress scenario found: entries checked against the float64 offline compression of the committed tokens of
 * their windows, ring rows checked bitwise, online-vs-ring and backend-vs-backend agreement, and the first of each
 * failure in words.
 */

export type ScenarioBatchKind = "prefill" | "decode" | "verify";

/** The first entry outside its tolerance. */
export interface WrongEntry {
  /** The request's unique id (slots are reused) and its slot. */
  request: number;
  slot: number;
  /** Event position q: the entry pools positions q − W + 1 .. q. */
  position: number;
  step: number;
  batchKind: ScenarioBatchKind;
  channel: number;
  got: number;
  want: number;
  absError: number;
  tolerance: number;
  /** Why, in words: which window positions the ring did not hold (or "no ring read is wrong"). */
  cause: string;
}

/** The first ring row that did not hold its committed token. */
export interface WrongRingRow {
  request: number;
  slot: number;
  position: number;
  /** The state row. */
  row: number;
  /** After this step's batch. */
  step: number;
  /** What the row holds, in words. */
  holds: string;
}

/** An online entry that differs from the ring entry of the same (request, q), or one that only one side produced. */
export interface OnlineMismatch {
  request: number;
  position: number;
  step: number;
  kind: "values" | "missing-online" | "missing-ring";
  channel: number;
  online: number;
  ring: number;
}

/** The run compared with a second backend on the same batches (`mirror`): entries within bound, ring rows bitwise. */
export interface MirrorReport {
  backend: string;
  entries: number;
  entryMismatches: number;
  maxAbsDiff: number;
  ringRows: number;
  ringRowMismatches: number;
}

export interface CompressScenarioReport {
  backend: string;
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  useReqRing: boolean;
  writePad: number;
  padFormula: string;
  draftTokens: number;
  stateDtype: string;
  headDim: number;
  seed: number;
  steps: number;
  batches: Record<ScenarioBatchKind, number>;
  /** Requests served (arrivals) and radix resumes among them. */
  requestsServed: number;
  radixResumes: number;
  entries: number;
  /** Entries checked per batch kind (an entry of a verify counts only when its position was accepted). */
  entriesByKind: Record<ScenarioBatchKind, number>;
  wrongEntries: number;
  /** Largest |entry − oracle| over every channel checked, and the largest of that over max|kv| of its channel. */
  maxAbsError: number;
  maxRelError: number;
  firstWrong: WrongEntry | null;
  ringRowsChecked: number;
  wrongRingRows: number;
  firstWrongRingRow: WrongRingRow | null;
  onlineEntries?: number;
  onlineMismatches?: number;
  firstOnlineMismatch?: OnlineMismatch | null;
  mirror?: MirrorReport;
}

/** `firstWrong` as one sentence. */
export function describeWrongEntry(w: WrongEntry, window: number): string {
  return (
    `step ${w.step} (${w.batchKind}): the entry of request ${w.request} (slot ${w.slot}) at position ${w.position} ` +
    `(window ${w.position - window + 1}..${w.position}) has channel ${w.channel} = ${w.got} where the offline ` +
    `compression of the committed tokens gives ${w.want} (error ${w.absError.toExponential(3)} > tolerance ` +
    `${w.tolerance.toExponential(3)}); ${w.cause}`
  );
}

/** `firstWrongRingRow` as one sentence. */
export function describeWrongRingRow(r: WrongRingRow): string {
  return (
    `after step ${r.step}: state row ${r.row} should hold position ${r.position} of request ${r.request} ` +
    `(slot ${r.slot}) for a later window, but it holds ${r.holds}`
  );
}
