/**
 * What `simulate residency --html` puts in its page: the simulation's inputs, the terminal's verdict word for word,
 * and per ring a window of batches around the first violation (or the run's last batches when there is none) with
 * what every drawn ring slot held after each batch. The slot contents come from the planner's own residency
 * simulator (docs/reference/write-pad-and-residency.md §7) as the run left them, not from a picture of them.
 * The page imports the types only.
 */
import {
  type ResidencyBatch,
  type ResidencyViolation,
  type RingResidencySimulator,
  type RingSlotContent,
  type ViolationKind,
  earliestFutureRead,
  pagedRingSlot,
  requestRingSlot,
  windowSize,
} from "@dsv4-kv/planner";
import { describeBatches } from "@dsv4-kv/planner/internal";

/** Batches drawn up to and including the violating one (or the run's last). */
export const WINDOW_BATCHES = 8;
/** How far back the window reaches to also show the batch that committed, or last wrote, the lost position. */
export const MAX_WINDOW_BATCHES = 16;
/** Ring slots drawn at most (a c128 ring has 256): those nearest the fault, or the newest positions. */
export const MAX_DRAWN_SLOTS = 48;

/** committed: the committed value of a position a later window may read; retired: one no later window reads. */
export type RingCellState = "committed" | "retired" | "rejected-draft";

export interface RingCell {
  slot: number;
  position: number;
  writtenAtStep: number;
  state: RingCellState;
  /** This batch wrote it. */
  writtenNow: boolean;
}

export interface WindowBatch {
  /** Simulator step after the batch (a radix resume keeps the step of the batch before it). */
  step: number;
  kind: ResidencyBatch["kind"];
  description: string;
  prefixBefore: number;
  prefixAfter: number;
  /** Tokens in the batch (D for a verify, 1 for a decode, 0 for a resume). */
  tokens: number;
  /** Tokens it committed. */
  accept: number;
  /** Positions this batch wrote to the ring, ascending. */
  written: number[];
  /** What the drawn slots hold after the batch (slots never written are absent). */
  cells: RingCell[];
}

/** The write that destroyed the needed value: its batch, the token position it wrote and the slot. */
export interface ClobberingWrite {
  step: number;
  batch: string;
  position: number;
  slot: number;
  rejectedDraft: boolean;
}

export interface ResidencyFault {
  kind: ViolationKind;
  /** Step of the batch whose compression read the wrong value. */
  step: number;
  batch: string;
  compressAt: number | null;
  /** The committed position whose value was lost. */
  position: number;
  slot: number;
  /** What the slot held when it was read (null: never written). */
  held: ResidencyViolation["found"];
  committedAtStep: number;
  committedBy: string;
  committedBatchWroteIt: boolean;
  /** Stale read and collision: the write that destroyed it; never-written: null (no write ever put it there). */
  clobberedBy: ClobberingWrite | null;
  /** The compression's window positions below its batch's prefix (read from the ring), each with its slot. */
  reads: Array<{ position: number; slot: number }>;
  /** The simulator's own sentence (the terminal prints it). */
  message: string;
  /** The fault in one sentence naming the slot, the write and the lost position. */
  summary: string;
}

export interface ResidencyInputs {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  useReqRing: boolean;
  /** null for a replay (its batches carry their own D). */
  draftTokens: number | null;
  adaptive: boolean;
  writePad: number;
  /** derived, pre-fix-device, pre-fix-host, forced (--pad) or replay (from the file). */
  padSource: string;
  steps: number | null;
  seed: number | null;
  replayFile: string | null;
}

/** One ring's run: what went in and what the simulator counted (the page's view and its source share it). */
export interface RingRunSummary {
  label: string;
  inputs: ResidencyInputs;
  batchesRun: number;
  verifies: number | null;
  violations: number;
  firstViolation: ResidencyViolation | null;
}

export interface ResidencyRingView extends RingRunSummary {
  /** The window's batches, oldest first; the last is the violating batch (or the run's last). */
  batches: WindowBatch[];
  /** Slots drawn, ascending. */
  slots: number[];
  /** The first violation, when it falls in the window (it always does: the window ends there). */
  fault: ResidencyFault | null;
}

export interface ResidencyPayload {
  kind: "residency";
  /** The command as run (`dsv4-kv simulate residency …`). */
  command: string;
  /** The terminal report's lines (no colour), the `result:` line last. */
  verdict: { lines: string[]; result: string; clean: boolean };
  rings: ResidencyRingView[];
}

/** One batch of the window as the simulator left it. */
export interface RecordedBatch {
  batch: ResidencyBatch;
  step: number;
  prefixBefore: number;
  prefixAfter: number;
  slots: RingSlotContent[];
}

/** The step the window ends at and the step it starts from. */
function windowSteps(endStep: number, v: ResidencyViolation | null): { end: number; from: number } {
  const end = v?.step ?? endStep;
  let from = end - WINDOW_BATCHES + 1;
  if (v !== null) {
    const earliest = Math.min(v.committedAtStep, v.found?.writtenAtStep ?? v.committedAtStep);
    if (earliest >= 1) from = Math.min(from, Math.max(earliest, end - MAX_WINDOW_BATCHES + 1));
  }
  return { end, from: Math.max(from, 1) };
}

/**
 * Fed every batch of the run itself (`onBatch`), it keeps the last MAX_WINDOW_BATCHES steps with a snapshot of the
 * ring after each, and nothing after the first violation's step: the window the page draws is then cut from what
 * the run did, with no second run. Memory: MAX_WINDOW_BATCHES snapshots of the ring.
 */
export class WindowRecorder {
  private readonly kept: RecordedBatch[] = [];
  private prefix = 0;
  /** Step of the first violation, once one showed: later batches are not part of any window. */
  private violationStep: number | null = null;

  record(batch: ResidencyBatch, sim: RingResidencySimulator): void {
    const prefixBefore = this.prefix;
    this.prefix = sim.prefix;
    if (this.violationStep !== null) return;
    this.kept.push({ batch, step: sim.step, prefixBefore, prefixAfter: sim.prefix, slots: sim.slotContents() });
    if (sim.firstViolation !== null) this.violationStep = sim.firstViolation.step;
    while (this.kept[0]!.step <= sim.step - MAX_WINDOW_BATCHES) this.kept.shift();
  }

  /**
   * The window ending at the first violation's step (or at `endStep`, the run's last), from the batch that
   * committed or last wrote the lost position when it is near enough. A radix resume after the last batch (it
   * keeps that batch's step) is not in it.
   */
  window(endStep: number, violation: ResidencyViolation | null): RecordedBatch[] {
    const { end, from } = windowSteps(endStep, violation);
    return this.kept.filter(
      (r) => r.step >= from && (r.step < end || (r.step === end && r.batch.kind !== "radixResume")),
    );
  }
}

/** The batch in the simulator's words (describeBatches names a batch by the prefix it starts at). */
function batchWords(batch: ResidencyBatch, prefixBefore: number): string {
  return describeBatches([{ kind: "radixResume", prefix: prefixBefore }, batch])[1]!;
}

function batchShape(batch: ResidencyBatch, r: RecordedBatch): { tokens: number; accept: number } {
  if (batch.kind === "verify") return { tokens: batch.draftTokens, accept: batch.accept };
  if (batch.kind === "prefill") return { tokens: batch.tokens, accept: batch.tokens };
  if (batch.kind === "decode") return { tokens: 1, accept: 1 };
  return { tokens: 0, accept: r.prefixAfter - r.prefixBefore };
}

/** The slots to draw: every slot the window touched, or the MAX_DRAWN_SLOTS holding positions nearest `centre`. */
function drawnSlots(recorded: readonly RecordedBatch[], centre: number, faultSlot: number | null): number[] {
  const distance = new Map<number, number>();
  for (const r of recorded) {
    for (const c of r.slots) {
      const d = Math.abs(c.position - centre);
      distance.set(c.slot, Math.min(distance.get(c.slot) ?? d, d));
    }
  }
  if (faultSlot !== null) distance.set(faultSlot, -1);
  const ranked = [...distance].sort((a, b) => a[1] - b[1] || a[0] - b[0]).slice(0, MAX_DRAWN_SLOTS);
  return ranked.map(([slot]) => slot).sort((a, b) => a - b);
}

function cellsOf(r: RecordedBatch, drawn: ReadonlySet<number>, compressRatio: number): RingCell[] {
  const retiredBelow = earliestFutureRead(compressRatio, r.prefixAfter);
  const wrote = r.batch.kind !== "radixResume";
  return r.slots
    .filter((c) => drawn.has(c.slot))
    .map((c) => ({
      slot: c.slot,
      position: c.position,
      writtenAtStep: c.writtenAtStep,
      state: !c.committed ? "rejected-draft" : c.position < retiredBelow ? "retired" : "committed",
      writtenNow: wrote && c.writtenAtStep === r.step,
    }));
}

function toWindowBatch(r: RecordedBatch, drawn: ReadonlySet<number>, compressRatio: number): WindowBatch {
  const wrote = r.batch.kind !== "radixResume";
  return {
    step: r.step,
    kind: r.batch.kind,
    description: batchWords(r.batch, r.prefixBefore),
    prefixBefore: r.prefixBefore,
    prefixAfter: r.prefixAfter,
    ...batchShape(r.batch, r),
    written: wrote
      ? r.slots
          .filter((c) => c.writtenAtStep === r.step)
          .map((c) => c.position)
          .sort((a, b) => a - b)
      : [],
    cells: cellsOf(r, drawn, compressRatio),
  };
}

/** The first write after the commit that put another position into the slot (from the window's snapshots). */
function clobberingWrite(recorded: readonly RecordedBatch[], v: ResidencyViolation): ClobberingWrite | null {
  if (v.kind === "never-written") return null;
  if (v.kind === "in-batch-collision") {
    return { step: v.step, batch: v.batch, position: v.position, slot: v.slot, rejectedDraft: false };
  }
  for (const r of recorded) {
    if (r.step <= v.committedAtStep || r.batch.kind === "radixResume") continue;
    const c = r.slots.find((s) => s.slot === v.slot);
    if (c !== undefined && c.writtenAtStep === r.step && c.position !== v.position) {
      return {
        step: r.step,
        batch: batchWords(r.batch, r.prefixBefore),
        position: c.position,
        slot: v.slot,
        rejectedDraft: !c.committed,
      };
    }
  }
  // the commit lies before the window: the write the read found is the latest one, named by the simulator
  if (v.found === null) return null;
  return {
    step: v.found.writtenAtStep,
    batch: v.found.writtenBy,
    position: v.found.position,
    slot: v.slot,
    rejectedDraft: v.found.rejectedDraft,
  };
}

function faultSummary(v: ResidencyViolation, clobber: ClobberingWrite | null): string {
  const read = `step ${v.step}'s compression at position ${v.compressAt}`;
  const draft = (yes: boolean) => (yes ? " (a rejected draft)" : "");
  if (v.kind === "in-batch-collision") {
    return `slot ${v.slot} is written twice by step ${v.step}: positions ${v.found?.position} and ${v.position}`;
  }
  if (v.kind === "never-written") {
    const held =
      v.found === null
        ? "was never written"
        : `still holds position ${v.found.position}${draft(v.found.rejectedDraft)} from step ${v.found.writtenAtStep}`;
    const why = v.committedBatchWroteIt
      ? `no batch wrote it to slot ${v.slot}`
      : `step ${v.committedAtStep} committed it without writing it to the ring (its write plan did not cover it)`;
    return (
      `slot ${v.slot} should hold committed position ${v.position}, but ${why}; the slot ${held}, which ${read} ` +
      "read instead"
    );
  }
  const by =
    clobber === null
      ? "a later write clobbered it"
      : `step ${clobber.step}'s write of position ${clobber.position}${draft(clobber.rejectedDraft)} to slot ` +
        `${v.slot} clobbered it`;
  return (
    `slot ${v.slot} held committed position ${v.position} (written by step ${v.committedAtStep}); ${by}, so ` +
    `${read} read the wrong value`
  );
}

/** Where position `x` lives in the ring (request 0, identity token maps, as the simulator runs it). */
function slotOf(inputs: ResidencyInputs, x: number): number {
  const paged = inputs.compressRatio === 4 && !inputs.useReqRing;
  return paged ? pagedRingSlot(x, inputs.swaPageSize, inputs.ringSize) : requestRingSlot(0, x, inputs.ringSize);
}

function ringReads(recorded: readonly RecordedBatch[], v: ResidencyViolation, inputs: ResidencyInputs) {
  const batch = recorded.find((r) => r.step === v.step && r.batch.kind !== "radixResume");
  if (v.compressAt === undefined || batch === undefined) return [];
  const reads: Array<{ position: number; slot: number }> = [];
  const from = Math.max(0, v.compressAt - windowSize(inputs.compressRatio) + 1);
  for (let x = from; x < Math.min(batch.prefixBefore, v.compressAt + 1); x++)
    reads.push({ position: x, slot: slotOf(inputs, x) });
  return reads;
}

function faultOf(recorded: readonly RecordedBatch[], v: ResidencyViolation, inputs: ResidencyInputs): ResidencyFault {
  const clobberedBy = clobberingWrite(recorded, v);
  return {
    kind: v.kind,
    step: v.step,
    batch: v.batch,
    compressAt: v.compressAt ?? null,
    position: v.position,
    slot: v.slot,
    held: v.found,
    committedAtStep: v.committedAtStep,
    committedBy: v.committedBy,
    committedBatchWroteIt: v.committedBatchWroteIt,
    clobberedBy,
    reads: ringReads(recorded, v, inputs),
    message: v.message,
    summary: faultSummary(v, clobberedBy),
  };
}

export interface RingViewSource extends RingRunSummary {
  recorded: readonly RecordedBatch[];
}

/** One ring's part of the page from the recorded window. */
export function ringView(source: RingViewSource): ResidencyRingView {
  const { recorded, firstViolation: v } = source;
  const last = recorded.at(-1);
  const centre = v?.position ?? Math.max((last?.prefixAfter ?? 1) - 1, 0);
  const slots = drawnSlots(recorded, centre, v?.slot ?? null);
  const drawn = new Set(slots);
  return {
    label: source.label,
    inputs: source.inputs,
    batchesRun: source.batchesRun,
    verifies: source.verifies,
    violations: source.violations,
    firstViolation: v,
    batches: recorded.map((r) => toWindowBatch(r, drawn, source.inputs.compressRatio)),
    slots,
    fault: v === null ? null : faultOf(recorded, v, source.inputs),
  };
}
