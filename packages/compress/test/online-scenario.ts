/**
 * The online driver's test scenario and oracle (shared by online-driver.test.ts and online-driver-gpu.test.ts).
 *
 * A seeded run of many steps over several requests: extend chunks of random lengths (new requests, chunked prefill
 * continuations, resumes at a chunk boundary), decodes, and verifies with random accepts and (adaptive) random D.
 * The oracle keeps, per request, the COMMITTED tokens of its open chunk only: a rejected draft is never appended,
 * and the next step feeds fresh data at its positions, so a leaked draft or a lost commit changes an entry. Every
 * committed chunk close must come back exactly once, in order (slot, then position), equal to the float64 offline
 * softmax pooling of its 128 committed tokens within the stated bound: fp32 state `STATE_TOLERANCE.fp32`; bf16
 * state the bound derived from the kernels' store points (docs/reference/online-mtp.md §5.4, `ChunkReference`).
 */
import {
  CHUNK_TOKENS,
  HEAD_DIM,
  KV_SCORE_COLS,
  type OnlineMtpBackend,
  type StateDtype,
} from "@dsv4-kv/online-mtp-controller";
import { STATE_TOLERANCE } from "@dsv4-kv/online-mtp-controller/internal";
import { ChunkReference } from "@dsv4-kv/online-mtp-controller/testing";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import { offlineCompress, windowOf } from "../src/oracle.js";
import { OnlineC128Driver } from "../src/online/driver.js";
import type { OnlineEntry, OnlineRequestStep, OnlineStepKind } from "../src/online/types.js";

const H = HEAD_DIM;

export function gaussian(rng: SeededRandom): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export function randomRows(rng: SeededRandom, rows: number, scoreShift = 0): Float32Array {
  const m = new Float32Array(rows * KV_SCORE_COLS);
  for (let i = 0; i < m.length; i++) m[i] = gaussian(rng) + (i % KV_SCORE_COLS >= H ? scoreShift : 0);
  return m;
}

/** The float64 oracle (the package's `offlineCompress`) of one chunk's 128 committed token rows. */
export function offlineEntry(rows: readonly Float32Array[], ape: Float32Array): Float64Array {
  const elements = windowOf(CHUNK_TOKENS, H, (p) => rows[p], CHUNK_TOKENS - 1);
  return offlineCompress({ compressRatio: CHUNK_TOKENS, headDim: H, ape, elements });
}

/** What the oracle expects of one committed chunk close. */
export interface ExpectedEntry {
  slot: number;
  position: number;
  values: Float64Array;
  /** Per channel |entry − values| allowed. */
  bound: Float64Array;
}

/** One request's committed tokens of its open chunk, and the bf16 reference of its stores. */
export class RequestModel {
  committed = 0;
  rows: Float32Array[] = [];
  ref: ChunkReference;

  constructor(
    readonly slot: number,
    private readonly ape: Float32Array,
    private readonly dtype: StateDtype,
  ) {
    this.ref = new ChunkReference(H, dtype === "bf16");
  }

  /** A new request on the slot (after resetSlot), resuming at a chunk boundary. */
  restart(prefix: number): void {
    this.committed = prefix;
    this.rows = [];
    this.ref = new ChunkReference(H, this.dtype === "bf16");
  }

  /**
   * Commits `count` rows of `tokens` (from row 0); returns the chunk closes. The kernels store the row once per
   * step that leaves it inside a chunk (bf16 rounding points, docs/reference/online-mtp.md §5.4): an extend's
   * trailing segment, a decode token, a verify's commit of bank a (bank 0 folded with the a kept tokens).
   */
  commit(tokens: Float32Array, count: number): ExpectedEntry[] {
    const out: ExpectedEntry[] = [];
    for (let i = 0; i < count; i++) {
      const p = this.committed;
      const row = tokens.slice(i * KV_SCORE_COLS, (i + 1) * KV_SCORE_COLS);
      if (p % CHUNK_TOKENS === 0) this.rows = [];
      this.rows.push(row);
      const apeRow = this.ape.subarray((p % CHUNK_TOKENS) * H, ((p % CHUNK_TOKENS) + 1) * H);
      this.ref.append({ kvScore: row, ape: apeRow });
      this.committed++;
      if (p % CHUNK_TOKENS === CHUNK_TOKENS - 1) out.push(this.expect(p));
    }
    if (this.committed % CHUNK_TOKENS !== 0) this.ref.store();
    return out;
  }

  private expect(position: number): ExpectedEntry {
    const values = offlineEntry(this.rows, this.ape);
    const bound = new Float64Array(H);
    if (this.dtype === "bf16") {
      // the derived bound is against the exact sequential fold; 1e-9 covers its float64 distance to the oracle
      const mean = this.ref.meanBound();
      for (let d = 0; d < H; d++) bound[d] = mean[d]! + 1e-9;
    } else {
      const tol = STATE_TOLERANCE.fp32;
      for (let d = 0; d < H; d++) bound[d] = tol.atol + tol.rtol * Math.abs(values[d]!);
    }
    return { slot: this.slot, position, values, bound };
  }
}

export interface ScenarioOptions {
  seed: number;
  /** Request slots in use (slots 1 .. requests). */
  requests: number;
  steps: number;
  maxDraftTokens: number;
  stateDtype: StateDtype;
  /** A random D in [1, maxDraftTokens] per verify (else D = maxDraftTokens). */
  adaptive: boolean;
}

export interface ScenarioReport {
  steps: Record<OnlineStepKind, number>;
  /** Entries returned (each compared with the oracle). */
  entries: number;
  /** Entries the oracle expected (committed chunk closes). */
  expected: number;
  /** Entries outside their bound, or at an unexpected (slot, position), or missing. */
  wrong: number;
  maxAbsError: number;
  /** max |entry − oracle| / bound over every channel (<= 1: all inside). */
  maxRatio: number;
  /** Verifies where some draft was rejected (accept < D). */
  rejections: number;
  /** Entries returned by verify steps (chunks closed inside a verify window). */
  verifyEntries: number;
  /** Every entry, in the order returned, for comparing backends. */
  all: OnlineEntry[];
  /** Their bounds (same order). */
  bounds: Float64Array[];
  firstWrong: string | null;
}

/** Runs the scenario on `backend`; checks every step's entries against the oracle. */
export function runDriverScenario(backend: OnlineMtpBackend, o: ScenarioOptions): ScenarioReport {
  const rng = new SeededRandom(o.seed);
  const ape = randomRows(rng, CHUNK_TOKENS / 2); // 128 × 512 = 64 rows of 1024
  const N = o.requests + 1;
  const driver = new OnlineC128Driver({
    backend,
    numReqSlots: N,
    maxDraftTokens: o.maxDraftTokens,
    stateDtype: o.stateDtype,
    ape,
  });
  const models = new Map<number, RequestModel>();
  const free = Array.from({ length: o.requests }, (_, i) => i + 1);
  const report: ScenarioReport = {
    steps: { extend: 0, verify: 0, decode: 0 },
    entries: 0,
    expected: 0,
    wrong: 0,
    maxAbsError: 0,
    maxRatio: 0,
    rejections: 0,
    verifyEntries: 0,
    all: [],
    bounds: [],
    firstWrong: null,
  };
  const fail = (why: string) => {
    report.wrong++;
    report.firstWrong ??= why;
  };

  const pickBatch = (): RequestModel[] => {
    const pool = [...models.values()];
    const n = rng.int(1, pool.length);
    return Array.from({ length: n }, () => pool.splice(rng.int(0, pool.length - 1), 1)[0]!);
  };

  /** Lengths that often end a few tokens before a chunk boundary, so later verifies cross it. */
  const extendLength = (prefix: number): number => {
    if (rng.next() < 0.4) return CHUNK_TOKENS - 1 - ((prefix + rng.int(0, 6)) % CHUNK_TOKENS) + 1;
    return rng.int(1, 300);
  };

  const newRequests = (): { reqs: OnlineRequestStep[]; models: RequestModel[] } => {
    const reqs: OnlineRequestStep[] = [];
    const ms: RequestModel[] = [];
    const count = Math.min(free.length, rng.int(1, 2));
    for (let i = 0; i < count; i++) {
      const slot = free.splice(rng.int(0, free.length - 1), 1)[0]!;
      driver.resetSlot(slot);
      const m = new RequestModel(slot, ape, o.stateDtype);
      m.restart(rng.next() < 0.3 ? CHUNK_TOKENS * rng.int(1, 2) : 0); // a resume at a chunk boundary
      models.set(slot, m);
      ms.push(m);
      reqs.push({ slot, prefix: m.committed, kind: "extend", tokens: randomRows(rng, extendLength(m.committed)) });
    }
    return { reqs, models: ms };
  };

  const runStep = (kind: OnlineStepKind, reqs: OnlineRequestStep[], ms: RequestModel[]): void => {
    const got = driver.step(reqs);
    report.steps[kind]++;
    const expected: ExpectedEntry[] = [];
    reqs.forEach((r, i) => {
      const rows = r.tokens.length / KV_SCORE_COLS;
      const kept = kind === "verify" ? r.accept! : rows;
      expected.push(...ms[i]!.commit(r.tokens, kept));
    });
    expected.sort((a, b) => a.slot - b.slot || a.position - b.position);
    report.expected += expected.length;
    report.entries += got.length;
    if (kind === "verify") report.verifyEntries += got.length;
    const keys = (l: { slot: number; position: number }[]) => l.map((e) => `${e.slot}@${e.position}`).join(",");
    if (keys(got) !== keys(expected)) {
      fail(`${kind} step ${report.steps[kind]}: entries [${keys(got)}], expected [${keys(expected)}]`);
      return;
    }
    for (const [i, e] of got.entries()) {
      const x = expected[i]!;
      report.all.push(e);
      report.bounds.push(x.bound);
      let bad = -1;
      for (let d = 0; d < H; d++) {
        const err = Math.abs(e.values[d]! - x.values[d]!);
        const ratio = Number.isNaN(err) ? Number.POSITIVE_INFINITY : err / x.bound[d]!;
        if (err > report.maxAbsError || Number.isNaN(err)) report.maxAbsError = Number.isNaN(err) ? Infinity : err;
        if (ratio > report.maxRatio) report.maxRatio = ratio;
        if (!(err <= x.bound[d]!) && bad < 0) bad = d;
      }
      if (bad >= 0) {
        const v = `${e.values[bad]} vs ${x.values[bad]} (bound ${x.bound[bad]})`;
        fail(`${kind} step ${report.steps[kind]}: slot ${e.slot} position ${e.position} channel ${bad}: ${v}`);
      }
    }
  };

  for (let s = 0; s < o.steps; s++) {
    const u = rng.next();
    if (models.size === 0 || (free.length > 0 && u < 0.12)) {
      const { reqs, models: ms } = newRequests();
      runStep("extend", reqs, ms);
    } else if (u < 0.22) {
      const ms = pickBatch();
      const reqs = ms.map((m): OnlineRequestStep => {
        const tokens = randomRows(rng, extendLength(m.committed));
        return { slot: m.slot, prefix: m.committed, kind: "extend", tokens };
      });
      runStep("extend", reqs, ms);
    } else if (u < 0.4) {
      const ms = pickBatch();
      const reqs = ms.map((m): OnlineRequestStep => {
        return { slot: m.slot, prefix: m.committed, kind: "decode", tokens: randomRows(rng, 1) };
      });
      runStep("decode", reqs, ms);
    } else {
      const D = o.adaptive ? rng.int(1, o.maxDraftTokens) : o.maxDraftTokens;
      const ms = pickBatch();
      const reqs = ms.map((m): OnlineRequestStep => {
        const accept = rng.int(1, D);
        if (accept < D) report.rejections++;
        return { slot: m.slot, prefix: m.committed, kind: "verify", tokens: randomRows(rng, D), accept };
      });
      runStep("verify", reqs, ms);
    }
    // a request finishes (its slot is free for a new request, which resets it); sometimes right after a verify
    if (models.size > 1 && rng.next() < 0.04) {
      const slot = [...models.keys()][rng.int(0, models.size - 1)]!;
      models.delete(slot);
      free.push(slot);
    }
  }
  driver.dispose();
  return report;
}
