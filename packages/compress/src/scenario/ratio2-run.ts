/**
 * The DeepSeek-V4.1 ratio-2 compress path proved on data (docs/reference/deepseek-v4.1.md §10.5): random multi-request
 * DSpark scenarios (extend chunks of random lengths, decodes, verify blocks of D rows with a random accept per
 * request, requests arriving, finishing and their slots reused) run through the pair-state ring with SGLang's write
 * rules and addresses (the planner's ratio-2 arithmetic: slot req·R₂ + pos mod R₂, c2 out location raw // 2):
 * - decode: an even position parks its `| kv | score |` in its slot, an odd one pools with the slot of pos − 1;
 * - extend and verify (the torch writer): every row reads its partner (the batch's previous row of the request, else
 *   the ring) before any write, then the request's last min(rows, R₂) rows are written;
 * - verify with the fused writer (c2.cuh's verify grid): even rows write, odd rows read, reads first.
 * Every odd position of a batch stores its entry (CPU reference, latent.ts) at its c2 slot, rejected drafts too.
 * After each batch every committed entry of the batch must equal, byte for byte, the offline compression of its
 * committed pair, and lie within the derived bound of the float64 oracle; each ring row a next position reads must
 * hold its committed token bitwise. Token rows differ per attempt, so a ring too small for D shows as wrong entries.
 */
import {
  type PairStateWriter,
  lowRatioOutLoc,
  pairReadsRing,
  pairStateSlot,
  pairStateWrittenRows,
} from "@dsv4-kv/planner";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import { decodeEntry } from "../v41/layouts.js";
import { type LatentParams, compressRatio2 } from "../v41/latent.js";
import { oracleRatio2, v41EntryTolerance } from "../v41/oracle.js";
import { plainRopeTable } from "../v41/rope.js";
import { bf16Round } from "../v41/numerics.js";
import { type Ratio2ScenarioOptions, type ResolvedRatio2Options, resolveRatio2Options } from "./ratio2-options.js";
import type { Ratio2BatchKind, Ratio2ScenarioReport } from "./ratio2-report.js";
import { randomSubset } from "./subset.js";
import { type TokenOrigin, fillGarbage, fillTokenRow } from "./tokens.js";

/** A row of `| kv | score |` (fp32, 2 · 512). */
const ROW = 1024;
/** FULL pool page (tokens); its c2 page holds half as many entries. */
const PAGE = 256;
/** compress_rope_theta of V4.1-Flash (the table is plain RoPE: rope.ts). */
const ROPE_THETA = 160_000;

interface Req {
  uid: number;
  slot: number;
  len: number;
  promptLen: number;
  finishLen: number;
  pages: number[];
  /** Committed rows of the last positions (a next position pairs only with len − 1). */
  rows: Map<number, Float32Array>;
}

interface Part {
  req: Req;
  prefix: number;
  extend: number;
  accept: number;
}

/** Pair-state rows a scenario needs: `slots·R₂ + R₂ + 1`, rounded up to 2 (CompressStatePool's rows). */
export function ratio2StateRows(options: Ratio2ScenarioOptions): number {
  const o = resolveRatio2Options(options);
  const rows = o.requests * o.ringSize + o.ringSize + 1;
  return rows + (rows % 2);
}

/** A ratio-2 scenario run in slices (progress, time limit), like `CompressScenarioRun`. */
export class Ratio2ScenarioRun {
  readonly o: ResolvedRatio2Options;
  readonly total: number;
  done = 0;
  private step = 0;
  private readonly rng: SeededRandom;
  private readonly state: Float32Array;
  /** Who wrote each pair-state row (for the explanations). */
  private readonly stateOrigin = new Map<number, TokenOrigin>();
  /** The c2 pool: entry bytes by c2 slot. */
  private readonly cache = new Map<number, Uint8Array>();
  private readonly freePages: number[] = [];
  private readonly freeSlots: number[] = [];
  private readonly active: Req[] = [];
  private nextUid = 1;
  private readonly params: LatentParams;
  private readonly maxLen: number;
  private readonly r: Ratio2ScenarioReport;

  constructor(options: Ratio2ScenarioOptions) {
    this.o = resolveRatio2Options(options);
    const o = this.o;
    this.total = o.steps;
    this.rng = new SeededRandom(o.seed);
    this.maxLen = 6 * o.ringSize + 12 * o.draftTokens + 16;
    const reach = this.maxLen + 2 * o.ringSize + 2 * o.draftTokens + 8;
    const pagesPerReq = Math.ceil(reach / PAGE);
    // page 0 is the reserved null page (raw slot 0 marks a padded row)
    for (let p = o.requests * pagesPerReq; p >= 1; p--) this.freePages.push(p);
    for (let s = o.requests - 1; s >= 0; s--) this.freeSlots.push(s);
    this.state = new Float32Array(ratio2StateRows(options) * ROW);
    fillGarbage(o.seed, this.state);
    const normWeight = new Float32Array(512);
    fillTokenRow(o.seed, { uid: 0x7ffffffd, position: 0, step: 0 }, normWeight);
    for (let i = 0; i < 512; i++) normWeight[i] = bf16Round(1 + 0.5 * normWeight[i]!);
    this.params = {
      normWeight,
      eps: Math.fround(1e-6),
      ropeTable: plainRopeTable(reach + 1, ROPE_THETA),
      layout: o.layout,
    };
    this.r = emptyReport(o);
  }

  /** Runs up to `batches` more batches; returns whether any are left. */
  advance(batches: number): boolean {
    const end = Math.min(this.total, this.done + batches);
    for (; this.done < end; this.done++) {
      this.runStep();
      this.o.onStep?.(this.done + 1, this.total);
    }
    return this.done < this.total;
  }

  report(): Ratio2ScenarioReport {
    const r = this.r;
    return { ...r, batches: { ...r.batches }, entriesByKind: { ...r.entriesByKind } };
  }

  dispose(): void {}

  // ---- one step: admit, one batch, finish, ring check --------------------------------------------------------------

  private runStep(): void {
    const step = ++this.step;
    this.r.steps = step;
    this.admit();
    const pending = this.active.filter((q) => q.len < q.promptLen);
    const running = this.active.filter((q) => q.len >= q.promptLen);
    const x = this.rng.next();
    const extendShare = pending.length > 0 ? 0.35 : 0.1;
    if (running.length === 0 || x < extendShare) {
      this.runBatch(step, "extend", this.extendParts(pending, running));
    } else if (x < extendShare + 0.2) {
      this.runBatch(
        step,
        "decode",
        randomSubset(this.rng, running).map((req) => ({ req, prefix: req.len, extend: 1, accept: 1 })),
      );
    } else {
      const d = this.o.adaptive ? this.rng.int(1, this.o.draftTokens) : this.o.draftTokens;
      const parts = randomSubset(this.rng, running).map((req) => ({
        req,
        prefix: req.len,
        extend: d,
        accept: this.rng.int(1, d),
      }));
      this.runBatch(step, "verify", parts);
    }
    this.finish();
    this.checkRing(step);
  }

  private admit(): void {
    if (this.freeSlots.length === 0) return;
    if (this.active.length > 0 && this.rng.next() >= 0.3) return;
    const promptLen = this.rng.int(1, Math.floor(this.maxLen / 2));
    const req: Req = {
      uid: this.nextUid++,
      slot: this.freeSlots.pop()!,
      len: 0,
      promptLen,
      finishLen: Math.min(promptLen + this.rng.int(1, Math.floor(this.maxLen / 2)), this.maxLen),
      pages: [],
      rows: new Map(),
    };
    this.r.requestsServed++;
    this.active.push(req);
  }

  /** Chunks of the pending prompts (shorter and longer than the ring), now and then a plain chunk of a running one. */
  private extendParts(pending: Req[], running: Req[]): Part[] {
    const parts: Part[] = [];
    const longest = 3 * this.o.ringSize + 5;
    for (const req of pending) {
      const extend = Math.min(this.rng.int(1, longest), req.promptLen - req.len);
      parts.push({ req, prefix: req.len, extend, accept: extend });
    }
    if (running.length > 0 && (parts.length === 0 || this.rng.next() < 0.3)) {
      const req = running[this.rng.int(0, running.length - 1)]!;
      const extend = this.rng.int(1, longest);
      parts.push({ req, prefix: req.len, extend, accept: extend });
    }
    return parts;
  }

  private finish(): void {
    for (let i = this.active.length - 1; i >= 0; i--) {
      const req = this.active[i]!;
      if (req.len < req.finishLen) continue;
      this.active.splice(i, 1);
      for (const page of req.pages) {
        for (let k = 0; k < PAGE / 2; k++) this.cache.delete(page * (PAGE / 2) + k);
        this.freePages.push(page);
      }
      this.freeSlots.push(req.slot);
    }
  }

  // ---- a batch ------------------------------------------------------------------------------------------------------

  private writerOf(kind: Ratio2BatchKind): PairStateWriter {
    if (kind === "decode") return "decode";
    return kind === "verify" ? this.o.verifyWriter : "torch";
  }

  private rawOutLoc(req: Req, pos: number): number {
    const k = Math.floor(pos / PAGE);
    while (req.pages.length <= k) req.pages.push(this.freePages.pop()!);
    return req.pages[k]! * PAGE + (pos % PAGE);
  }

  private runBatch(step: number, kind: Ratio2BatchKind, parts: Part[]): void {
    this.r.batches[kind]++;
    const writer = this.writerOf(kind);
    const writes: { slot: number; row: Float32Array; origin: TokenOrigin }[] = [];
    const produced: Produced[] = [];
    for (const part of parts) {
      const { req, prefix, extend } = part;
      const rows: Float32Array[] = [];
      for (let k = 0; k < extend; k++) {
        const pos = prefix + k;
        const row = new Float32Array(ROW);
        fillTokenRow(this.o.seed, { uid: req.uid, position: pos, step }, row);
        rows.push(row);
        const outLoc = lowRatioOutLoc(2, pos + 1, this.rawOutLoc(req, pos));
        if (outLoc < 0) continue;
        // the partner, read before any write of the batch
        const fromRing = pairReadsRing(k, pos);
        const slot = pairStateSlot(req.slot, pos - 1, this.o.ringSize);
        const partner = fromRing ? this.state.slice(slot * ROW, (slot + 1) * ROW) : rows[k - 1]!;
        this.cache.set(outLoc, compressRatio2(partner, row, pos, this.params).bytes);
        if (k >= part.accept) continue; // a rejected draft's entry: nobody attends to it
        const committedPartner = k > 0 ? rows[k - 1]! : req.rows.get(pos - 1)!;
        const from = fromRing ? `pair-state row ${slot}, ${this.describeRow(slot)}` : "the batch's previous row";
        produced.push({
          req,
          pos,
          outLoc,
          partner: committedPartner,
          own: row,
          cause: `its partner came from ${from}`,
        });
      }
      for (const k of pairStateWrittenRows(writer, prefix, extend, this.o.ringSize)) {
        const origin = { uid: req.uid, position: prefix + k, step };
        writes.push({ slot: pairStateSlot(req.slot, prefix + k, this.o.ringSize), row: rows[k]!, origin });
      }
      this.commit(part, rows);
    }
    for (const w of writes) {
      this.state.set(w.row, w.slot * ROW);
      this.stateOrigin.set(w.slot, w.origin);
    }
    this.checkEntries(step, kind, produced);
  }

  /** Keeps the accepted rows; of them only the last (a next odd position's partner) stays. */
  private commit(part: Part, rows: Float32Array[]): void {
    const req = part.req;
    req.len = part.prefix + part.accept;
    req.rows.clear();
    req.rows.set(req.len - 1, rows[part.accept - 1]!);
  }

  /** What a pair-state row holds, in words. */
  private describeRow(slot: number): string {
    const o = this.stateOrigin.get(slot);
    if (o === undefined) return "which held the pool's initial garbage (never written)";
    return `which held position ${o.position} of request ${o.uid} as written at step ${o.step}`;
  }

  // ---- checks -------------------------------------------------------------------------------------------------------

  /** Every committed entry of the batch against the offline compression of its committed pair and the oracle. */
  private checkEntries(step: number, kind: Ratio2BatchKind, produced: Produced[]): void {
    const layout = this.o.layout;
    for (const e of produced) {
      this.r.entries++;
      this.r.entriesByKind[kind]++;
      const got = this.cache.get(e.outLoc)!;
      const want = compressRatio2(e.partner, e.own, e.pos, this.params).bytes;
      let bytesWrong = 0;
      for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) bytesWrong++;
      const gotValues = decodeEntry(layout, got);
      const oracle = oracleRatio2(e.partner, e.own, e.pos, this.params);
      const tol = v41EntryTolerance(layout, oracle, this.params.normWeight);
      let worst = 0;
      let worstAt = 0;
      let outside = false;
      for (let i = 0; i < 512; i++) {
        const err = Math.abs(gotValues[i]! - oracle.rotated[i]!);
        if (err > tol[i]!) outside = true;
        if (err / tol[i]! > worst) [worst, worstAt] = [err / tol[i]!, i];
        if (bytesWrong === 0) this.r.maxAbsError = Math.max(this.r.maxAbsError, err);
      }
      if (bytesWrong === 0 && !outside) {
        this.r.maxBoundRatio = Math.max(this.r.maxBoundRatio, worst);
        continue;
      }
      this.r.wrongEntries++;
      if (this.r.firstWrong !== null) continue;
      const wantValues = decodeEntry(layout, want);
      let element = worstAt;
      if (bytesWrong > 0) {
        for (let i = 0, d = -1; i < 512; i++) {
          const diff = Math.abs(gotValues[i]! - wantValues[i]!);
          if (diff > d) [d, element] = [diff, i];
        }
      }
      this.r.firstWrong = {
        request: e.req.uid,
        slot: e.req.slot,
        position: e.pos,
        step,
        batchKind: kind,
        element,
        got: gotValues[element]!,
        want: wantValues[element]!,
        bytesWrong,
        cause: outside && bytesWrong === 0 ? "the reference is outside its oracle bound" : e.cause,
      };
    }
  }

  /** A request of odd length pairs its next position with len − 1: that ring row must hold the committed row. */
  private checkRing(step: number): void {
    for (const req of this.active) {
      if (req.len % 2 === 0) continue;
      const row = req.rows.get(req.len - 1)!;
      const slot = pairStateSlot(req.slot, req.len - 1, this.o.ringSize);
      this.r.ringRowsChecked++;
      const held = this.state.subarray(slot * ROW, (slot + 1) * ROW);
      if (held.every((v, i) => Object.is(v, row[i]))) continue;
      this.r.wrongRingRows++;
      this.r.firstWrongRingRow ??= {
        request: req.uid,
        slot: req.slot,
        position: req.len - 1,
        row: slot,
        step,
        holds: this.describeRow(slot).replace(/^which held /, ""),
      };
    }
  }
}

interface Produced {
  req: Req;
  pos: number;
  outLoc: number;
  partner: Float32Array;
  own: Float32Array;
  cause: string;
}

function emptyReport(o: ResolvedRatio2Options): Ratio2ScenarioReport {
  return {
    compressRatio: 2,
    ringSize: o.ringSize,
    speculativeRingSize: o.speculativeRingSize,
    draftTokens: o.draftTokens,
    layout: o.layout,
    verifyWriter: o.verifyWriter,
    seed: o.seed,
    steps: 0,
    batches: { extend: 0, decode: 0, verify: 0 },
    requestsServed: 0,
    entries: 0,
    entriesByKind: { extend: 0, decode: 0, verify: 0 },
    wrongEntries: 0,
    maxAbsError: 0,
    maxBoundRatio: 0,
    firstWrong: null,
    ringRowsChecked: 0,
    wrongRingRows: 0,
    firstWrongRingRow: null,
  };
}

/** Runs a ratio-2 scenario to the end. */
export function runRatio2Scenario(options: Ratio2ScenarioOptions): Ratio2ScenarioReport {
  const run = new Ratio2ScenarioRun(options);
  run.advance(run.total);
  return run.report();
}
