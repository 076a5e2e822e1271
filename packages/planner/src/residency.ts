/**
 * Ring-residency checker (spec §10, §14). Drives one request's compress-state ring through prefill chunks,
 * decode steps, speculative verifies with any draft count and accept length, and radix resumes, using the
 * real planner (stage 0 and stage 1) and the kernels' consumption rules (§9): a batch's compressions read the
 * pre-batch ring, then its writes land. Every ring read must return the committed value of its position
 * (invariant R1); the first violation is explained in words.
 *
 * The write pad is injectable so the regression tests can replay the pre-fix planners.
 */
import { PlannerError } from "./errors.js";
import { requireInteger, validateRing } from "./inputs.js";
import { padForFormula, windowSize, type PadFormula } from "./pad.js";
import { planDecode } from "./decode.js";
import { planPrefill } from "./prefill.js";
import { SeededRandom } from "./random.js";

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
}

interface BatchRecord {
  step: number;
  description: string;
  prefix: number;
  /** positions the batch's plan wrote to the ring (to say whether a lost position was ever written) */
  writtenPositions: Set<number>;
}

export type ViolationKind = "stale-read" | "never-written" | "in-batch-collision";

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
  readonly violations: ResidencyViolation[] = [];
  private readonly slots = new Map<number, SlotContent>();
  private readonly commitVersion = new Map<number, number>();
  private readonly batches: BatchRecord[] = [];

  constructor(config: ResidencyConfig) {
    validateRing(config);
    this.compressRatio = config.compressRatio;
    this.ringSize = config.ringSize;
    this.swaPageSize = config.swaPageSize;
    this.useReqRing = config.useReqRing ?? false;
    this.window = windowSize(config.compressRatio);
    this.writePad =
      config.writePad !== undefined
        ? requireInteger("writePad", config.writePad, 0, 0x7fffffff)
        : padForFormula(config.padFormula ?? "derived", config.compressRatio, config.ringSize);
  }

  private ringOptions() {
    return {
      compressRatio: this.compressRatio,
      ringSize: this.ringSize,
      swaPageSize: this.swaPageSize,
      useReqRing: this.useReqRing,
      reqPoolIndices: [0],
      reqToToken: { identity: { tokensPerReq: 0x7fffffff } },
    };
  }

  /** A plain prefill or chunk of `tokens` tokens, all committed. */
  prefill(tokens: number): void {
    requireInteger("tokens", tokens, 1, 65535);
    this.extend(tokens, tokens, `prefill of ${tokens} tokens at prefix ${this.prefix}`);
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
    const record: BatchRecord = {
      step,
      description: `decode at position ${p}`,
      prefix: p,
      writtenPositions: new Set([p]),
    };
    this.batches.push(record);
    const plan = planDecode({ ...this.ringOptions(), seqLens: [seqLen] }).row(0);
    this.slots.set(plan.writeLoc, { position: p, version: step });
    this.commitVersion.set(p, step);
    if (seqLen % this.compressRatio === 0) {
      const q = seqLen - 1;
      for (let e = 0; e < this.window; e++) {
        const x = q - this.window + 1 + e;
        if (x < 0) continue; // c4's overlap half is masked at q == 3
        this.checkRead(record, q, x, this.readSlot(e, plan.readPage0, plan.readPage1));
      }
    }
    this.prefix = seqLen;
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
    this.prefix = prefix;
  }

  get clean(): boolean {
    return this.violations.length === 0;
  }

  private readSlot(e: number, readPage0: number, readPage1: number): number {
    if (this.compressRatio === 4) return e < 4 ? readPage0 * 4 + e : readPage1 * 4 + (e - 4);
    return readPage1 * this.compressRatio + e;
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
    const record: BatchRecord = { step, description, prefix, writtenPositions: new Set() };
    this.batches.push(record);
    // compress kernel first: it sees the pre-batch ring (§9.3)
    for (let i = 0; i < numCompress; i++) {
      const c = planC.row(i);
      const q = c.seqLen - 1;
      for (let e = 0; e < c.bufferLen; e++) {
        const x = q - this.window + 1 + e;
        if (x < 0) continue;
        // buffer_len == 0 rows keep (-1, batch) pages; they read nothing from the ring.
        this.checkRead(record, q, x, this.readSlot(e, c.readPage0, c.readPage1));
      }
    }
    // then the write kernel
    const writtenSlots = new Map<number, number>();
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
          message: `step ${step} (${description}): positions ${earlier} and ${p} are both written to slot ${w.writeLoc} in one batch`,
        });
      }
      writtenSlots.set(w.writeLoc, p);
      this.slots.set(w.writeLoc, { position: p, version: step });
      record.writtenPositions.add(p);
    }
    for (let p = prefix; p < prefix + accept; p++) this.commitVersion.set(p, step);
    this.prefix = prefix + accept;
  }

  private checkRead(record: BatchRecord, q: number, x: number, slot: number): void {
    const needVersion = this.commitVersion.get(x);
    const held = this.slots.get(slot);
    if (needVersion === undefined) {
      throw new PlannerError(
        "SIMULATION",
        "position",
        x,
        `read at step ${record.step} of a position that was never committed (simulator bug)`,
      );
    }
    if (held !== undefined && held.position === x && held.version === needVersion) return;
    const committer = this.batches[needVersion - 1]!;
    const committedBatchWroteIt = committer.writtenPositions.has(x);
    let found: ResidencyViolation["found"] = null;
    let what: string;
    if (held === undefined) {
      what = `slot ${slot} was never written`;
    } else {
      const writer = this.batches[held.version - 1]!;
      const heldCommitted = this.commitVersion.get(held.position);
      const rejectedDraft = heldCommitted !== held.version;
      found = { position: held.position, writtenAtStep: held.version, writtenBy: writer.description, rejectedDraft };
      what = `slot ${slot} holds position ${held.position}${rejectedDraft ? " (a rejected draft)" : ""}, written by step ${held.version} (${writer.description})`;
    }
    const why = committedBatchWroteIt
      ? `it was written by step ${needVersion} (${committer.description}) and clobbered since`
      : `step ${needVersion} (${committer.description}) committed it but its plan never wrote it to the ring`;
    this.report({
      kind: held === undefined || !committedBatchWroteIt ? "never-written" : "stale-read",
      step: record.step,
      batch: record.description,
      compressAt: q,
      position: x,
      slot,
      found,
      committedAtStep: needVersion,
      committedBy: committer.description,
      committedBatchWroteIt,
      message: `step ${record.step} (${record.description}): the compression at position ${q} needs position ${x}, but ${what}; ${why}`,
    });
  }

  private report(v: ResidencyViolation): void {
    this.violations.push(v);
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
  /** Length of the initial prefill; default random in [1, 2 * swaPageSize]. */
  initialPrefill?: number;
  /** Mix in plain chunks, decode steps and (paged c4) radix resumes; default true. */
  mixBatches?: boolean;
  /** Called after every step (progress bars). */
  onStep?: (step: number, total: number) => void;
}

export interface ResidencyReport {
  steps: number;
  verifies: number;
  violations: number;
  firstViolation: ResidencyViolation | null;
  writePad: number;
  finalPrefix: number;
}

/** Random trajectory: initial prefill, then verifies with random accepts, plus chunks, decodes and resumes. */
export function runResidencyScenario(s: ResidencyScenario): ResidencyReport {
  const sim = new RingResidencySimulator(s);
  requireInteger("draftTokens", s.draftTokens, 1, 65535);
  const steps = requireInteger("steps", s.steps ?? 300, 0, 10_000_000);
  const rng = new SeededRandom(s.seed ?? 1);
  const mix = s.mixBatches ?? true;
  const paged = s.compressRatio === 4 && !s.useReqRing;
  sim.prefill(s.initialPrefill ?? rng.int(1, 2 * s.swaPageSize));
  for (let i = 0; i < steps; i++) {
    const r = mix ? rng.next() : 1;
    if (r < 0.05) {
      sim.prefill(rng.int(1, 2 * sim.window + 3));
    } else if (r < 0.1) {
      sim.decode();
    } else if (r < 0.12 && paged && sim.prefix >= s.swaPageSize) {
      const k = rng.int(1, Math.floor(sim.prefix / s.swaPageSize));
      sim.radixResume(k * s.swaPageSize);
      sim.prefill(rng.int(1, 2 * sim.window + 3));
    } else {
      const d = s.adaptive ? rng.int(1, s.draftTokens) : s.draftTokens;
      sim.verify(d, rng.int(1, d));
    }
    s.onStep?.(i + 1, steps);
  }
  return {
    steps: sim.step,
    verifies: sim.verifies,
    violations: sim.violations.length,
    firstViolation: sim.violations[0] ?? null,
    writePad: sim.writePad,
    finalPrefix: sim.prefix,
  };
}
