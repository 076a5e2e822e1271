/**
 * The checks of the simulated scenario (`runSimulation`), and the account they keep: lost commits, bank 0 against
 * the float64 sequential reference, emitted entries against offline pooling, and the violations listed.
 */
import type { OnlineMtpBackend } from "./backend.js";
import { ChunkReference, emptyRowErrorStats } from "./bf16-reference.js";
import { CHUNK_TOKENS, HEAD_DIM } from "./constants.js";
import type { OnlineMtpController } from "./controller.js";
import { type ErrorStats, REL_FLOOR, type TokenInput, compareRowsOf, foldMaxError, offlinePool } from "./math.js";
import type { Bf16Summary, PositionErrorStats, SimulationViolation } from "./simulate.js";

const H = HEAD_DIM;

/** A request of the scenario as the reference sees it. */
export interface SimRequest {
  slot: number;
  len: number;
  /** per layer: the references of the open chunk, and its tokens (for offline pooling). */
  ref: ChunkReference[];
  chunkTokens: TokenInput[][];
  /** outstanding verify outcome awaiting its commit: snapshot of bank a (raw bits) per layer, or null. */
  expectCommit: (Uint32Array | Uint16Array)[] | null;
}

/** A chunk closed by a prefill launch: its output row, its 128 tokens and (bf16) the derived bound per channel. */
export interface Closing {
  outRow: number;
  tokens: TokenInput[];
  bound: Float64Array | null;
}

const POSITION_BUCKETS: readonly [number, number][] = [
  [0, 0],
  [1, 7],
  [8, 31],
  [32, 63],
  [64, 95],
  [96, 126],
];

function reasonOf(lost: number, violations: number, byKind: Map<string, number>): string | null {
  const parts: string[] = [];
  if (lost > 0) parts.push(`${lost} lost commit${lost === 1 ? "" : "s"}`);
  if (violations > 0) {
    const kinds = [...byKind].map(([k, n]) => `${n} ${k}`).join(", ");
    parts.push(`${violations} element${violations === 1 ? "" : "s"} outside the bound (${kinds})`);
  }
  return parts.length === 0 ? null : parts.join("; ");
}

export interface ChecksSetup {
  backend: OnlineMtpBackend;
  controller: OnlineMtpController;
  numLayers: number;
  /** bf16 state checked against the derived bound (else `tol`) */
  bf16: boolean;
  tol: { atol: number; rtol: number };
  maxListed: number;
}

/** Every check of one simulated run and the counts they fold into. */
export class SimulationChecks {
  readonly err: ErrorStats = { maxAbsError: 0, maxRelError: 0, violations: 0 };
  commits = 0;
  lostCommits = 0;
  emittedEntries = 0;
  maxEmittedAbsError = 0;
  private readonly details: SimulationViolation[] = [];
  private readonly byKind = new Map<string, number>();
  private readonly byPosition: PositionErrorStats[] = POSITION_BUCKETS.map(([firstPosition, lastPosition]) => ({
    firstPosition,
    lastPosition,
    ...emptyRowErrorStats(),
  }));
  private maxRoundings = 0;

  constructor(private readonly setup: ChecksSetup) {}

  /** The kernels' bound for a chunk closed without a stored partial (extend segments start at offset 0). */
  freshBound(tokens: TokenInput[]): Float64Array | null {
    return this.setup.bf16 ? new ChunkReference(H, true).emittedBound(tokens) : null;
  }

  /** After a forward containing `reqs` (commit done): lost-commit check, then bank 0 vs reference. */
  afterCommit(reqs: readonly SimRequest[]): void {
    const { backend: be, controller: ctrl, numLayers: L } = this.setup;
    for (const req of reqs) {
      if (req.expectCommit) {
        this.commits++;
        this.checkCommit(req);
        req.expectCommit = null;
      }
      // Bank 0 is meaningless at an exact boundary (docs/reference/online-mtp.md §10).
      if (req.len % CHUNK_TOKENS === 0) continue;
      for (let l = 0; l < L; l++) this.checkBank0(req, l, be.readStateRows(ctrl.layers[l]!, req.slot, 1));
    }
  }

  /** Bank 0 of every layer is bitwise the snapshot of the bank the accept length selected; else one LOST commit. */
  private checkCommit(req: SimRequest): void {
    const { backend: be, controller: ctrl, numLayers: L } = this.setup;
    for (let l = 0; l < L; l++) {
      const got = be.readStateBits(ctrl.layers[l]!, req.slot, 1);
      const want = req.expectCommit![l]!;
      let differing = 0;
      for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) differing++;
      if (differing === 0) continue;
      this.lostCommits++;
      const at = { layer: l, request: req.slot, row: req.slot, length: req.len };
      const pos = { position: (req.len - 1) % CHUNK_TOKENS, roundings: req.ref[l]!.roundings };
      const v = { element: "row", channel: -1, actual: differing, expected: 0, error: differing, bound: 0 } as const;
      this.record({ kind: "lost-commit", ...at, ...pos, ...v });
      return;
    }
  }

  /** Bank 0 of `req` in layer `l` against its references (bf16: derived bounds; fp32: the stated tolerance). */
  private checkBank0(req: SimRequest, l: number, row: Float32Array): void {
    const ref = req.ref[l]!;
    const at = { layer: l, request: req.slot, row: req.slot, length: req.len, position: (req.len - 1) % CHUNK_TOKENS };
    if (ref.roundings > this.maxRoundings) this.maxRoundings = ref.roundings;
    if (!this.setup.bf16) {
      const want = ref.exactRow();
      compareRowsOf(row, want, this.setup.tol, this.err, REL_FLOOR, (i, e, bound) => {
        const element = (["max", "sum", "acc"] as const)[Math.floor(i / H)]!;
        const v = {
          element,
          channel: i % H,
          actual: row[i]!,
          expected: want[i]!,
          error: Number.isNaN(e) ? Infinity : e,
        };
        this.record({ kind: "allclose-vs-exact", ...at, roundings: ref.roundings, ...v, bound });
      });
      return;
    }
    const bucket = this.byPosition.find((b) => at.position >= b.firstPosition && at.position <= b.lastPosition)!;
    // the max errors against the exact reference fold into `err` in the same pass
    this.err.violations += ref.checkRow(
      row,
      bucket,
      (v) => this.record({ ...v, ...at, roundings: ref.roundings }),
      this.err,
    );
  }

  /** The entry a prefill launch emitted for closed chunk `c` against offline softmax pooling of its tokens. */
  emitted(l: number, outHost: Float32Array, c: Closing, req: SimRequest): void {
    const { tol } = this.setup;
    const expect = offlinePool(c.tokens, H);
    const acc = expect.subarray(2 * H, 3 * H);
    const got = outHost.subarray(c.outRow * H, (c.outRow + 1) * H);
    const st: ErrorStats = { maxAbsError: 0, maxRelError: 0, violations: 0 };
    this.emittedEntries++;
    for (let d = 0; d < H; d++) {
      const e = Math.abs(got[d]! - acc[d]!);
      if (got[d] !== acc[d]) foldMaxError(st, e, acc[d]!, REL_FLOOR);
      const bound = c.bound ? c.bound[d]! : tol.atol + tol.rtol * Math.abs(acc[d]!);
      if (e <= bound) continue;
      this.err.violations++;
      const at = { layer: l, request: req.slot, row: c.outRow, length: req.len, position: CHUNK_TOKENS - 1 };
      const v = { channel: d, actual: got[d]!, expected: acc[d]!, error: Number.isNaN(e) ? Infinity : e, bound };
      this.record({ kind: "emitted-vs-offline", ...at, roundings: req.ref[l]!.roundings, element: "acc", ...v });
    }
    if (st.maxAbsError > this.maxEmittedAbsError) this.maxEmittedAbsError = st.maxAbsError;
  }

  private record(v: SimulationViolation): void {
    this.byKind.set(v.kind, (this.byKind.get(v.kind) ?? 0) + 1);
    if (this.details.length < this.setup.maxListed) this.details.push(v);
  }

  /** The verdict: ok, its reason, the violations listed and (bf16, derived bound) the summary by position. */
  verdict(): { ok: boolean; reason: string | null; violationDetails: SimulationViolation[]; bf16: Bf16Summary | null } {
    const byPosition = this.byPosition;
    const bf16: Bf16Summary | null = this.setup.bf16
      ? {
          maxRatio: Math.max(...byPosition.flatMap((b) => Object.values(b.maxRatio))),
          maxRoundedUlps: Math.max(...byPosition.map((b) => b.maxRoundedUlps)),
          maxRoundings: this.maxRoundings,
          byPosition,
        }
      : null;
    return {
      ok: this.lostCommits === 0 && this.err.violations === 0,
      reason: reasonOf(this.lostCommits, this.err.violations, this.byKind),
      violationDetails: this.details,
      bf16,
    };
  }
}
