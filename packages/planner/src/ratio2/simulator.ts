/**
 * The ratio-2 pair-state ring of one request, batch by batch (docs/reference/ratio2-pair-ring.md): extend chunks,
 * decode steps and verify blocks with any accept length, each reading and writing the ring as `pairBatchAccess`
 * says. Every read of a committed partner must find that position's committed state in its slot, not a rejected
 * draft, a later position, a slot the same block writes concurrently or an empty slot; the first violation is
 * explained in words, as the c4/c128 residency simulator does.
 */
import { PlannerError } from "../errors.js";
import { optionalBoolean, requireInteger, requireOptionKeys } from "../inputs.js";
import { type ReplayControl, type ReplayResult, type ResidencyBatch, replayOn } from "../prove/replay.js";
import { SeededRandom } from "../random.js";
import { KEPT_VIOLATIONS, type ResidencyViolation, type RingSlotContent } from "../residency.js";
import { type PairBatch, type PairRingConfig, type PairRingRead, pairBatchAccess, pairRingConfig } from "./access.js";

interface PairSlot {
  position: number;
  step: number;
  by: string;
  /** The writing batch committed the position (false: a rejected draft). */
  committed: boolean;
  /** Another position the same concurrent block wrote to this slot: the slot holds either. */
  racedWith: number | null;
}

/** Who committed the last committed position (the only one a later batch reads from the ring). */
interface LastCommit {
  position: number;
  step: number;
  by: string;
  /** The committing batch stored the position in the ring. */
  wroteIt: boolean;
  writer: string;
}

const WRITER_RULE: Record<string, string> = {
  torch: "the torch writer stores only the last R₂ rows of a request",
  "verify-fused": "the verify grid stores only even positions",
  decode: "a decode step stores only an even position",
};

/** Stepwise simulator of one request's pair-state ring (request slot 0). */
export class PairRingSimulator {
  readonly compressRatio = 2;
  readonly ringSize: number;
  readonly verifyWriter: Required<PairRingConfig>["verifyWriter"];
  prefix = 0;
  step = 0;
  verifies = 0;
  readonly violations: ResidencyViolation[] = [];
  violationCount = 0;
  private readonly config: Required<PairRingConfig>;
  private readonly slots = new Map<number, PairSlot>();
  private lastCommit: LastCommit | null = null;

  constructor(config: PairRingConfig) {
    this.config = pairRingConfig(config);
    this.ringSize = this.config.ringSize;
    this.verifyWriter = this.config.verifyWriter;
  }

  /** Runs one batch of a sequence; a radix resume is refused (the pair state is request-scoped, never shared). */
  run(batch: ResidencyBatch): void {
    if (batch.kind === "prefill") this.prefill(batch.tokens);
    else if (batch.kind === "verify") this.verify(batch.draftTokens, batch.accept);
    else if (batch.kind === "decode") this.decode();
    else {
      const rule =
        "the pair state is request-scoped: a radix hit gives the new request a cleared ring, not shared pages";
      throw new PlannerError("SIMULATION", "radixResume", batch.prefix, rule);
    }
  }

  get firstViolation(): ResidencyViolation | null {
    return this.violations[0] ?? null;
  }

  get clean(): boolean {
    return this.violationCount === 0;
  }

  /** An extend chunk of `tokens` tokens, all committed (the torch writer). */
  prefill(tokens: number): void {
    requireInteger("tokens", tokens, 1, 65535);
    const at = this.prefix;
    this.batch(
      { kind: "prefill", tokens },
      tokens,
      `prefill of ${tokens} token${tokens === 1 ? "" : "s"} at prefix ${at}`,
    );
  }

  /** A verify block of `draftTokens` rows at [prefix, prefix + D), of which the first `accept` are kept. */
  verify(draftTokens: number, accept: number): void {
    requireInteger("draftTokens", draftTokens, 1, 65535);
    requireInteger("accept", accept, 1, draftTokens);
    this.verifies++;
    this.batch(
      { kind: "verify", draftTokens },
      accept,
      `verify of D=${draftTokens} at prefix ${this.prefix}, accept ${accept}`,
    );
  }

  /** One decode step. */
  decode(): void {
    this.batch({ kind: "decode" }, 1, `decode at position ${this.prefix}`);
  }

  /** What every written slot holds now, by slot. */
  slotContents(): RingSlotContent[] {
    return [...this.slots]
      .sort((a, b) => a[0] - b[0])
      .map(([slot, c]) => ({
        slot,
        position: c.position,
        writtenAtStep: c.step,
        writtenBy: c.by,
        committed: c.committed,
      }));
  }

  /** Whether the slot of the last committed position holds it: the one fact a later batch can observe. */
  lastCommittedHeld(): boolean {
    const need = this.lastCommit;
    if (need === null) return true;
    const held = this.slots.get(need.position % this.ringSize);
    return held !== undefined && held.position === need.position && held.step === need.step && held.racedWith === null;
  }

  private batch(batch: PairBatch, accept: number, description: string): void {
    const step = ++this.step;
    const prefix = this.prefix;
    const access = pairBatchAccess(this.config, batch, prefix);
    // the decode and torch writers read before they write; the verify grid's read races with its writes
    if (access.read !== null) {
      const racing = access.concurrent ? access.writes.find((w) => w.slot === access.read!.slot) : undefined;
      this.checkRead(step, description, access.read, racing?.position ?? null);
    }
    const written = new Set<number>();
    const bySlot = new Map<number, number>();
    for (const w of access.writes) {
      const earlier = bySlot.get(w.slot);
      const racedWith = access.concurrent && earlier !== undefined ? earlier : null;
      bySlot.set(w.slot, w.position);
      this.slots.set(w.slot, {
        position: w.position,
        step,
        by: description,
        committed: w.position < prefix + accept,
        racedWith,
      });
      written.add(w.position);
    }
    const last = prefix + accept - 1;
    this.lastCommit = { position: last, step, by: description, wroteIt: written.has(last), writer: access.writer };
    this.prefix = prefix + accept;
  }

  private checkRead(step: number, batch: string, read: PairRingRead, racingPosition: number | null): void {
    const need = this.lastCommit;
    if (need === null || need.position !== read.position) {
      throw new PlannerError(
        "SIMULATION",
        "position",
        read.position,
        `read at step ${step} before it was committed (simulator bug)`,
      );
    }
    const held = this.slots.get(read.slot);
    const intact = held !== undefined && held.position === need.position && held.step === need.step;
    if (intact && held.racedWith === null && racingPosition === null) return;
    let kind: ResidencyViolation["kind"];
    let what: string;
    let found: ResidencyViolation["found"] = null;
    if (held !== undefined) {
      const rejectedDraft = !held.committed;
      found = { position: held.position, writtenAtStep: held.step, writtenBy: held.by, rejectedDraft };
    }
    if (racingPosition !== null) {
      kind = "read-write-race";
      what = `the same block writes position ${racingPosition} to that slot concurrently (the verify grid orders no rows)`;
    } else if (held === undefined) {
      kind = "never-written";
      what = "the slot was never written";
    } else if (held.racedWith !== null) {
      kind = "in-batch-collision";
      what = `positions ${held.racedWith} and ${held.position} of step ${held.step} (${held.by}) wrote it concurrently`;
    } else {
      kind = need.wroteIt ? "stale-read" : "never-written";
      const draft = held.committed ? "" : " (a rejected draft)";
      what = `the slot holds position ${held.position}${draft}, written by step ${held.step} (${held.by})`;
    }
    const why = need.wroteIt
      ? `it was written by step ${need.step} (${need.by})${racingPosition === null ? " and clobbered since" : ""}`
      : `step ${need.step} (${need.by}) committed it but never stored it (${WRITER_RULE[need.writer]})`;
    this.report({
      kind,
      step,
      batch,
      compressAt: read.reader,
      position: read.position,
      slot: read.slot,
      found,
      committedAtStep: need.step,
      committedBy: need.by,
      committedBatchWroteIt: need.wroteIt,
      message:
        `step ${step} (${batch}): position ${read.reader} pools with its partner, position ${read.position}, from ` +
        `ring slot ${read.slot}, but ${what}; ${why}`,
    });
  }

  private report(v: ResidencyViolation): void {
    this.violationCount++;
    if (this.violations.length < KEPT_VIOLATIONS) this.violations.push(v);
  }
}

export interface PairRingScenario extends PairRingConfig {
  /** Verify width (the largest, with `adaptive`). */
  draftTokens: number;
  adaptive?: boolean;
  /** Batches after the initial prefill; default 300. */
  steps?: number;
  seed?: number;
  /** Length of the initial prefill; default random in [1, 2·R₂ + 3]. */
  initialPrefill?: number;
  /** Mix in extend chunks and decode steps; default true. */
  mixBatches?: boolean;
}

export interface PairRingReport {
  steps: number;
  verifies: number;
  violations: number;
  firstViolation: ResidencyViolation | null;
  finalPrefix: number;
}

/** A random run: an initial prefill, then verifies with random accepts, mixed with chunks and decodes. */
export function runPairRingScenario(s: PairRingScenario): PairRingReport {
  requireOptionKeys(s, "pair-ring-scenario");
  const sim = new PairRingSimulator(s);
  const draft = requireInteger("draftTokens", s.draftTokens, 1, 65535);
  const steps = requireInteger("steps", s.steps ?? 300, 0, 10_000_000);
  const rng = new SeededRandom(s.seed === undefined ? 1 : requireInteger("seed", s.seed, 0, 0xffffffff));
  const mix = s.mixBatches === undefined || optionalBoolean("mixBatches", s.mixBatches);
  const adaptive = optionalBoolean("adaptive", s.adaptive);
  const chunkMax = 2 * sim.ringSize + 3;
  const initial =
    s.initialPrefill === undefined
      ? rng.int(1, chunkMax)
      : requireInteger("initialPrefill", s.initialPrefill, 1, 65535);
  sim.prefill(initial);
  for (let i = 0; i < steps; i++) {
    const r = mix ? rng.next() : 1;
    if (r < 0.1) sim.prefill(rng.int(1, chunkMax));
    else if (r < 0.3) sim.decode();
    else {
      const d = adaptive ? rng.int(1, draft) : draft;
      sim.verify(d, rng.int(1, d));
    }
  }
  return {
    steps: sim.step,
    verifies: sim.verifies,
    violations: sim.violationCount,
    firstViolation: sim.firstViolation,
    finalPrefix: sim.prefix,
  };
}

/** Runs a batch sequence (e.g. a pair-ring counterexample) on an empty pair ring. */
export function replayPairRing(
  config: PairRingConfig,
  batches: readonly ResidencyBatch[],
  control: ReplayControl<PairRingSimulator> = {},
): ReplayResult {
  return replayOn(new PairRingSimulator(config), batches, control);
}
