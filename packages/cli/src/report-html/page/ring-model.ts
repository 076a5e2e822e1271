/**
 * What a compress-state ring holds during one verify step, from the planner itself: the write plans of a prefill,
 * `ringSize` decode steps (which fill the ring) and the verify (`planPrefill`, `planDecode`) give every slot's
 * content, and the residency simulator replays the same batches to confirm what the next compression finds. The
 * verify is the counterexample of docs/reference/write-pad-and-residency.md §3.5: D tokens at P, accept 1, then the
 * compression at P + 1 reads [P − W + 2, P + 1), whose first slot a verify of pad + 1 tokens overwrites. DOM-free.
 */
import {
  RingResidencySimulator,
  firstWritePos,
  pagedRingSlot,
  planDecode,
  planPrefill,
  requestRingSlot,
  windowSize,
  writePad,
} from "@dsv4-kv/planner";

/**
 * committed: held since an earlier batch; written: written by this batch and committed (a rewrite or the accepted
 * token); rejected: a draft this batch wrote past the accepted prefix; overwritten: committed, but this batch wrote
 * another position into its slot; not-written: no batch wrote it to the ring.
 */
export type RingCellState = "committed" | "written" | "rejected" | "overwritten" | "not-written";

export interface RingCell {
  position: number;
  /** Slot within the ring (0 … ringSize − 1). */
  slot: number;
  state: RingCellState;
  /** The next compression reads this position from the ring. */
  needed: boolean;
  /** Needed, but the ring does not hold its committed value. */
  lost: boolean;
  /** Inside the write pad: the last `writePad` positions of the verify batch. */
  inPad: boolean;
  /** The position the slot holds after the verify, when it is not this one (null: never written). */
  heldBy: number | null;
  /** `heldBy` was written by the verify (the slot was clobbered by this batch). */
  heldByThisBatch: boolean;
}

export interface RingPicture {
  ratio: 4 | 128;
  ringSize: number;
  writePad: number;
  window: number;
  swaPageSize: number;
  /** Committed length before the verify (P) and the batch's end (S = P + D). */
  prefix: number;
  draftTokens: number;
  accept: number;
  seqLen: number;
  /** The first position the verify's plan writes: min(earliest future read, S − pad). */
  firstWrite: number;
  /** The next compression: its position and the positions [neededFrom, nextPrefix) it reads from the ring. */
  nextCompressAt: number;
  neededFrom: number;
  nextPrefix: number;
  cells: RingCell[];
  /** Slots whose needed position this batch overwrote (with a rejected draft or a later position). */
  clobberedSlots: number[];
  /** The residency simulator's violations for the next compression (empty: the ring served the verify). */
  violations: string[];
}

interface Held {
  position: number;
  /** 0: an earlier batch, 1: the verify. */
  step: 0 | 1;
}

/** The ring of ratio `ratio` (size `ringSize`, SWA page `swaPageSize`) around one verify of `draftTokens`. */
export function ringPicture(ratio: 4 | 128, ringSize: number, swaPageSize: number, draftTokens: number): RingPicture {
  const window = windowSize(ratio);
  const pad = writePad(ratio, ringSize);
  // The needed window starts on a chunk boundary one ring into the third SWA page (c4) or past four c128 chunks
  // and a ring, so that the decode steps before the verify fill the batch's ring.
  const base = (ratio === 4 ? 2 * swaPageSize : 4 * ratio) + ringSize;
  const prefix = base + window - 2;
  const accept = 1;
  const seqLen = prefix + draftTokens;
  const ring = { compressRatio: ratio, ringSize, swaPageSize };
  const held = new Map<number, Held>();
  const writtenBefore = new Set<number>();
  const earlier = [...writes(ring, 0, prefix - ringSize)];
  for (let position = prefix - ringSize; position < prefix; position++) earlier.push(decodeWrite(ring, position));
  for (const w of earlier) {
    held.set(w.slot, { position: w.position, step: 0 });
    writtenBefore.add(w.position);
  }
  for (const w of writes(ring, prefix, draftTokens)) held.set(w.slot, { position: w.position, step: 1 });
  const nextPrefix = prefix + accept;
  const nextCompressAt = nextPrefix + ((ratio - 1 - (nextPrefix % ratio) + ratio) % ratio);
  const neededFrom = Math.max(0, nextCompressAt - window + 1);
  // Paged c4: each SWA page owns a ring; only the batch's page is drawn.
  const pageStart = ratio === 4 ? Math.floor(prefix / swaPageSize) * swaPageSize : 0;
  const pageEnd = ratio === 4 ? pageStart + swaPageSize : seqLen;
  const cells: RingCell[] = [];
  for (let position = Math.max(pageStart, prefix - ringSize); position < Math.min(seqLen, pageEnd); position++) {
    const slot = position % ringSize;
    const h = held.get(slotIndex(ring, position));
    const holds = h?.position === position;
    const state: RingCellState = !holds
      ? writtenBefore.has(position)
        ? "overwritten"
        : "not-written"
      : position >= nextPrefix
        ? "rejected"
        : h?.step === 1
          ? "written"
          : "committed";
    const needed = position >= neededFrom && position < nextPrefix;
    cells.push({
      position,
      slot,
      state,
      needed,
      lost: needed && !holds,
      inPad: position >= seqLen - pad && position < seqLen,
      heldBy: holds ? null : (h?.position ?? null),
      heldByThisBatch: !holds && h?.step === 1,
    });
  }
  const clobberedSlots = [...new Set(cells.filter((c) => c.lost && c.heldByThisBatch).map((c) => c.slot))];
  return {
    ratio,
    ringSize,
    writePad: pad,
    window,
    swaPageSize,
    prefix,
    draftTokens,
    accept,
    seqLen,
    firstWrite: firstWritePos(ratio, seqLen, pad),
    nextCompressAt,
    neededFrom,
    nextPrefix,
    cells,
    clobberedSlots,
    violations: simulate(ring, prefix, draftTokens, accept, nextCompressAt - nextPrefix + 1),
  };
}

interface Ring {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
}

const IDENTITY = { identity: { tokensPerReq: 0x7fffffff } };

/** The slot rows a batch of `tokens` at prefix `start` writes (the planner's write plan). */
function writes(ring: Ring, start: number, tokens: number): Array<{ position: number; slot: number }> {
  const plan = planPrefill({
    ...ring,
    reqPoolIndices: [0],
    reqToToken: IDENTITY,
    seqLens: [start + tokens],
    extendLens: [tokens],
  });
  const out: Array<{ position: number; slot: number }> = [];
  for (let i = 0; i < plan.numWrite; i++) {
    const w = plan.planW.row(i);
    out.push({ position: start + w.raggedId, slot: w.writeLoc });
  }
  return out;
}

/** The slot a decode step at `position` writes (the planner's decode plan). */
function decodeWrite(ring: Ring, position: number): { position: number; slot: number } {
  const row = planDecode({ ...ring, reqPoolIndices: [0], reqToToken: IDENTITY, seqLens: [position + 1] }).row(0);
  return { position, slot: row.writeLoc };
}

/** The slot a position lives in (paged c4: its SWA page's ring; c128: request 0's ring), the planner's addressing. */
function slotIndex(ring: Ring, position: number): number {
  return ring.compressRatio === 4
    ? pagedRingSlot(position, ring.swaPageSize, ring.ringSize)
    : requestRingSlot(0, position, ring.ringSize);
}

/** The same trajectory in the residency simulator: its violation messages for the next compression. */
function simulate(ring: Ring, prefix: number, draftTokens: number, accept: number, nextTokens: number): string[] {
  const sim = new RingResidencySimulator(ring);
  sim.prefill(prefix - ring.ringSize);
  for (let i = 0; i < ring.ringSize; i++) sim.decode();
  sim.verify(draftTokens, accept);
  sim.prefill(nextTokens);
  return sim.violations.map((v) => v.message);
}
