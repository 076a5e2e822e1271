/**
 * What one batch, planned by the real planner at the canonical prefix itself, does to a canonical state. A state is
 * (canonical prefix, validity bits of the window): bit j says whether the slot of position windowStart(P) + j
 * still holds that position's committed value. An effect is independent of the bits, so it is computed once per
 * (canonical prefix, batch) and then applied to every state with that prefix by a few bit operations.
 */
import { planDecode } from "../decode.js";
import { PlannerError } from "../errors.js";
import { planPrefill } from "../prefill.js";
import type { RingGeometry } from "./geometry.js";

/** A SWA page the batch completes (paged c4): its last `cr` positions must be valid for a radix resume. */
export interface TailEffect {
  /** Page end relative to the batch's prefix (the tail counts once `accept` reaches it). */
  end: number;
  /** The tail's positions below the prefix, as window bits. */
  oldMask: bigint;
  /** The tail's positions in the batch, as bits of `written`. */
  batchMask: bigint;
}

export interface BatchEffect {
  /** Window positions the batch's compressions read from the ring. */
  readMask: bigint;
  /** Window positions whose slot the batch writes. */
  clobber: bigint;
  /** Bit k: position P + k was written by the batch and still holds its slot when the batch ends. */
  written: bigint;
  /** The decode kernel writes its token before it compresses; prefill batches read the pre-batch ring. */
  readsAfterWrite: boolean;
  /** A violation whatever the ring holds: an in-batch collision, or a read from a slot the position does not map to. */
  unconditional: boolean;
  tails: TailEffect[];
}

const NO_TAILS: TailEffect[] = [];

function bit(j: number): bigint {
  return 1n << BigInt(j);
}

/** A bit set built in 32-bit words and turned into one bigint at the end (bigint shifts per bit are slow). */
class Bits {
  private readonly words: Uint32Array;
  constructor(size: number) {
    this.words = new Uint32Array((size >>> 5) + 1);
  }
  set(j: number): void {
    this.words[j >>> 5]! |= 1 << (j & 31);
  }
  toBigInt(): bigint {
    let out = 0n;
    for (let i = this.words.length - 1; i >= 0; i--) out = (out << 32n) | BigInt(this.words[i]!);
    return out;
  }
}

/** Slots of the window positions at one prefix, shared by every batch planned there. */
export class WindowSlots {
  readonly start: number;
  /** slot -> window offsets (x - start) whose position maps to it */
  readonly bySlot = new Map<number, number[]>();
  readonly slotAt: Int32Array;
  constructor(
    readonly g: RingGeometry,
    readonly prefix: number,
  ) {
    this.start = g.windowStart(prefix);
    this.slotAt = new Int32Array(prefix - this.start);
    for (let x = this.start; x < prefix; x++) {
      const slot = g.slotOf(x);
      this.slotAt[x - this.start] = slot;
      if (slot < 0) continue;
      const list = this.bySlot.get(slot);
      if (list === undefined) this.bySlot.set(slot, [x - this.start]);
      else list.push(x - this.start);
    }
  }
}

function requireAddressed(g: RingGeometry, p: number, slot: number): void {
  // The reduction tracks position x in slot(x); a planner writing elsewhere would need a different state.
  if (slot !== g.slotOf(p)) {
    throw new PlannerError(
      "SIMULATION",
      "writeLoc",
      slot,
      `the planner wrote position ${p} to a slot its addressing does not give it (${g.slotOf(p)}); ` +
        "the prover assumes one addressing",
    );
  }
}

/** Effect of a prefill chunk or verify of `tokens` tokens at the window's prefix. */
export function prefillEffect(w: WindowSlots, tokens: number, pad: number): BatchEffect {
  const { g, prefix: p, start: ws } = w;
  const plan = planPrefill({ ...g.planOptions(), seqLens: [p + tokens], extendLens: [tokens], writePadOverride: pad });
  const reads = new Bits(p - ws);
  let unconditional = false;
  const cw = plan.planC.words;
  const cs = plan.planC.signedWords;
  for (let i = 0; i < plan.numCompress; i++) {
    const bufferLen = cw[i * 4 + 1]! >>> 16;
    if (bufferLen === 0) continue;
    const q = cw[i * 4]! - 1;
    for (let e = 0; e < bufferLen; e++) {
      const x = q - g.window + 1 + e;
      if (x < 0) continue; // c4's overlap half is masked at q == 3
      if (g.readSlot(e, cs[i * 4 + 2]!, cs[i * 4 + 3]!) !== w.slotAt[x - ws]) unconditional = true;
      else reads.set(x - ws);
    }
  }
  const writes: Array<[number, number]> = [];
  const ww = plan.planW.words;
  const wsw = plan.planW.signedWords;
  for (let i = 0; i < plan.numWrite; i++) {
    const x = p + ww[i * 2]!;
    const slot = wsw[i * 2 + 1]!;
    requireAddressed(g, x, slot);
    writes.push([x, slot]);
  }
  return finish(w, tokens, writes, reads.toBigInt(), unconditional, false);
}

/** Effect of one decode step at the window's prefix: write position p, then compress if (p + 1) % cr == 0. */
export function decodeEffect(w: WindowSlots): BatchEffect {
  const { g, prefix: p, start: ws } = w;
  const plan = planDecode({ ...g.planOptions(), seqLens: [p + 1] }).row(0);
  requireAddressed(g, p, plan.writeLoc);
  let readMask = 0n;
  let unconditional = false;
  if ((p + 1) % g.cr === 0) {
    for (let e = 0; e < g.window; e++) {
      const x = p - g.window + 1 + e;
      if (x < 0) continue;
      const slot = g.readSlot(e, plan.readPage0, plan.readPage1);
      if (slot !== g.slotOf(x)) unconditional = true;
      else if (x < p) readMask |= bit(x - ws);
    }
  }
  return finish(w, 1, [[p, plan.writeLoc]], readMask, unconditional, true);
}

function finish(
  w: WindowSlots,
  tokens: number,
  writes: ReadonlyArray<[number, number]>,
  readMask: bigint,
  unconditional: boolean,
  readsAfterWrite: boolean,
): BatchEffect {
  const { prefix: p, start: ws } = w;
  const lastBySlot = new Map<number, number>();
  for (const [x, slot] of writes) {
    if (lastBySlot.has(slot)) unconditional = true; // the simulator's in-batch collision
    lastBySlot.set(slot, x);
  }
  const written = new Bits(tokens);
  const clobber = new Bits(p - ws);
  for (const [slot, x] of lastBySlot) {
    written.set(x - p);
    const hit = w.bySlot.get(slot);
    if (hit !== undefined) for (const j of hit) clobber.set(j);
  }
  return {
    readMask,
    clobber: clobber.toBigInt(),
    written: written.toBigInt(),
    readsAfterWrite,
    unconditional,
    tails: tailsOf(w.g, p, tokens, ws),
  };
}
function tailsOf(g: RingGeometry, p: number, tokens: number, ws: number): TailEffect[] {
  if (!g.paged) return NO_TAILS;
  const sps = g.swaPageSize;
  const tails: TailEffect[] = [];
  for (let b = (Math.floor(p / sps) + 1) * sps; b <= p + tokens; b += sps) {
    let oldMask = 0n;
    let batchMask = 0n;
    for (let x = b - g.cr; x < b; x++) {
      if (x < p) oldMask |= bit(x - ws);
      else batchMask |= bit(x - p);
    }
    tails.push({ end: b - p, oldMask, batchMask });
  }
  return tails.length === 0 ? NO_TAILS : tails;
}
