/**
 * Data-level proof of the compress path under speculative decoding (docs/reference/write-pad-and-residency.md §6):
 * random multi-request scenarios (chunked prefills, decodes, verifies with random accepts and adaptive D, radix
 * resumes for paged c4, requests arriving, finishing and their slots reused), planned by the real planner with the
 * pad under test, run on a `RingCompressBackend`. After every batch:
 * - every entry whose event position is committed equals the float64 offline compression of the committed tokens of
 *   its window, within the fp32 / bf16 bound;
 * - every ring row a later window can read holds its committed token bitwise;
 * - with `online`, the online c128 driver, fed the same tokens, produces the same entries;
 * - with a `mirror` backend, the second backend gives the same entries (within bound) and ring rows (bitwise).
 * Memory is bounded by the live requests' windows and page tails, not by the steps run.
 */
import {
  type CompressPlanTable,
  DECODE_PLAN_BYTES,
  INVALID_SEQ_LEN,
  MAX_NUM_Q_TOKENS,
  earliestFutureRead,
  planDecode,
  planPrefill,
} from "@dsv4-kv/planner";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import type { OnlineMtpBackend } from "@dsv4-kv/online-mtp-controller";
import type { RingCompressBackend } from "../backend.js";
import { CompressError } from "../errors.js";
import { OnlineC128Driver } from "../online/driver.js";
import type { OnlineRequestStep } from "../online/types.js";
import { type MemoryGeometry, ScenarioMemory, type ScenarioRequest, stateRowsOf } from "./memory.js";
import { type EntryOracle, createOracle } from "./oracle.js";
import { type CompressScenarioOptions, type ResolvedScenarioOptions, resolveScenarioOptions } from "./options.js";
import type { CompressScenarioReport, ScenarioBatchKind } from "./report.js";
import { type BatchEntry, ScenarioChecks } from "./checks.js";
import { ShadowRing } from "./shadow.js";
import { randomSubset } from "./subset.js";
import { type TokenOrigin, fillGarbage, fillTokenRow, scenarioApe } from "./tokens.js";

/** One request's share of a batch. */
interface Part {
  req: ScenarioRequest;
  prefix: number;
  extend: number;
  /** Tokens kept (verify); the whole extend otherwise. */
  accept: number;
  /** Ragged row of the first token. */
  offset: number;
}

export interface ScenarioBackends {
  ring: RingCompressBackend;
  /** Backend of the online c128 driver (with `online`). */
  online?: OnlineMtpBackend;
  /** A second ring backend run on the same batches and compared with `ring`. */
  mirror?: RingCompressBackend;
}

function geometryMismatch(field: string, value: unknown, want: unknown): never {
  throw new CompressError("INVALID_ARGUMENT", field, value, `must be ${String(want)} for this scenario`);
}

interface ScenarioSizes {
  /** Longest prompt, generation and plain chunk of a request. */
  maxPrompt: number;
  maxGen: number;
  maxPlainChunk: number;
  /** Longest a request gets (prompt plus generation; a resumed request included) before its last batch. */
  maxLen: number;
  memory: MemoryGeometry;
}

/** Request lengths (prompts cross SWA pages for paged c4) and the memory that holds the live requests. */
function scenarioSizes(o: ResolvedScenarioOptions): ScenarioSizes {
  const w = o.window;
  const maxPrompt = o.paged ? 2 * o.swaPageSize + w : 3 * w;
  const maxGen = o.compressRatio === 4 ? 6 * w : w + w / 2;
  const maxPlainChunk = o.paged ? o.swaPageSize + w + 5 : 2 * w + 3;
  // a running request may overshoot its finish length by one verify or one plain chunk
  const maxLen = maxPrompt + maxGen;
  const reach = maxLen + Math.max(o.draftTokens, maxPlainChunk, 2 * w + 3) + 1;
  const memory = {
    compressRatio: o.compressRatio,
    ringSize: o.ringSize,
    swaPageSize: o.swaPageSize,
    paged: o.paged,
    slots: o.requests,
    tokensPerReq: Math.ceil(reach / o.swaPageSize) * o.swaPageSize,
  };
  return { maxPrompt, maxGen, maxPlainChunk, maxLen, memory };
}

/** State-pool rows a scenario with `options` needs (size the backends with it). */
export function scenarioStateRows(options: CompressScenarioOptions): number {
  return stateRowsOf(scenarioSizes(resolveScenarioOptions(options)).memory);
}

/** The ring (and mirror) backend has the scenario's ratio, head dim, dtype and at least its state rows. */
function checkBackendGeometry(o: ResolvedScenarioOptions, backends: ScenarioBackends, stateRows: number): void {
  for (const [name, b] of [
    ["ring", backends.ring],
    ["mirror", backends.mirror],
  ] as const) {
    if (b === undefined) continue;
    const g = b.geometry;
    if (g.compressRatio !== o.compressRatio)
      geometryMismatch(`${name}.compressRatio`, g.compressRatio, o.compressRatio);
    if (g.headDim !== o.headDim) geometryMismatch(`${name}.headDim`, g.headDim, o.headDim);
    if (g.stateDtype !== o.stateDtype) geometryMismatch(`${name}.stateDtype`, g.stateDtype, o.stateDtype);
    if (g.stateRows < stateRows) geometryMismatch(`${name}.stateRows`, g.stateRows, `>= ${stateRows}`);
  }
}

/** The report of a run that has not started: its inputs, and every count at zero. */
function emptyReport(o: ResolvedScenarioOptions, backends: ScenarioBackends): CompressScenarioReport {
  return {
    backend: backends.ring.name,
    compressRatio: o.compressRatio,
    ringSize: o.ringSize,
    swaPageSize: o.swaPageSize,
    useReqRing: o.useReqRing,
    writePad: o.writePad,
    padFormula: o.padFormula,
    draftTokens: o.draftTokens,
    stateDtype: o.stateDtype,
    headDim: o.headDim,
    seed: o.seed,
    steps: 0,
    batches: { prefill: 0, decode: 0, verify: 0 },
    entriesByKind: { prefill: 0, decode: 0, verify: 0 },
    requestsServed: 0,
    radixResumes: 0,
    entries: 0,
    wrongEntries: 0,
    maxAbsError: 0,
    maxRelError: 0,
    firstWrong: null,
    ringRowsChecked: 0,
    wrongRingRows: 0,
    firstWrongRingRow: null,
    ...(o.online ? { onlineEntries: 0, onlineMismatches: 0, firstOnlineMismatch: null } : {}),
    ...(backends.mirror
      ? {
          mirror: {
            backend: backends.mirror.name,
            entries: 0,
            entryMismatches: 0,
            maxAbsDiff: 0,
            ringRows: 0,
            ringRowMismatches: 0,
          },
        }
      : {}),
  };
}

/** A scenario run in slices (progress, Ctrl-C between them), like the planner's `ResidencyScenarioRun`. */
export class CompressScenarioRun {
  readonly o: ResolvedScenarioOptions;
  readonly total: number;
  done = 0;
  private step = 0;
  private readonly rng: SeededRandom;
  private readonly mem: ScenarioMemory;
  private readonly shadow = new ShadowRing();
  private readonly oracle: EntryOracle;
  private readonly rowElems: number;
  private readonly active: ScenarioRequest[] = [];
  private nextUid = 1;
  private readonly sizes: ScenarioSizes;
  private driver: OnlineC128Driver | null = null;
  private readonly r: CompressScenarioReport;
  private readonly checks: ScenarioChecks;

  constructor(
    options: CompressScenarioOptions,
    private readonly backends: ScenarioBackends,
  ) {
    this.o = resolveScenarioOptions(options);
    const o = this.o;
    this.total = o.steps;
    this.rng = new SeededRandom(o.seed);
    this.sizes = scenarioSizes(o);
    this.mem = new ScenarioMemory(this.sizes.memory, this.rng);
    checkBackendGeometry(o, backends, this.mem.stateRows);
    if (o.online && backends.online === undefined) {
      throw new CompressError("INVALID_ARGUMENT", "onlineBackend", backends.online, "is needed with online: true");
    }
    this.rowElems = backends.ring.rowElems;
    const ape = scenarioApe(o.seed, o.window, o.headDim);
    this.oracle = createOracle(o, ape, backends.ring.name);
    this.initBackend(backends.ring, ape);
    if (backends.mirror) this.initBackend(backends.mirror, ape);
    if (o.online) {
      this.driver = new OnlineC128Driver({
        backend: backends.online!,
        numReqSlots: o.requests + 1,
        maxDraftTokens: o.draftTokens,
        stateDtype: o.stateDtype,
        ape,
      });
    }
    this.r = emptyReport(o, backends);
    this.checks = new ScenarioChecks(
      o,
      this.r,
      this.oracle,
      this.mem,
      this.shadow,
      backends,
      this.rowElems,
      this.active,
    );
  }

  private initBackend(b: RingCompressBackend, ape: Float32Array): void {
    b.setApe(ape);
    const garbage = new Float32Array(this.mem.stateRows * this.rowElems);
    fillGarbage(this.o.seed, garbage);
    b.writeStateRows(0, garbage);
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

  report(): CompressScenarioReport {
    const r = this.r;
    const copy = { ...r, batches: { ...r.batches }, entriesByKind: { ...r.entriesByKind } };
    return r.mirror ? { ...copy, mirror: { ...r.mirror } } : copy;
  }

  dispose(): void {
    this.driver?.dispose();
    this.driver = null;
  }

  // ---- one step: admit, one batch of one kind, finish, ring check -------------------------------------------------

  private runStep(): void {
    const step = ++this.step;
    this.r.steps = step;
    this.admit();
    const pending = this.active.filter((q) => q.len < q.promptLen);
    const running = this.active.filter((q) => q.len >= q.promptLen);
    const x = this.rng.next();
    const prefill = pending.length > 0 ? 0.35 : 0.1;
    if (running.length === 0 || x < prefill) {
      this.runExtend(step, "prefill", this.prefillParts(pending, running));
    } else if (x < prefill + 0.2) {
      this.runDecode(step, randomSubset(this.rng, running));
    } else {
      const d = this.o.adaptive ? this.rng.int(1, this.o.draftTokens) : this.o.draftTokens;
      const parts = randomSubset(this.rng, running).map((req) => ({ req, extend: d, accept: this.rng.int(1, d) }));
      this.runExtend(step, "verify", parts);
    }
    this.finish();
    this.checks.checkRing(step);
  }

  /** A new request now and then (always when none is live): a fresh prompt or, paged c4, a radix resume. */
  private admit(): void {
    if (!this.mem.hasFreeSlot) return;
    if (this.active.length > 0 && this.rng.next() >= 0.3) return;
    const o = this.o;
    const slot = this.mem.takeSlot();
    const req: ScenarioRequest = {
      uid: this.nextUid++,
      slot,
      len: 0,
      promptLen: 0,
      finishLen: 0,
      pages: [],
      rows: new Map(),
      resumedFrom: null,
    };
    this.r.requestsServed++;
    const maxLen = this.sizes.maxLen;
    const donors = o.paged ? this.active.filter((a) => a.len >= o.swaPageSize) : [];
    if (donors.length > 0 && this.rng.next() < 0.4) {
      const from = donors[this.rng.int(0, donors.length - 1)]!;
      // a resume leaves room to prefill and generate: requests stay within the req_to_token rows
      const k = this.rng.int(
        1,
        Math.min(Math.trunc(from.len / o.swaPageSize), Math.trunc((maxLen - 2) / o.swaPageSize)),
      );
      const prefix = k * o.swaPageSize;
      this.mem.sharePages(req, from, k);
      // every shared page's last chunk: the resume reads the last one, a later resume from this request the others
      const tail = o.swaPageSize - o.compressRatio;
      for (const [x, row] of from.rows) if (x < prefix && x % o.swaPageSize >= tail) req.rows.set(x, row);
      req.len = prefix;
      req.resumedFrom = { uid: from.uid, prefix };
      this.r.radixResumes++;
    }
    req.promptLen = Math.min(req.len + this.promptLength(), maxLen - 1);
    req.finishLen = Math.min(req.promptLen + this.rng.int(1, this.sizes.maxGen), maxLen);
    this.active.push(req);
    this.driver?.resetSlot(slot + 1);
  }

  /** Half the prompts end just before a chunk boundary, so verifies and decodes cross it soon. */
  private promptLength(): number {
    const w = this.o.window;
    const n = this.rng.int(1, this.sizes.maxPrompt);
    if (this.rng.next() < 0.5) return n;
    return Math.max(1, Math.ceil(n / w) * w - this.rng.int(0, Math.min(w - 1, 2 * this.o.draftTokens)));
  }

  /** Chunks of the pending prompts (short, about a window, or long and crossing SWA pages), now and then a plain one. */
  private prefillParts(pending: ScenarioRequest[], running: ScenarioRequest[]): Omit<Part, "prefix" | "offset">[] {
    const w = this.o.window;
    const parts: Omit<Part, "prefix" | "offset">[] = [];
    // A batch holds at most the planner's MAX_NUM_Q_TOKENS rows: on large SWA pages the chunks are cut to what is left,
    // and a request with no room waits for a later batch (the random draws stay the same, so small pages are unchanged).
    let room = MAX_NUM_Q_TOKENS;
    for (const req of pending) {
      const pick = this.rng.next();
      const chunk =
        pick < 0.3
          ? this.rng.int(1, w - 1 || 1)
          : pick < 0.6
            ? this.rng.int(w, 2 * w + 3)
            : this.rng.int(1, this.sizes.maxPlainChunk);
      const extend = Math.min(chunk, req.promptLen - req.len, room);
      if (extend === 0) continue;
      room -= extend;
      parts.push({ req, extend, accept: extend });
    }
    if (running.length > 0 && (parts.length === 0 || this.rng.next() < 0.3)) {
      const req = running[this.rng.int(0, running.length - 1)]!;
      // half the plain chunks stop just before a chunk boundary, so that the next verifies close a c128 chunk
      const toBoundary =
        Math.ceil((req.len + 1) / w) * w - this.rng.int(1, Math.min(w - 1, 2 * this.o.draftTokens) || 1);
      const drawn = toBoundary > req.len && this.rng.next() < 0.5 ? toBoundary - req.len : this.rng.int(1, 2 * w + 3);
      const extend = Math.min(drawn, room);
      if (extend > 0) parts.push({ req, extend, accept: extend });
    }
    return parts;
  }

  private finish(): void {
    for (let i = this.active.length - 1; i >= 0; i--) {
      const req = this.active[i]!;
      const aborted = req.len >= req.promptLen && this.rng.next() < 0.01;
      if (req.len < req.finishLen && !aborted) continue;
      this.active.splice(i, 1);
      this.mem.release(req);
      this.driver?.resetSlot(req.slot + 1);
    }
  }

  // ---- prefill / verify --------------------------------------------------------------------------------------------

  private runExtend(step: number, kind: "prefill" | "verify", shares: Omit<Part, "prefix" | "offset">[]): void {
    this.r.batches[kind]++;
    const parts: Part[] = [];
    let rows = 0;
    for (const s of shares) {
      parts.push({ ...s, prefix: s.req.len, offset: rows });
      rows += s.extend;
      this.mem.ensurePages(s.req, s.req.len, s.req.len + s.extend);
    }
    // CUDA-graph shapes: a third of the batches pad the tables (host), a third the ragged rows too (device bucket)
    const shape = this.rng.int(0, 2);
    const numQ = shape === 2 ? Math.min(65535, rows + this.rng.int(0, 8)) : rows;
    // padding rows: garbage (the backends refuse non-finite input), distinct from every token
    const input = new Float32Array(numQ * this.rowElems);
    fillGarbage(this.o.seed + step, input.subarray(rows * this.rowElems));
    const origins: TokenOrigin[] = [];
    for (const p of parts) {
      for (let j = 0; j < p.extend; j++) {
        const origin = { uid: p.req.uid, position: p.prefix + j, step };
        fillTokenRow(
          this.o.seed,
          origin,
          input.subarray((p.offset + j) * this.rowElems, (p.offset + j + 1) * this.rowElems),
        );
        origins.push(origin);
      }
    }
    const plan = planPrefill({
      compressRatio: this.o.compressRatio,
      ringSize: this.o.ringSize,
      swaPageSize: this.o.swaPageSize,
      useReqRing: this.o.useReqRing,
      ...this.mem.planMaps(),
      seqLens: parts.map((p) => p.prefix + p.extend),
      extendLens: parts.map((p) => p.extend),
      reqPoolIndices: parts.map((p) => p.req.slot),
      numQTokens: numQ,
      path: shape === 2 ? "device" : "host",
      useCudaGraph: shape === 1,
      writePadOverride: this.o.writePad,
    });
    const batch = { input, inputRows: numQ, planC: plan.planC.bytes, planW: plan.planW.bytes };
    const out = this.backends.ring.prefill(batch);
    const mirrorOut = this.backends.mirror?.prefill(batch);
    // commit first: the oracle reads the committed rows of the window (all of it is committed when q is)
    for (const p of parts) this.commit(p, input, origins);
    const entries = this.checkPrefillEntries(step, kind, plan.planC, plan.numCompress, parts, out);
    if (mirrorOut) this.checks.compareMirror(entries, out, mirrorOut);
    for (let i = 0; i < plan.numWrite; i++) {
      const w = plan.planW.row(i);
      this.shadow.write(w.writeLoc, origins[w.raggedId]!);
    }
    if (this.driver) {
      const steps: OnlineRequestStep[] = parts.map((p) => ({
        slot: p.req.slot + 1,
        prefix: p.prefix,
        kind: kind === "verify" ? "verify" : "extend",
        tokens: input.slice(p.offset * this.rowElems, (p.offset + p.extend) * this.rowElems),
        ...(kind === "verify" ? { accept: p.accept } : {}),
      }));
      this.checks.compareOnline(step, this.driver.step(steps), entries);
    }
    for (const p of parts) this.prune(p.req);
  }

  private commit(p: Part, input: Float32Array, origins: TokenOrigin[]): void {
    for (let j = 0; j < p.accept; j++) {
      const r = p.offset + j;
      p.req.rows.set(p.prefix + j, {
        row: input.slice(r * this.rowElems, (r + 1) * this.rowElems),
        origin: origins[r]!,
      });
    }
    p.req.len = p.prefix + p.accept;
  }

  private checkPrefillEntries(
    step: number,
    kind: ScenarioBatchKind,
    planC: CompressPlanTable,
    numCompress: number,
    parts: Part[],
    out: Float32Array,
  ): (BatchEntry & { index: number })[] {
    const checked: (BatchEntry & { index: number })[] = [];
    const partOfRow: Part[] = [];
    for (const p of parts) for (let j = 0; j < p.extend; j++) partOfRow.push(p);
    for (let i = 0; i < numCompress; i++) {
      const c = planC.row(i);
      if (c.seqLen === INVALID_SEQ_LEN) continue;
      const p = partOfRow[c.raggedId]!;
      const q = c.seqLen - 1;
      if (q >= p.prefix + p.accept) continue; // a rejected draft's event: nobody attends to it
      const values = out.subarray(i * this.o.headDim, (i + 1) * this.o.headDim);
      const tolerance = this.checks.checkEntry(step, kind, p.req, q, p.prefix, values);
      checked.push({ req: p.req, position: q, values, tolerance, index: i });
    }
    return checked;
  }

  // ---- decode ------------------------------------------------------------------------------------------------------

  private runDecode(step: number, reqs: ScenarioRequest[]): void {
    this.r.batches.decode++;
    const cr = this.o.compressRatio;
    for (const req of reqs) this.mem.ensurePages(req, req.len, req.len + 1);
    const table = planDecode({
      compressRatio: cr,
      ringSize: this.o.ringSize,
      swaPageSize: this.o.swaPageSize,
      useReqRing: this.o.useReqRing,
      ...this.mem.planMaps(),
      seqLens: reqs.map((q) => q.len + 1),
      reqPoolIndices: reqs.map((q) => q.slot),
    });
    // a CUDA-graph bucket now and then: padding rows (seqLen 0xFFFFFFFF) after the real ones
    const batch = reqs.length + (this.rng.next() < 0.3 ? this.rng.int(1, 3) : 0);
    const planD = new Uint8Array(batch * DECODE_PLAN_BYTES).fill(0xff);
    planD.set(table.bytes);
    const input = new Float32Array(batch * this.rowElems);
    fillGarbage(this.o.seed + step, input.subarray(reqs.length * this.rowElems));
    const origins: TokenOrigin[] = [];
    for (const [b, req] of reqs.entries()) {
      const origin = { uid: req.uid, position: req.len, step };
      fillTokenRow(this.o.seed, origin, input.subarray(b * this.rowElems, (b + 1) * this.rowElems));
      origins.push(origin);
    }
    const out = this.backends.ring.decode({ input, planD, batch });
    const mirrorOut = this.backends.mirror?.decode({ input, planD, batch });
    const entries: (BatchEntry & { index: number })[] = [];
    for (const [b, req] of reqs.entries()) {
      const prefix = req.len;
      this.commit({ req, prefix, extend: 1, accept: 1, offset: b }, input, origins);
      this.shadow.write(table.row(b).writeLoc, origins[b]!);
      if (req.len % cr !== 0) continue;
      const values = out.subarray(b * this.o.headDim, (b + 1) * this.o.headDim);
      // the decode kernel writes the token first, then reads the whole window from the ring
      const tolerance = this.checks.checkEntry(step, "decode", req, req.len - 1, req.len, values);
      entries.push({ req, position: req.len - 1, values, tolerance, index: b });
    }
    if (mirrorOut) this.checks.compareMirror(entries, out, mirrorOut);
    if (this.driver) {
      const steps: OnlineRequestStep[] = reqs.map((req, b) => ({
        slot: req.slot + 1,
        prefix: req.len - 1,
        kind: "decode",
        tokens: input.slice(b * this.rowElems, (b + 1) * this.rowElems),
      }));
      this.checks.compareOnline(step, this.driver.step(steps), entries);
    }
    for (const req of reqs) this.prune(req);
  }

  /** Drops rows no later window reads; paged c4 keeps every page's last chunk (a radix resume reads it). */
  private prune(req: ScenarioRequest): void {
    const start = earliestFutureRead(this.o.compressRatio, req.len);
    const sps = this.o.swaPageSize;
    const tail = sps - this.o.compressRatio;
    for (const x of req.rows.keys()) {
      if (x >= start) continue;
      if (this.o.paged && x % sps >= tail) continue;
      req.rows.delete(x);
    }
  }
}

/**
 * Runs a scenario to the end on `backend` (state rows at least `scenarioStateRows(options)`; geometry as the
 * options), with `onlineBackend` for `online`, and, with `mirror`, the same batches on a second backend compared with
 * the first.
 */
export function runCompressScenario(
  options: CompressScenarioOptions,
  backend: RingCompressBackend,
  onlineBackend?: OnlineMtpBackend,
  mirror?: RingCompressBackend,
): CompressScenarioReport {
  const run = new CompressScenarioRun(options, {
    ring: backend,
    ...(onlineBackend ? { online: onlineBackend } : {}),
    ...(mirror ? { mirror } : {}),
  });
  try {
    run.advance(run.total);
    return run.report();
  } finally {
    run.dispose();
  }
}
