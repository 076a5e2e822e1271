/**
 * Ring-residency checker (docs/reference/write-pad-and-residency.md#7-the-residency-checker). Drives one
 * request's compress-state ring through prefill chunks, decode steps, speculative verifies with any draft count
 * and accept length, and radix resumes, using the real planner (stage 0 and stage 1) and the kernels' consumption
 * rules (docs/reference/planner.md#8-how-kernels-consume-plans): a batch's compressions read the pre-batch ring,
 * then its writes land. Every ring read must return the committed value of its position (invariant R1); the first
 * violation is explained in words.
 *
 * Memory is O(ring + window), not O(batches): what a later batch can read is the window of committed positions
 * (`earliestFutureRead` on) and, for a radix resume, the last chunk of every completed SWA page; everything else
 * is dropped, and the facts an explanation needs (which batch wrote or committed a position) live with the entry.
 *
 * The write pad is injectable so the regression tests can replay the pre-fix planners.
 */
import { planDecode } from "./decode.js";
import { PlannerError } from "./errors.js";
import { optionalBoolean, requireInteger, requireOptionKeys } from "./inputs.js";
import { earliestFutureReadUnchecked, padForFormula, type PadFormula } from "./pad.js";
import { planPrefill } from "./prefill.js";
import { RingGeometry, compressReadSlot } from "./prove/geometry.js";
import type { ResidencyBatch } from "./prove/replay.js";
import { SeededRandom } from "./random.js";

export { compressReadSlot };

/** The most tokens one prefill batch of the residency simulator plans (the planner's uint16 lengths). */
export const MAX_PREFILL_TOKENS = 65535;

export interface ResidencyConfig {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  useReqRing?: boolean;
  /** Explicit pad (wins over `padFormula`). */
  writePad?: number;
  /** Default `derived`. */
  padFormula?: PadFormula;
}

interface SlotContent {
  position: number;
  version: number;
  writtenBy: string;
  /** The writing batch committed the position (false: a rejected draft). */
  committed: boolean;
}

/** One ring slot's content, as `slotContents()` reports it (`writtenAtStep` -1: restored by a radix resume). */
export interface RingSlotContent {
  slot: number;
  position: number;
  writtenAtStep: number;
  writtenBy: string;
  /** The writing batch committed the position (false: a rejected draft). */
  committed: boolean;
}

interface CommitInfo {
  version: number;
  by: string;
  /** The committing batch's plan wrote the position to the ring. */
  wroteIt: boolean;
}

/** A completed SWA page's last chunk, kept for radix resumes (paged c4). Absent from the map: all valid. */
interface FrozenTail {
  slots: Array<[number, SlotContent | undefined]>;
  commits: Array<[number, CommitInfo]>;
}

/** `read-write-race`: a ratio-2 verify block writes the slot its first row reads, with no order between them. */
export type ViolationKind = "stale-read" | "never-written" | "in-batch-collision" | "read-write-race";

export interface ResidencyViolation {
  kind: ViolationKind;
  /** Step (batch number, from 1) in which the violation showed. */
  step: number;
  batch: string;
  /** Position of the compression event that read the slot (absent for collisions). */
  compressAt?: number;
  /** Position whose committed value was needed. */
  position: number;
  slot: number;
  /** What the slot held: a position and the step that wrote it, or null when never written. */
  found: { position: number; writtenAtStep: number; writtenBy: string; rejectedDraft: boolean } | null;
  /** Which step committed the needed position, and whether that step's plan wrote it. */
  committedAtStep: number;
  committedBy: string;
  committedBatchWroteIt: boolean;
  message: string;
}

/** Violations kept in full (the count goes on): enough to explain a run without growing with it. */
export const KEPT_VIOLATIONS = 1000;

/** Version of a position restored from a frozen page tail that was intact: slot and commit agree. */
const RESTORED_VERSION = -1;

/** Stepwise simulator over one request (pool index 0, identity token maps). */
export class RingResidencySimulator {
  readonly compressRatio: number;
  readonly ringSize: number;
  readonly swaPageSize: number;
  readonly useReqRing: boolean;
  readonly writePad: number;
  readonly window: number;
  /** Committed length: positions [0, prefix) are final. */
  prefix = 0;
  step = 0;
  verifies = 0;
  /** The first KEPT_VIOLATIONS violations; `violationCount` counts them all. */
  readonly violations: ResidencyViolation[] = [];
  violationCount = 0;
  /** The ring's shape and addressing (shared with the residency prover). */
  readonly geometry: RingGeometry;
  private readonly paged: boolean;
  private readonly slots = new Map<number, SlotContent>();
  private readonly commits = new Map<number, CommitInfo>();
  /** Paged c4: completed pages whose tail is not intact (by page index), and the first page not yet frozen. */
  private readonly frozenTails = new Map<number, FrozenTail>();
  private frozenPages = 0;

  constructor(config: ResidencyConfig) {
    const g = new RingGeometry(config);
    this.geometry = g;
    this.compressRatio = g.cr;
    this.ringSize = g.ringSize;
    this.swaPageSize = g.swaPageSize;
    this.useReqRing = g.useReqRing;
    this.paged = g.paged;
    this.window = g.window;
    this.writePad =
      config.writePad !== undefined
        ? requireInteger("writePad", config.writePad, 0, 0x7fffffff)
        : padForFormula(config.padFormula ?? "derived", config.compressRatio, config.ringSize);
  }

  private ringOptions() {
    return this.geometry.planOptions();
  }

  /** Runs one batch of a sequence (a prefill, a verify, a decode or a radix resume). */
  run(batch: ResidencyBatch): void {
    if (batch.kind === "prefill") this.prefill(batch.tokens);
    else if (batch.kind === "verify") this.verify(batch.draftTokens, batch.accept);
    else if (batch.kind === "decode") this.decode();
    else this.radixResume(batch.prefix);
  }

  get firstViolation(): ResidencyViolation | null {
    return this.violations[0] ?? null;
  }

  /** A plain prefill or chunk of `tokens` tokens, all committed. */
  prefill(tokens: number): void {
    requireInteger("tokens", tokens, 1, MAX_PREFILL_TOKENS);
    this.extend(tokens, tokens, `prefill of ${tokens} token${tokens === 1 ? "" : "s"} at prefix ${this.prefix}`);
  }

  /** A verify batch of `draftTokens` tokens at [prefix, prefix + D), of which the first `accept` are kept. */
  verify(draftTokens: number, accept: number): void {
    requireInteger("draftTokens", draftTokens, 1, 65535);
    requireInteger("accept", accept, 1, draftTokens);
    this.verifies++;
    this.extend(draftTokens, accept, `verify of D=${draftTokens} at prefix ${this.prefix}, accept ${accept}`);
  }

  /** One non-speculative decode step (the decode kernel writes the token, then compresses if S % cr == 0). */
  decode(): void {
    const step = ++this.step;
    const p = this.prefix;
    const seqLen = p + 1;
    const description = `decode at position ${p}`;
    const plan = planDecode({ ...this.ringOptions(), seqLens: [seqLen] }).row(0);
    this.slots.set(plan.writeLoc, { position: p, version: step, writtenBy: description, committed: true });
    this.commits.set(p, { version: step, by: description, wroteIt: true });
    if (seqLen % this.compressRatio === 0) {
      const q = seqLen - 1;
      for (let e = 0; e < this.window; e++) {
        const x = q - this.window + 1 + e;
        if (x < 0) continue; // c4's overlap half is masked at q == 3
        this.checkRead(
          step,
          description,
          q,
          x,
          compressReadSlot(this.compressRatio, e, plan.readPage0, plan.readPage1),
        );
      }
    }
    this.advanceTo(seqLen);
  }

  /**
   * A radix-cache hit resumes a new request exactly at an SWA-page boundary inside the committed prefix,
   * sharing the pages (and, for paged c4, their rings). Only meaningful for the paged c4 ring: a request ring
   * is not shared.
   */
  radixResume(prefix: number): void {
    if (this.compressRatio !== 4 || this.useReqRing) {
      throw new PlannerError(
        "SIMULATION",
        "radixResume",
        prefix,
        "radix resume shares SWA-page rings, which only paged c4 has",
      );
    }
    requireInteger("prefix", prefix, 0, this.prefix);
    if (prefix % this.swaPageSize !== 0) {
      throw new PlannerError(
        "SIMULATION",
        "radixResume",
        prefix,
        `must be a multiple of swaPageSize ${this.swaPageSize}`,
      );
    }
    const page = prefix / this.swaPageSize;
    // Pages from `page` on are rewritten by the resumed request: what they held is stale for it.
    for (const slot of [...this.slots.keys()]) {
      if (Math.trunc(slot / this.ringSize) >= page) this.slots.delete(slot);
    }
    for (const x of [...this.commits.keys()]) if (x >= prefix) this.commits.delete(x);
    if (page >= 1 && page - 1 < this.frozenPages) this.thaw(page - 1);
    for (const m of [...this.frozenTails.keys()]) if (m >= page - 1) this.frozenTails.delete(m);
    this.frozenPages = Math.min(this.frozenPages, Math.max(page - 1, 0));
    this.prefix = prefix;
  }

  get clean(): boolean {
    return this.violationCount === 0;
  }

  /** What every written slot holds now, by slot (the picture `simulate residency --html` draws). */
  slotContents(): RingSlotContent[] {
    return [...this.slots]
      .sort((a, b) => a[0] - b[0])
      .map(([slot, c]) => ({
        slot,
        position: c.position,
        writtenAtStep: c.version,
        writtenBy: c.writtenBy,
        committed: c.committed,
      }));
  }

  /** Entries held (slots, commits, frozen page tails): bounded by the ring and window, not by the batches run. */
  retainedEntries(): number {
    let frozen = 0;
    for (const t of this.frozenTails.values()) frozen += t.slots.length + t.commits.length;
    return this.slots.size + this.commits.size + frozen;
  }

  /** Validity of each position of [earliestFutureRead(prefix), prefix), the state the residency prover keeps. */
  windowValidity(): boolean[] {
    const start = earliestFutureReadUnchecked(this.compressRatio, this.prefix);
    const out: boolean[] = [];
    for (let x = start; x < this.prefix; x++) out.push(x < 0 || this.holdsCommitted(x));
    return out;
  }

  private holdsCommitted(x: number): boolean {
    const need = this.commits.get(x);
    const held = this.slots.get(this.geometry.slotOf(x));
    return need !== undefined && held !== undefined && held.position === x && held.version === need.version;
  }

  private extend(tokens: number, accept: number, description: string): void {
    const step = ++this.step;
    const prefix = this.prefix;
    const seqLen = prefix + tokens;
    const { planC, planW, numCompress, numWrite } = planPrefill({
      ...this.ringOptions(),
      seqLens: [seqLen],
      extendLens: [tokens],
      writePadOverride: this.writePad,
    });
    // compress kernel first: it sees the pre-batch ring (docs/reference/planner.md#83-launch-order)
    for (let i = 0; i < numCompress; i++) {
      const c = planC.row(i);
      const q = c.seqLen - 1;
      for (let e = 0; e < c.bufferLen; e++) {
        const x = q - this.window + 1 + e;
        if (x < 0) continue;
        // buffer_len == 0 rows keep (-1, batch) pages; they read nothing from the ring.
        this.checkRead(step, description, q, x, compressReadSlot(this.compressRatio, e, c.readPage0, c.readPage1));
      }
    }
    // then the write kernel
    const writtenSlots = new Map<number, number>();
    const written = new Set<number>();
    for (let i = 0; i < numWrite; i++) {
      const w = planW.row(i);
      const p = prefix + w.raggedId;
      const earlier = writtenSlots.get(w.writeLoc);
      if (earlier !== undefined) {
        this.report({
          kind: "in-batch-collision",
          step,
          batch: description,
          position: p,
          slot: w.writeLoc,
          found: { position: earlier, writtenAtStep: step, writtenBy: description, rejectedDraft: false },
          committedAtStep: step,
          committedBy: description,
          committedBatchWroteIt: true,
          message:
            `step ${step} (${description}): positions ${earlier} and ${p} are both written to slot ${w.writeLoc}` +
            " in one batch",
        });
      }
      writtenSlots.set(w.writeLoc, p);
      this.slots.set(w.writeLoc, {
        position: p,
        version: step,
        writtenBy: description,
        committed: p < prefix + accept,
      });
      written.add(p);
    }
    for (let p = prefix; p < prefix + accept; p++) {
      this.commits.set(p, { version: step, by: description, wroteIt: written.has(p) });
    }
    this.advanceTo(prefix + accept);
  }

  /** Moves the prefix on and drops what no later batch can read. */
  private advanceTo(prefix: number): void {
    this.prefix = prefix;
    const start = earliestFutureReadUnchecked(this.compressRatio, prefix);
    if (this.paged) {
      while ((this.frozenPages + 1) * this.swaPageSize <= start) this.freeze(this.frozenPages++);
    } else {
      for (const x of this.commits.keys()) if (x < start) this.commits.delete(x);
    }
  }

  /** Paged c4: page `m` is complete and out of the window; keep its tail (what a resume at its end reads). */
  private freeze(m: number): void {
    const sps = this.swaPageSize;
    const tailStart = (m + 1) * sps - this.compressRatio;
    let intact = true;
    const tail: FrozenTail = { slots: [], commits: [] };
    for (let x = tailStart; x < (m + 1) * sps; x++) {
      const slot = this.geometry.slotOf(x);
      tail.slots.push([slot, this.slots.get(slot)]);
      const c = this.commits.get(x);
      if (c !== undefined) tail.commits.push([x, c]);
      if (!this.holdsCommitted(x)) intact = false;
    }
    if (!intact) this.frozenTails.set(m, tail);
    for (let s = m * this.ringSize; s < (m + 1) * this.ringSize; s++) this.slots.delete(s);
    for (let x = m * sps; x < (m + 1) * sps; x++) this.commits.delete(x);
  }

  /** Paged c4: a resume at the end of frozen page `m` reads its tail again. */
  private thaw(m: number): void {
    const tail = this.frozenTails.get(m);
    const sps = this.swaPageSize;
    if (tail === undefined) {
      for (let x = (m + 1) * sps - this.compressRatio; x < (m + 1) * sps; x++) {
        const by = `a batch before page ${m + 1}`;
        this.slots.set(this.geometry.slotOf(x), {
          position: x,
          version: RESTORED_VERSION,
          writtenBy: by,
          committed: true,
        });
        this.commits.set(x, { version: RESTORED_VERSION, by, wroteIt: true });
      }
      return;
    }
    for (const [slot, content] of tail.slots) if (content !== undefined) this.slots.set(slot, content);
    for (const [x, c] of tail.commits) this.commits.set(x, c);
  }

  private checkRead(step: number, batch: string, q: number, x: number, slot: number): void {
    const need = this.commits.get(x);
    const held = this.slots.get(slot);
    if (need === undefined) {
      throw new PlannerError(
        "SIMULATION",
        "position",
        x,
        `read at step ${step} of a position that was never committed (simulator bug)`,
      );
    }
    if (held !== undefined && held.position === x && held.version === need.version) return;
    let found: ResidencyViolation["found"] = null;
    let what: string;
    if (held === undefined) {
      what = `slot ${slot} was never written`;
    } else {
      const heldCommit = this.commits.get(held.position);
      const rejectedDraft = heldCommit !== undefined ? heldCommit.version !== held.version : !held.committed;
      found = { position: held.position, writtenAtStep: held.version, writtenBy: held.writtenBy, rejectedDraft };
      const draft = rejectedDraft ? " (a rejected draft)" : "";
      const by = `step ${held.version} (${held.writtenBy})`;
      what = `slot ${slot} holds position ${held.position}${draft}, written by ${by}`;
    }
    const why = need.wroteIt
      ? `it was written by step ${need.version} (${need.by}) and clobbered since`
      : `step ${need.version} (${need.by}) committed it but its plan never wrote it to the ring`;
    this.report({
      kind: held === undefined || !need.wroteIt ? "never-written" : "stale-read",
      step,
      batch,
      compressAt: q,
      position: x,
      slot,
      found,
      committedAtStep: need.version,
      committedBy: need.by,
      committedBatchWroteIt: need.wroteIt,
      message: `step ${step} (${batch}): the compression at position ${q} needs position ${x}, but ${what}; ${why}`,
    });
  }

  private report(v: ResidencyViolation): void {
    this.violationCount++;
    if (this.violations.length < KEPT_VIOLATIONS) this.violations.push(v);
  }
}

export interface ResidencyScenario extends ResidencyConfig {
  /** Draft tokens per verify (the largest, with `adaptive`). */
  draftTokens: number;
  /** Draw each verify's D uniformly from [1, draftTokens]. */
  adaptive?: boolean;
  /** Batches after the initial prefill; default 300. */
  steps?: number;
  seed?: number;
  /**
   * Length of the initial prefill; default random in [1, 2 * swaPageSize]. Past MAX_PREFILL_TOKENS it runs as
   * chunks of at most that many tokens (a batch plans at most that many).
   */
  initialPrefill?: number;
  /** Mix in plain chunks, decode steps and (paged c4) radix resumes; default true. */
  mixBatches?: boolean;
  /** Called after every step (progress bars). */
  onStep?: (step: number, total: number) => void;
  /**
   * Asked before every batch, the initial prefill's chunks included: true stops the run there (a time limit); the
   * run's `stopped` is then true and its report covers the batches that ran.
   */
  stop?: () => boolean;
  /** Called after every batch (the initial prefill and radix resumes included) with the simulator after it. */
  onBatch?: (batch: ResidencyBatch, simulator: RingResidencySimulator) => void;
}

export interface ResidencyReport {
  steps: number;
  verifies: number;
  violations: number;
  firstViolation: ResidencyViolation | null;
  writePad: number;
  finalPrefix: number;
}

/**
 * A random trajectory, run in slices so that a caller can show progress and stop it (Ctrl-C) between them:
 * an initial prefill, then verifies with random accepts, plus chunks, decodes and resumes.
 */
export class ResidencyScenarioRun {
  readonly total: number;
  done = 0;
  /** `stop` ended the run before its last batch. */
  stopped = false;
  private readonly sim: RingResidencySimulator;
  private readonly rng: SeededRandom;
  private readonly mix: boolean;
  private readonly adaptive: boolean;

  constructor(private readonly s: ResidencyScenario) {
    requireOptionKeys(s, "residency-scenario");
    this.sim = new RingResidencySimulator(s);
    requireInteger("draftTokens", s.draftTokens, 1, 65535);
    this.total = requireInteger("steps", s.steps ?? 300, 0, 10_000_000);
    // The generator keeps 32 bits: NaN, a fraction or 2^32 + k would silently run the seed 0 or k.
    this.rng = new SeededRandom(s.seed === undefined ? 1 : requireInteger("seed", s.seed, 0, 0xffffffff));
    this.mix = s.mixBatches === undefined || optionalBoolean("mixBatches", s.mixBatches);
    this.adaptive = optionalBoolean("adaptive", s.adaptive);
    if (s.stop !== undefined && typeof s.stop !== "function") {
      throw new PlannerError("INVALID_TYPE", "stop", s.stop, "must be a function () => boolean");
    }
    const initial =
      s.initialPrefill === undefined
        ? this.rng.int(1, 2 * s.swaPageSize)
        : requireInteger("initialPrefill", s.initialPrefill, 1, 2 ** 31 - 1);
    this.initialPrefill(initial);
  }

  /** Runs up to `batches` more batches; returns whether any are left (none once `stop` ended the run). */
  advance(batches: number): boolean {
    if (this.stopped) return false;
    const end = Math.min(this.total, this.done + batches);
    for (; this.done < end; this.done++) {
      if (this.stopAsked()) return false;
      this.randomBatch();
      this.s.onStep?.(this.done + 1, this.total);
    }
    return this.done < this.total;
  }

  /**
   * A large SWA page's initial prefix is more than one batch can plan: chunked, as a server chunks a long prompt,
   * each chunk a batch that `stop` can end the run before (2^31 tokens are 32,768 chunks: minutes of planning).
   */
  private initialPrefill(tokens: number): void {
    for (let left = tokens; left > 0; left -= MAX_PREFILL_TOKENS) {
      if (this.stopAsked()) return;
      this.runBatch({ kind: "prefill", tokens: Math.min(left, MAX_PREFILL_TOKENS) });
    }
  }

  private stopAsked(): boolean {
    if (this.s.stop?.() === true) this.stopped = true;
    return this.stopped;
  }

  /** One step's batch (or a radix resume and its chunk), drawn from the seeded generator. */
  private randomBatch(): void {
    const { sim, rng, s } = this;
    const r = this.mix ? rng.next() : 1;
    if (r < 0.05) {
      this.runBatch({ kind: "prefill", tokens: rng.int(1, 2 * sim.window + 3) });
    } else if (r < 0.1) {
      this.runBatch({ kind: "decode" });
    } else if (r < 0.12 && sim.geometry.paged && sim.prefix >= s.swaPageSize) {
      const k = rng.int(1, Math.floor(sim.prefix / s.swaPageSize));
      this.runBatch({ kind: "radixResume", prefix: k * s.swaPageSize });
      this.runBatch({ kind: "prefill", tokens: rng.int(1, 2 * sim.window + 3) });
    } else {
      const d = this.adaptive ? rng.int(1, s.draftTokens) : s.draftTokens;
      this.runBatch({ kind: "verify", draftTokens: d, accept: rng.int(1, d) });
    }
  }

  private runBatch(batch: ResidencyBatch): void {
    this.sim.run(batch);
    this.s.onBatch?.(batch, this.sim);
  }

  report(): ResidencyReport {
    return {
      steps: this.sim.step,
      verifies: this.sim.verifies,
      violations: this.sim.violationCount,
      firstViolation: this.sim.firstViolation,
      writePad: this.sim.writePad,
      finalPrefix: this.sim.prefix,
    };
  }
}

/** Random trajectory: initial prefill, then verifies with random accepts, plus chunks, decodes and resumes. */
export function runResidencyScenario(s: ResidencyScenario): ResidencyReport {
  const run = new ResidencyScenarioRun(s);
  run.advance(run.total);
  return run.report();
}
