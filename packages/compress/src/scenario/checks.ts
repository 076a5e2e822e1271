/**
 * The checks of a compress scenario (`CompressScenarioRun`), folded into its report: every entry against the oracle
 * (with the ring reads that explain a wrong one), the ring rows a later window reads (bitwise), and the mirror and
 * online paths against the ring's.
 */
import { earliestFutureRead } from "@dsv4-kv/planner";
import { toBf16Bits } from "@dsv4-kv/online-mtp-controller/internal";
import type { RingCompressBackend } from "../backend.js";
import { CompressError } from "../errors.js";
import type { OnlineEntry } from "../online/types.js";
import type { CommittedRow, ScenarioMemory, ScenarioRequest } from "./memory.js";
import type { EntryOracle } from "./oracle.js";
import type { ResolvedScenarioOptions } from "./options.js";
import type {
  CompressScenarioReport,
  MirrorReport,
  OnlineMismatch,
  ScenarioBatchKind,
  WrongRingRow,
} from "./report.js";
import type { ScenarioBackends } from "./run.js";
import type { ShadowRing } from "./shadow.js";

/** Wrong ring reads a first wrong entry's cause names (a c128 window can have a hundred). */
const EXPLAINED_READS = 3;

/** Pools up to this many elements are read whole for the ring check (16 MiB of fp32). */
const WHOLE_POOL_READ_ELEMS = 1 << 22;

/** A checked entry, kept for the batch's online / mirror comparison. */
export interface BatchEntry {
  req: ScenarioRequest;
  position: number;
  values: Float32Array;
  /** The entry's bound against the oracle. */
  tolerance: number;
}

export class ScenarioChecks {
  constructor(
    private readonly o: ResolvedScenarioOptions,
    private readonly r: CompressScenarioReport,
    private readonly oracle: EntryOracle,
    private readonly mem: ScenarioMemory,
    private readonly shadow: ShadowRing,
    private readonly backends: ScenarioBackends,
    private readonly rowElems: number,
    /** the run's live requests (the same array, as it changes) */
    private readonly active: readonly ScenarioRequest[],
  ) {}

  /** The committed rows of the window of `q`, element by element (null: before position 0). */
  private windowRows(req: ScenarioRequest, q: number): (CommittedRow | null)[] {
    const w = this.o.window;
    const rows: (CommittedRow | null)[] = [];
    for (let e = 0; e < w; e++) {
      const x = q - w + 1 + e;
      if (x < 0) {
        rows.push(null);
        continue;
      }
      const row = req.rows.get(x);
      if (row === undefined) {
        throw new CompressError(
          "INTERNAL",
          "position",
          x,
          `window of ${q} needs an uncommitted position (scenario bug)`,
        );
      }
      rows.push(row);
    }
    return rows;
  }

  /** `ringFrom`: window positions below it were read from the ring (the batch's prefix; decode: all). */
  checkEntry(
    step: number,
    kind: ScenarioBatchKind,
    req: ScenarioRequest,
    q: number,
    ringFrom: number,
    values: Float32Array,
  ): number {
    const window = this.windowRows(req, q);
    const { want, tolerance, scale } = this.oracle.entry(window, q);
    this.r.entries++;
    this.r.entriesByKind[kind]++;
    let wrong = -1;
    for (let d = 0; d < want.length; d++) {
      const err = Math.abs(values[d]! - want[d]!);
      const abs = Number.isNaN(err) ? Number.POSITIVE_INFINITY : err;
      if (abs > this.r.maxAbsError) this.r.maxAbsError = abs;
      const rel = abs / scale[d]!;
      if (rel > this.r.maxRelError) this.r.maxRelError = rel;
      if (!(err <= tolerance) && wrong < 0) wrong = d;
    }
    if (wrong < 0) return tolerance;
    this.r.wrongEntries++;
    if (this.r.firstWrong !== null) return tolerance;
    this.r.firstWrong = {
      request: req.uid,
      slot: req.slot,
      position: q,
      step,
      batchKind: kind,
      channel: wrong,
      got: values[wrong]!,
      want: want[wrong]!,
      absError: Math.abs(values[wrong]! - want[wrong]!),
      tolerance,
      cause: this.explain(req, q, ringFrom, window, kind === "decode"),
    };
    return tolerance;
  }

  /** Which ring reads of the window were wrong, from the pre-batch shadow (decode: after the batch's own write). */
  private explain(
    req: ScenarioRequest,
    q: number,
    ringFrom: number,
    window: (CommittedRow | null)[],
    decode: boolean,
  ): string {
    const w = this.o.window;
    const bad: string[] = [];
    for (let e = 0; e < w; e++) {
      const x = q - w + 1 + e;
      const row = window[e];
      if (row === null || row === undefined || (!decode && x >= ringFrom)) continue;
      const stateRow = this.mem.slotOf(req, x);
      const holds = this.shadow.describe(stateRow, row.origin);
      if (!holds.startsWith("the committed token")) bad.push(`position ${x} (state row ${stateRow}) held ${holds}`);
    }
    if (bad.length === 0) return "no ring read of its window was wrong (a math or rounding fault)";
    const more = bad.length > EXPLAINED_READS ? `; and ${bad.length - EXPLAINED_READS} more` : "";
    return `the ring did not hold the committed tokens it read: ${bad.slice(0, EXPLAINED_READS).join("; ")}${more}`;
  }

  compareMirror(entries: { index: number }[], out: Float32Array, mirrorOut: Float32Array): void {
    const m = this.r.mirror as MirrorReport;
    const hd = this.o.headDim;
    for (const { index: i } of entries) {
      m.entries++;
      let bad = false;
      for (let d = 0; d < hd; d++) {
        const a = out[i * hd + d]!;
        const b = mirrorOut[i * hd + d]!;
        const diff = Math.abs(a - b);
        if (diff > m.maxAbsDiff || Number.isNaN(diff)) m.maxAbsDiff = Number.isNaN(diff) ? Infinity : diff;
        if (!(diff <= this.oracle.mirrorTolerance)) bad = true;
      }
      if (bad) m.entryMismatches++;
    }
  }

  compareOnline(step: number, online: OnlineEntry[], ring: BatchEntry[]): void {
    const byKey = new Map<string, BatchEntry>();
    for (const e of ring) byKey.set(`${e.req.slot + 1}:${e.position}`, e);
    const seen = new Set<string>();
    for (const e of online) {
      this.r.onlineEntries!++;
      const key = `${e.slot}:${e.position}`;
      seen.add(key);
      const match = byKey.get(key);
      if (match === undefined) {
        const req = this.active.find((a) => a.slot + 1 === e.slot);
        this.onlineMismatch({
          request: req?.uid ?? -1,
          position: e.position,
          step,
          kind: "missing-ring",
          channel: -1,
          online: Number.NaN,
          ring: Number.NaN,
        });
        continue;
      }
      for (let d = 0; d < e.values.length; d++) {
        const ring = match.values[d]!;
        if (Math.abs(e.values[d]! - ring) <= this.oracle.onlineTolerance(ring, match.tolerance)) continue;
        this.onlineMismatch({
          request: match.req.uid,
          position: e.position,
          step,
          kind: "values",
          channel: d,
          online: e.values[d]!,
          ring: match.values[d]!,
        });
        break;
      }
    }
    for (const [key, e] of byKey) {
      // c128 only: every committed chunk close must come out of both paths
      if (seen.has(key)) continue;
      this.onlineMismatch({
        request: e.req.uid,
        position: e.position,
        step,
        kind: "missing-online",
        channel: -1,
        online: Number.NaN,
        ring: Number.NaN,
      });
    }
  }

  private onlineMismatch(m: OnlineMismatch): void {
    this.r.onlineMismatches!++;
    if (this.r.firstOnlineMismatch === null) this.r.firstOnlineMismatch = m;
  }

  /** Every position a later window of a live request can read must hold its committed token bitwise. */
  checkRing(step: number): void {
    const ring = this.stateReader(this.backends.ring);
    const mirror = this.backends.mirror ? this.stateReader(this.backends.mirror) : null;
    for (const req of this.active) {
      const start = Math.max(0, earliestFutureRead(this.o.compressRatio, req.len));
      for (let x = start; x < req.len; x++) {
        const committed = req.rows.get(x)!;
        const row = this.mem.slotOf(req, x);
        this.r.ringRowsChecked++;
        const bits = ring(row);
        const ok = this.bitsEqual(bits, committed.row);
        if (mirror) this.compareMirrorRow(bits, mirror(row));
        if (ok) continue;
        this.r.wrongRingRows++;
        if (this.r.firstWrongRingRow !== null) continue;
        const wrong: WrongRingRow = {
          request: req.uid,
          slot: req.slot,
          position: x,
          row,
          step,
          holds: this.shadow.describe(row, committed.origin),
        };
        this.r.firstWrongRingRow = wrong;
      }
    }
  }

  /** Row reader: one read of the whole pool when it is small (a GPU copy per row is slow), else a read per row. */
  private stateReader(b: RingCompressBackend): (row: number) => Uint32Array | Uint16Array {
    const rows = this.mem.stateRows;
    if (rows * this.rowElems > WHOLE_POOL_READ_ELEMS) return (row) => b.readStateBits(row, 1);
    const all = b.readStateBits(0, rows);
    return (row) => all.subarray(row * this.rowElems, (row + 1) * this.rowElems);
  }

  private bitsEqual(bits: Uint32Array | Uint16Array, row: Float32Array): boolean {
    if (this.o.stateDtype === "fp32") {
      const want = new Uint32Array(row.buffer, row.byteOffset, row.length);
      for (let i = 0; i < want.length; i++) if (bits[i] !== want[i]) return false;
      return true;
    }
    for (let i = 0; i < row.length; i++) if (bits[i] !== toBf16Bits(row[i]!)) return false;
    return true;
  }

  private compareMirrorRow(a: Uint32Array | Uint16Array, b: Uint32Array | Uint16Array): void {
    const m = this.r.mirror as MirrorReport;
    m.ringRows++;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) {
        m.ringRowMismatches++;
        return;
      }
    }
  }
}
