/**
 * The scenario's request and page memory, as SGLang holds it: request slots (`req_pool_indices`), `req_to_token`
 * (position → full-pool location) and `full_to_state` (full location → SWA location). SWA pages are allocated
 * page-aligned (`swa_loc % SPS == p % SPS`), from a shuffled free list, and shared through the radix cache with a
 * reference count; each SWA page owns a ring of R state rows (docs/reference/planner.md §4.1). Request rings
 * (c128, or c4 with `useReqRing`) read no table: slot `rid * R + p % R` (docs/reference/planner.md §4.2).
 */
import { pagedRingSlot, requestRingSlot } from "@dsv4-kv/planner";
import type { SeededRandom } from "@dsv4-kv/planner/internal";
import type { TokenOrigin } from "./tokens.js";

/** A committed token row and who produced it. */
export interface CommittedRow {
  row: Float32Array;
  origin: TokenOrigin;
}

export interface ScenarioRequest {
  /** Unique over the run (token data and reports); the slot is reused. */
  uid: number;
  /** Request-pool index (`req_pool_indices`). */
  slot: number;
  /** Committed length. */
  len: number;
  /** Prefill until here (chunked), then decode / verify. */
  promptLen: number;
  /** Finished (freed) once the committed length reaches it. */
  finishLen: number;
  /** Paged c4: the SWA page of each block of SPS positions. */
  pages: number[];
  /** Committed rows a later window can read, plus (paged c4) every page's last chunk for radix resumes. */
  rows: Map<number, CommittedRow>;
  /** A radix resume: the request and the SWA-page boundary it resumed at. */
  resumedFrom: { uid: number; prefix: number } | null;
}

function shuffled(n: number, rng: SeededRandom): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export interface MemoryGeometry {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  paged: boolean;
  /** Request slots. */
  slots: number;
  /** `req_to_token` row length: the most positions a request can reach (a multiple of SPS). */
  tokensPerReq: number;
}

/** State-pool rows: a ring per SWA page (paged c4: every slot's pages plus one), or a ring per request slot. */
export function stateRowsOf(g: MemoryGeometry): number {
  return g.paged ? pagesOf(g) * g.ringSize : g.slots * g.ringSize;
}

function pagesOf(g: MemoryGeometry): number {
  return g.paged ? g.slots * (g.tokensPerReq / g.swaPageSize) + 1 : 0;
}

export class ScenarioMemory {
  readonly reqToToken: Int32Array;
  readonly fullToState: Int32Array;
  readonly stateRows: number;
  private readonly freeSlots: number[];
  private readonly freePages: number[];
  private readonly freeFullPages: number[];
  private readonly pageRefs: Int32Array;
  /** Full page paired with each SWA page (allocated together; the radix cache shares both). */
  private readonly fullPageOf: Int32Array;

  constructor(
    readonly g: MemoryGeometry,
    rng: SeededRandom,
  ) {
    const pages = pagesOf(g);
    this.stateRows = stateRowsOf(g);
    this.reqToToken = new Int32Array(g.paged ? g.slots * g.tokensPerReq : 0);
    this.fullToState = new Int32Array(g.paged ? pages * g.swaPageSize : 0);
    this.freeSlots = shuffled(g.slots, rng);
    this.freePages = shuffled(pages, rng);
    this.freeFullPages = shuffled(pages, rng);
    this.pageRefs = new Int32Array(pages);
    this.fullPageOf = new Int32Array(pages).fill(-1);
  }

  get hasFreeSlot(): boolean {
    return this.freeSlots.length > 0;
  }

  takeSlot(): number {
    return this.freeSlots.pop()!;
  }

  /** Paged c4: makes every position of [from, to) addressable (new pages for blocks the request lacks). */
  ensurePages(req: ScenarioRequest, from: number, to: number): void {
    if (!this.g.paged) return;
    const sps = this.g.swaPageSize;
    for (let block = Math.trunc(from / sps); block * sps < to; block++) {
      if (req.pages[block] !== undefined) continue;
      const page = this.freePages.pop()!;
      const full = this.freeFullPages.pop()!;
      this.fullPageOf[page] = full;
      this.pageRefs[page] = 1;
      for (let i = 0; i < sps; i++) this.fullToState[full * sps + i] = page * sps + i;
      this.mapBlock(req, block, page);
    }
  }

  /** Radix resume: `req` shares the first `blocks` pages of `from` (reference counted). */
  sharePages(req: ScenarioRequest, from: ScenarioRequest, blocks: number): void {
    for (let block = 0; block < blocks; block++) {
      const page = from.pages[block]!;
      this.pageRefs[page]!++;
      this.mapBlock(req, block, page);
    }
  }

  private mapBlock(req: ScenarioRequest, block: number, page: number): void {
    const sps = this.g.swaPageSize;
    req.pages[block] = page;
    const row = req.slot * this.g.tokensPerReq + block * sps;
    const full = this.fullPageOf[page]!;
    for (let i = 0; i < sps; i++) this.reqToToken[row + i] = full * sps + i;
  }

  /** Frees the request's slot and drops its page references (a page returns to the free list at zero). */
  release(req: ScenarioRequest): void {
    this.freeSlots.unshift(req.slot);
    for (const page of req.pages) {
      if (page === undefined) continue;
      if (--this.pageRefs[page]! === 0) {
        this.freePages.unshift(page);
        this.freeFullPages.unshift(this.fullPageOf[page]!);
      }
    }
    req.pages.length = 0;
  }

  /** The state row holding position `p` of `req` (the planner's addressing, docs/reference/planner.md §4). */
  slotOf(req: ScenarioRequest, p: number): number {
    const { ringSize, swaPageSize } = this.g;
    if (!this.g.paged) return requestRingSlot(req.slot, p, ringSize);
    const swa = this.fullToState[this.reqToToken[req.slot * this.g.tokensPerReq + p]!]!;
    return pagedRingSlot(swa, swaPageSize, ringSize);
  }

  /** The planner's map options (paged c4 only; request rings read no table). */
  planMaps(): { reqToToken?: { data: Int32Array; stride: number }; fullToState?: Int32Array } {
    if (!this.g.paged) return {};
    return { reqToToken: { data: this.reqToToken, stride: this.g.tokensPerReq }, fullToState: this.fullToState };
  }
}
