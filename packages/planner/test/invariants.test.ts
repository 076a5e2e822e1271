// docs/reference/planner.md §11 invariants as property tests over random batches.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { SlotResolver } from "../src/internal.js";
import {
  earliestFutureRead,
  planPrefill,
  planDecode,
  writePad,
  windowSize,
  type PrefillPlanOptions,
} from "../src/index.js";
import { planPrefillStage0 } from "../src/prefill.js";
import { testSeed } from "../src/testing.js";
import { referenceStage0 } from "./helpers.js";

// Fixed seed (DSV4KV_TEST_SEED overrides); fast-check prints the seed and counterexample on failure.
const SEED = testSeed(20260311);

const NUM_RUNS = 300;

/** A ring configuration the planner accepts: c4 paged/req ring or c128, ring a multiple of ratio dividing SPS. */
const ringArb = fc
  .oneof(
    fc.record({
      compressRatio: fc.constant(4),
      ringMul: fc.constantFrom(2, 4, 8),
      spsMul: fc.constantFrom(1, 2, 4, 16),
      useReqRing: fc.boolean(),
    }),
    fc.record({
      compressRatio: fc.constant(128),
      ringMul: fc.constantFrom(1, 2, 4),
      spsMul: fc.constantFrom(1, 2),
      useReqRing: fc.constant(false),
    }),
  )
  .map(({ compressRatio, ringMul, spsMul, useReqRing }) => {
    const ringSize = compressRatio * ringMul;
    return { compressRatio, ringSize, swaPageSize: ringSize * spsMul, useReqRing };
  });

/** A batch of 1..24 requests with prefixes up to 3000 and extends up to 300. */
const batchArb = fc
  .array(fc.record({ prefix: fc.integer({ min: 0, max: 3000 }), extend: fc.integer({ min: 1, max: 300 }) }), {
    minLength: 1,
    maxLength: 24,
  })
  .map((reqs) => ({ seqLens: reqs.map((r) => r.prefix + r.extend), extendLens: reqs.map((r) => r.extend) }));

const caseArb = fc
  .record({ ring: ringArb, batch: batchArb, shuffleRids: fc.boolean() })
  .map(({ ring, batch, shuffleRids }) => {
    const b = batch.seqLens.length;
    const rids = Array.from({ length: b }, (_, i) => (shuffleRids ? (i * 7 + 3) % 16 : i));
    const o: PrefillPlanOptions = {
      ...ring,
      ...batch,
      reqPoolIndices: rids,
      reqToToken: { identity: { tokensPerReq: 4096 } },
    };
    return o;
  });

function rowsOf(t: { validRecords(): object[] }): string[] {
  return t.validRecords().map((r) => JSON.stringify(Object.values(r)));
}

describe("planner §11 invariants (property tests)", () => {
  test("stage 0 equals the token-by-token host loop, row for row and in order (invariant 8)", () => {
    fc.assert(
      fc.property(caseArb, (o) => {
        const plan = planPrefillStage0(o);
        const ref = referenceStage0(
          o.compressRatio,
          o.swaPageSize,
          writePad(o.compressRatio, o.ringSize),
          !!o.useReqRing,
          o.seqLens as number[],
          o.extendLens as number[],
        );
        expect(plan.planC.records().map((r) => [r.seqLen, r.raggedId, r.bufferLen, r.readPage0, r.readPage1])).toEqual(
          ref.c,
        );
        expect(plan.planW.records().map((r) => [r.raggedId, r.writeLoc])).toEqual(ref.w);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  test("host and device paths produce the same multisets; device tables are numQ rows, valid first (invariants 1, 2, 7)", () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 0, max: 40 }), (o, extraRows) => {
        const host = planPrefill(o);
        const numQ = (o.extendLens as number[]).reduce((a, b) => a + b, 0);
        const device = planPrefill({
          ...o,
          path: "device",
          numQTokens: Math.min(65535, numQ + extraRows),
          deviceBatchLimit: 1024,
        });
        expect(device.planC.rowCount).toBe(Math.min(65535, numQ + extraRows));
        expect(device.planW.rowCount).toBe(device.planC.rowCount);
        expect(rowsOf(device.planC).sort()).toEqual(rowsOf(host.planC).sort());
        expect(rowsOf(device.planW).sort()).toEqual(rowsOf(host.planW).sort());
        for (const t of [device.planC, device.planW]) {
          for (let i = 0; i < t.rowCount; i++)
            expect(t.isInvalid(i)).toBe(i >= (t === device.planC ? device.numCompress : device.numWrite));
        }
        const graph = planPrefill({ ...o, useCudaGraph: true });
        expect(graph.planC.rowCount).toBe(numQ);
        expect(graph.planC.bytes.subarray(0, host.planC.bytes.byteLength)).toEqual(host.planC.bytes);
        expect(host.planC.rowCount).toBe(host.numCompress);
        expect(host.planW.rowCount).toBe(host.numWrite);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  test("counts, encodings, buffer lengths, pages and write slots (invariants 3–6, 9)", () => {
    fc.assert(
      fc.property(caseArb, (o) => {
        const { compressRatio: cr, ringSize, swaPageSize } = o;
        const plan = planPrefill(o);
        const resolver = new SlotResolver(cr, ringSize, swaPageSize, !!o.useReqRing, o);
        const seq = o.seqLens as number[];
        const ext = o.extendLens as number[];
        const rids = o.reqPoolIndices as number[];
        const window = windowSize(cr);
        const numQ = ext.reduce((a, b) => a + b, 0);
        const bases = ext.map((_, b) => ext.slice(0, b).reduce((a, e) => a + e, 0));
        const batchOf = (ragged: number) => bases.findLastIndex((b0) => b0 <= ragged);
        const expectedEvents = seq.reduce((a, s, b) => a + Math.floor(s / cr) - Math.floor((s - ext[b]!) / cr), 0);
        expect(plan.numCompress).toBe(expectedEvents);
        for (const c of plan.planC.validRecords()) {
          expect(c.raggedId).toBeLessThan(numQ);
          expect(c.seqLen % cr).toBe(0);
          const b = batchOf(c.raggedId);
          const j = c.raggedId - bases[b]!;
          expect(c.bufferLen).toBe(window - Math.min(j + 1, window));
          const q = c.seqLen - 1;
          expect(q).toBe(seq[b]! - ext[b]! + j);
          if (c.bufferLen === 0) {
            expect([c.readPage0, c.readPage1]).toEqual([-1, b]);
          } else {
            expect(c.readPage1).toBe(Math.floor(resolver.slot(rids[b]!, q) / cr));
            expect(c.readPage0).toBe(Math.floor(resolver.slot(rids[b]!, Math.max(q - cr, 0)) / cr));
          }
        }
        const locs = new Set<number>();
        for (const w of plan.planW.validRecords()) {
          expect(w.raggedId).toBeLessThan(numQ);
          const b = batchOf(w.raggedId);
          const p = seq[b]! - ext[b]! + (w.raggedId - bases[b]!);
          expect(w.writeLoc).toBe(resolver.slot(rids[b]!, p));
          locs.add(w.writeLoc);
        }
        // rids are distinct and rings disjoint, so write slots never collide within a batch
        expect(locs.size).toBe(plan.numWrite);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  test("pad coverage: E <= pad writes the whole extend; E >= pad + ratio + 1 leaves a hole (invariant 10)", () => {
    fc.assert(
      fc.property(ringArb, fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 700 }), (ring, prefix, e) => {
        const pad = writePad(ring.compressRatio, ring.ringSize);
        const plan = planPrefill({
          ...ring,
          seqLens: [prefix + e],
          extendLens: [e],
          reqToToken: { identity: { tokensPerReq: 8192 } },
        });
        const written = new Set(plan.planW.validRecords().map((w) => w.raggedId));
        if (e <= pad) expect(written.size).toBe(e);
        // the spec's bound is E >= pad + ratio + 1; a full window is needed too when the pad is small
        if (
          e >= Math.max(pad + ring.compressRatio + 1, windowSize(ring.compressRatio)) &&
          (ring.useReqRing || ring.compressRatio === 128)
        )
          expect(written.size).toBeLessThan(e);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  test("non-speculative rings: pad 0 and the written set is the future-read set plus paged-c4 page tails (invariants 11, 12)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom([4, 8], [128, 128]),
        fc.constantFrom(8, 128, 256),
        fc.boolean(),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 1, max: 600 }),
        ([cr, r], sps0, reqRing, prefix, e) => {
          const swaPageSize = Math.max(sps0, r!);
          const useReqRing = cr === 4 && reqRing;
          expect(writePad(cr!, r!)).toBe(0);
          const s = prefix + e;
          const plan = planPrefill({
            compressRatio: cr!,
            ringSize: r!,
            swaPageSize,
            useReqRing,
            seqLens: [s],
            extendLens: [e],
            reqToToken: { identity: { tokensPerReq: 4096 } },
          });
          const got = plan.planW.validRecords().map((w) => prefix + w.raggedId);
          const want: number[] = [];
          for (let p = prefix; p < s; p++) {
            if (p >= earliestFutureRead(cr!, s) || (cr === 4 && !useReqRing && p % swaPageSize >= swaPageSize - cr))
              want.push(p);
          }
          expect(got).toEqual(want);
        },
      ),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  test("decode plans: writeLoc = slot(S-1), pages of S-1 and max(S-1-ratio, 0) (invariant 16)", () => {
    fc.assert(
      fc.property(
        ringArb,
        fc.array(fc.integer({ min: 1, max: 4000 }), { minLength: 1, maxLength: 32 }),
        (ring, seqLens) => {
          const maps = { reqToToken: { identity: { tokensPerReq: 4096 } } };
          const plan = planDecode({ ...ring, ...maps, seqLens });
          const resolver = new SlotResolver(ring.compressRatio, ring.ringSize, ring.swaPageSize, ring.useReqRing, maps);
          seqLens.forEach((s, i) => {
            const d = plan.row(i);
            expect(d.seqLen).toBe(s);
            expect(d.writeLoc).toBe(resolver.slot(i, s - 1));
            expect(d.readPage1).toBe(Math.floor(resolver.slot(i, s - 1) / ring.compressRatio));
            expect(d.readPage0).toBe(
              Math.floor(resolver.slot(i, Math.max(s - 1 - ring.compressRatio, 0)) / ring.compressRatio),
            );
          });
        },
      ),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  test("explicit req_to_token / full_to_state maps are followed (paged c4)", () => {
    // request 0's tokens live at full locations 1000 + p, mapped to SWA locations 256*3 + p
    const tokensPerReq = 64;
    const reqToToken = {
      data: Int32Array.from({ length: 2 * tokensPerReq }, (_, i) => 1000 + i),
      stride: tokensPerReq,
    };
    const fullToState = new BigInt64Array(1200);
    for (let i = 0; i < 1200; i++) fullToState[i] = BigInt(256 * 3 + ((i - 1000 + 2048) % 2048));
    const plan = planPrefill({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 256,
      seqLens: [10],
      extendLens: [10],
      reqToToken,
      fullToState,
    });
    // SWA loc 768 + p is on SWA page 3, so slot 3*16 + p%16
    expect(plan.planW.validRecords().map((w) => w.writeLoc)).toEqual(Array.from({ length: 10 }, (_, p) => 48 + p));
  });
});
