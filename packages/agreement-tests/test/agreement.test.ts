/**
 * CPU (TypeScript planner) vs GPU (kernels-cuda) agreement: upstream matrices (docs/reference/planner.md §10), worked
 * examples (docs/reference/planner.md §9), a seeded random campaign of >= 10,000 prefill batches plus decode batches,
 * repeated ragged runs. Without a GPU every test here is skipped with the probe's reason.
 */
import { describe, expect } from "vitest";
import {
  planDecode,
  planDecodeLegacy,
  planPrefill,
  planPrefillLegacy,
  writePad,
  type PrefillPlanOptions,
} from "@dsv4-kv/planner";
import { SeededRandom } from "@dsv4-kv/planner/internal";
import { RAGGED_EXTEND_PATTERNS, raggedExtendOptions } from "@dsv4-kv/planner/testing";
import { planDecodeGpu, planDecodeLegacyGpu, planPrefillGpu, planPrefillLegacyGpu } from "@dsv4-kv/planner/gpu";
import { errorCode, expectSameDecode, expectSamePrefill, gpuTest } from "./helpers.js";

const SEED = Number(process.env.DSV4KV_TEST_SEED ?? 20260311);
const CAMPAIGN = Number(process.env.DSV4KV_CAMPAIGN ?? 10_000);

function both(o: PrefillPlanOptions, label: string): void {
  expectSamePrefill(planPrefillGpu(o), planPrefill(o), label);
}
function bothPaths(o: PrefillPlanOptions, label: string): void {
  both({ ...o, path: "host" }, `${label} host`);
  both({ ...o, path: "host", useCudaGraph: true, numQTokens: o.numQTokens }, `${label} host+graph`);
  both({ ...o, path: "device" }, `${label} device`);
}

const paged = (cr: 4 | 128, ringSize: number, extra: Partial<PrefillPlanOptions> = {}) => ({
  compressRatio: cr,
  ringSize,
  swaPageSize: 256,
  ...extra,
});

describe("planner §9 worked examples on the GPU", () => {
  gpuTest("Ex 1-3, 9: c4 R16 around prefix 512 and across an SWA page, paged and request ring", ({ gpu }) => {
    void gpu;
    for (const useReqRing of [false, true]) {
      for (const [prefix, d] of [
        [512, 6],
        [513, 6],
        [512, 8],
        [254, 10],
      ] as const) {
        bothPaths(
          { ...paged(4, 16, { useReqRing }), seqLens: [prefix + d], extendLens: [d] },
          `c4 R16 P${prefix} D${d} req=${useReqRing}`,
        );
      }
    }
    const ex1 = planPrefillGpu({ ...paged(4, 16), seqLens: [518], extendLens: [6] });
    expect(Buffer.from(ex1.planC.bytes).toString("hex")).toBe("04020000030004000700000008000000");
    expect(Buffer.from(ex1.planW.bytes.subarray(24, 32)).toString("hex")).toBe("0300000023000000");
  });
  gpuTest("Ex 3: the second event keeps (-1, b)", ({ gpu }) => {
    void gpu;
    const p = planPrefillGpu({ ...paged(4, 16), seqLens: [520], extendLens: [8] });
    expect(p.planC.validRecords()).toEqual([
      { seqLen: 516, raggedId: 3, bufferLen: 4, readPage0: 7, readPage1: 8 },
      { seqLen: 520, raggedId: 7, bufferLen: 0, readPage0: -1, readPage1: 0 },
    ]);
  });
  gpuTest("Ex 4: non-speculative R8 plain prefill of 12, SPS 256 and SPS 8 (tail clause)", ({ gpu }) => {
    void gpu;
    for (const sps of [256, 8])
      bothPaths({ compressRatio: 4, ringSize: 8, swaPageSize: sps, seqLens: [12], extendLens: [12] }, `Ex4 sps${sps}`);
    const p = planPrefillGpu({ compressRatio: 4, ringSize: 8, swaPageSize: 8, seqLens: [12], extendLens: [12] });
    expect(p.planW.validRecords().map((w) => [w.raggedId, w.writeLoc])).toEqual(
      [4, 5, 6, 7, 8, 9, 10, 11].map((i) => [i, i]),
    );
  });
  gpuTest("Ex 5-7: c128 R256 / R128", ({ gpu }) => {
    void gpu;
    bothPaths({ ...paged(128, 256), seqLens: [642], extendLens: [6] }, "Ex5");
    bothPaths({ ...paged(128, 128), seqLens: [642], extendLens: [6] }, "Ex6");
    bothPaths({ ...paged(128, 256), seqLens: [518], extendLens: [6] }, "Ex7");
    expect(planPrefillGpu({ ...paged(128, 256), seqLens: [518], extendLens: [6] }).planC.rowCount).toBe(0);
  });
  gpuTest("Ex 8 / planner §10.3: CUDA-graph bucket tail, seq [1,3] ext [1,2] numQ 4, c4 and c128", ({ gpu }) => {
    void gpu;
    for (const [cr, ring] of [
      [4, 16],
      [128, 256],
    ] as const) {
      const o: PrefillPlanOptions = {
        ...paged(cr, ring),
        seqLens: [1, 3],
        extendLens: [1, 2],
        numQTokens: 4,
        path: "device",
      };
      const g = planPrefillGpu(o);
      expectSamePrefill(g, planPrefill(o), `Ex8 c${cr}`);
      expect(g.planC.bytes.byteLength).toBe(64);
      expect(g.planW.bytes.byteLength).toBe(32);
      expect(g.planW.validRecords().map((w) => w.raggedId)).toEqual([0, 1, 2]);
      expect(g.planW.isInvalid(3)).toBe(true);
    }
  });
  gpuTest("Ex 10: two requests; Ex 11: decode; Ex 12: legacy; Ex 13: pad and pad + 1", ({ gpu }) => {
    void gpu;
    bothPaths({ ...paged(4, 16), seqLens: [518, 20], extendLens: [6, 20] }, "Ex10");
    for (const [cr, ring] of [
      [4, 16],
      [4, 8],
      [128, 256],
      [128, 128],
    ] as const) {
      for (const useReqRing of cr === 4 ? [false, true] : [false]) {
        const o = {
          ...paged(cr, ring, { useReqRing }),
          seqLens: [1, 4, 5, 518, 642, 2047, 2048],
          reqPoolIndices: [0, 1, 2, 3, 4, 5, 6],
        };
        expectSameDecode(planDecodeGpu(o), planDecode(o), `Ex11 c${cr} R${ring} req=${useReqRing}`);
      }
      const lo = { compressRatio: cr, seqLens: [518, 12, 700], extendLens: [6, 12, 300], reqPoolIndices: [3, 0, 7] };
      expectSamePrefill(planPrefillLegacyGpu(lo), planPrefillLegacy(lo), `Ex12 prefill c${cr}`);
      expectSamePrefill(
        planPrefillLegacyGpu({ ...lo, useCudaGraph: true, numQTokens: 318 }),
        planPrefillLegacy({ ...lo, useCudaGraph: true, numQTokens: 318 }),
        `Ex12 graph c${cr}`,
      );
      const ld = { compressRatio: cr, seqLens: [518, 12, 700, 1], reqPoolIndices: [3, 0, 7, 9] };
      expectSameDecode(planDecodeLegacyGpu(ld), planDecodeLegacy(ld), `Ex12 decode c${cr}`);
    }
    for (const [cr, ring] of [
      [4, 16],
      [128, 256],
    ] as const) {
      const pad = writePad(cr, ring);
      for (const d of [pad, pad + 1])
        for (const prefix of [512, 513, 515])
          bothPaths({ ...paged(cr, ring), seqLens: [prefix + d], extendLens: [d] }, `Ex13 c${cr} D${d}`);
    }
  });
});

describe("planner §10 upstream matrices on the GPU", () => {
  gpuTest("planner §10.1 residency and CPU/GPU agreement matrices (c4/16, c128/256)", ({ gpu }) => {
    void gpu;
    for (const [cr, ring] of [
      [4, 16],
      [128, 256],
    ] as const) {
      const maxD = writePad(cr, ring);
      for (const d of [...new Set([1, 2, 3, 4, 5, maxD - 1, maxD])]) {
        for (const prefix of [512, 513, 514, 515]) {
          bothPaths({ ...paged(cr, ring), seqLens: [prefix + d], extendLens: [d] }, `c${cr} D${d} P${prefix}`);
          const g = planPrefillGpu({ ...paged(cr, ring), seqLens: [prefix + d], extendLens: [d], path: "device" });
          const written = new Set(g.planW.validRecords().map((w) => prefix + w.raggedId));
          for (let p = prefix; p < prefix + d; p++)
            expect(written.has(p), `c${cr} D${d} P${prefix} writes ${p}`).toBe(true);
        }
      }
      // over capacity: D = max + cr + 1 leaves positions unwritten, identically on both
      const d = maxD + cr + 1;
      bothPaths({ ...paged(cr, ring), seqLens: [512 + d], extendLens: [d] }, `over capacity c${cr}`);
    }
  });
  gpuTest("planner §10.1 plain prefill write sets (non-speculative rings, S in {512, 600, 777})", ({ gpu }) => {
    void gpu;
    for (const [cr, ring] of [
      [4, 8],
      [128, 128],
    ] as const)
      for (const s of [512, 600, 777])
        bothPaths({ ...paged(cr, ring), seqLens: [s], extendLens: [s] }, `plain c${cr} S${s}`);
    const g = planPrefillGpu({ ...paged(4, 8), seqLens: [777], extendLens: [777] });
    const expected = [252, 253, 254, 255, 508, 509, 510, 511, 764, 765, 766, 767, 772, 773, 774, 775, 776];
    expect(g.planW.validRecords().map((w) => w.raggedId)).toEqual(expected);
  });
  gpuTest(
    "planner §10.3 ragged extends, each run 100 times: every ragged row written exactly once, bytes equal the CPU",
    ({ gpu }) => {
      void gpu;
      for (const ext of RAGGED_EXTEND_PATTERNS) {
        const o = raggedExtendOptions(ext);
        const cpu = planPrefill(o);
        const numQ = ext.reduce((a, b) => a + b, 0);
        for (let rep = 0; rep < 100; rep++) {
          const g = planPrefillGpu(o);
          expectSamePrefill(g, cpu, `ragged ${ext.length} rep ${rep}`);
          const ids = g.planW
            .validRecords()
            .map((w) => w.raggedId)
            .sort((a, b) => a - b);
          expect(ids).toEqual(Array.from({ length: numQ }, (_, i) => i));
        }
      }
    },
  );
});

describe("seeded random campaign", () => {
  gpuTest(`${CAMPAIGN} prefill batches agree with the CPU planner (seed ${SEED})`, ({ gpu }) => {
    void gpu;
    const rng = new SeededRandom(SEED);
    const stats = { refused: 0, big: 0, zero: 0, underfilled: 0, maps: 0, uniform: 0, maxTokens: 0, maxBatch: 0 };
    for (let it = 0; it < CAMPAIGN; it++) {
      const cr = rng.next() < 0.5 ? 4 : 128;
      const ring = cr === 4 ? [8, 16, 32][rng.int(0, 2)]! : [128, 256][rng.int(0, 1)]!;
      const sps = ring * [1, 2, 4, 16][rng.int(0, 3)]!;
      const useReqRing = cr === 4 && rng.next() < 0.3;
      const path = rng.next() < 0.5 ? "device" : "host";
      // batch size: mostly small, some up to 1,024, a few beyond (up to 4,096) and some long single requests
      const kind = rng.int(0, 99);
      const batch =
        kind < 60 ? rng.int(1, 8) : kind < 85 ? rng.int(9, 256) : kind < 97 ? rng.int(257, 1024) : rng.int(1025, 4096);
      const maxTokens = 65535;
      const perReq = Math.max(1, Math.floor(maxTokens / batch));
      const uniform = rng.next() < 0.25;
      const eu = rng.int(1, Math.min(32, perReq));
      const seqLens: number[] = [];
      const extendLens: number[] = [];
      let sum = 0;
      const longCap = batch === 1 && rng.next() < 0.3 ? maxTokens : Math.min(perReq, rng.next() < 0.2 ? 4095 : 300);
      for (let b = 0; b < batch; b++) {
        let e = uniform ? eu : rng.int(path === "device" && rng.next() < 0.05 ? 0 : 1, Math.max(1, longCap));
        if (sum + e > maxTokens) e = path === "device" ? 0 : 1;
        const prefix = rng.next() < 0.2 ? 0 : rng.int(0, 20000);
        seqLens.push(prefix + e);
        extendLens.push(e);
        sum += e;
      }
      if (sum < batch || sum > maxTokens) continue; // host rules need sum(E) == numQ >= batch
      if (extendLens.includes(0)) stats.zero++;
      const o: PrefillPlanOptions = {
        compressRatio: cr,
        ringSize: ring,
        swaPageSize: sps,
        useReqRing,
        seqLens,
        extendLens,
        path,
      };
      if (path === "device") {
        o.deviceBatchLimit = 1 << 20;
        if (rng.next() < 0.4) {
          o.numQTokens = Math.min(maxTokens, sum + rng.int(1, 64));
          stats.underfilled++;
        }
      } else if (rng.next() < 0.3) {
        o.useCudaGraph = true;
      }
      if (rng.next() < 0.3) o.reqPoolIndices = Array.from({ length: batch }, () => rng.int(0, 2 * batch + 3));
      if (!useReqRing && cr === 4 && rng.next() < 0.2 && batch <= 64) {
        // explicit maps: shuffled req_to_token rows and a shifted full_to_state
        const rows = 2 * batch + 4;
        const stride = Math.max(...seqLens) + rng.int(0, 7);
        const r2t = new Int32Array(rows * stride);
        for (let i = 0; i < r2t.length; i++) r2t[i] = (i * 7 + 3) % (rows * stride);
        const f2s = new Int32Array(rows * stride);
        for (let i = 0; i < f2s.length; i++) f2s[i] = (i + 1000) % (rows * stride);
        // both tables, req_to_token only, or full_to_state only (identity rows of the same stride): each a kernel
        const which = rng.int(0, 2);
        o.reqToToken = which === 2 ? { identity: { tokensPerReq: stride } } : { data: r2t, stride };
        if (which !== 1) o.fullToState = f2s;
        stats.maps++;
      }
      if (uniform) stats.uniform++;
      stats.maxTokens = Math.max(stats.maxTokens, o.numQTokens ?? sum);
      stats.maxBatch = Math.max(stats.maxBatch, batch);
      if (batch > 1024) stats.big++;
      if (!o.reqToToken && rng.next() < 0.9) o.reqToToken = { identity: { tokensPerReq: 1 << 17 } };
      const label = `it ${it} c${cr} R${ring} sps${sps} req=${useReqRing} ${path} B${batch}`;
      let cpu: ReturnType<typeof planPrefill>;
      try {
        cpu = planPrefill(o);
      } catch (e) {
        // inputs the CPU planner refuses (e.g. a position past the identity row): the GPU must refuse them alike
        stats.refused++;
        expect(
          errorCode(() => planPrefillGpu(o)),
          label,
        ).toBe((e as { code: string }).code);
        continue;
      }
      expectSamePrefill(planPrefillGpu(o), cpu, label);
    }
    console.log(`campaign coverage: ${JSON.stringify(stats)}`);
    expect(stats.big).toBeGreaterThan(0);
    expect(stats.zero).toBeGreaterThan(0);
    expect(stats.underfilled).toBeGreaterThan(0);
  });
  gpuTest(
    "2,000 decode batches (paged with and without tables, request ring, c128, legacy; up to 10,000 requests) agree with the CPU planner",
    ({ gpu }) => {
      void gpu;
      const rng = new SeededRandom(SEED + 1);
      for (let it = 0; it < 2000; it++) {
        const cr = rng.next() < 0.5 ? 4 : 128;
        const ring = cr === 4 ? [8, 16][rng.int(0, 1)]! : [128, 256][rng.int(0, 1)]!;
        // 10,000 requests exceed the 8,192 threads of the capped decode grid: the looping kernel variant.
        const batch = [1, 8, 256, 1024, 3000, 10000][rng.int(0, 5)]!;
        const seqLens = Array.from({ length: batch }, () => rng.int(1, 2048));
        const reqPoolIndices = Array.from({ length: batch }, () => rng.int(0, 4096));
        const o: Parameters<typeof planDecode>[0] = {
          compressRatio: cr,
          ringSize: ring,
          swaPageSize: ring * 16,
          useReqRing: cr === 4 && rng.next() < 0.3,
          seqLens,
          reqPoolIndices,
        };
        if (cr === 4 && !o.useReqRing && batch <= 256 && rng.next() < 0.25) {
          // explicit maps (the paged kernel's table reads): shuffled req_to_token rows, a shifted full_to_state
          const rows = 2 * batch + 4;
          const stride = Math.max(...seqLens) + rng.int(0, 7);
          o.reqPoolIndices = Array.from({ length: batch }, () => rng.int(0, rows - 1));
          const r2t = new Int32Array(rows * stride);
          for (let i = 0; i < r2t.length; i++) r2t[i] = (i * 7 + 3) % (rows * stride);
          const f2s = new Int32Array(rows * stride);
          for (let i = 0; i < f2s.length; i++) f2s[i] = (i + 1000) % (rows * stride);
          const which = rng.int(0, 2); // both tables, req_to_token only, full_to_state only
          o.reqToToken = which === 2 ? { identity: { tokensPerReq: stride } } : { data: r2t, stride };
          if (which !== 1) o.fullToState = f2s;
        }
        expectSameDecode(planDecodeGpu(o), planDecode(o), `decode it ${it}`);
        if (it % 10 === 0)
          expectSameDecode(
            planDecodeLegacyGpu({ compressRatio: cr, seqLens, reqPoolIndices }),
            planDecodeLegacy({ compressRatio: cr, seqLens, reqPoolIndices }),
            `legacy decode it ${it}`,
          );
      }
    },
  );
  // The kernels take int32 arithmetic without per-slot checks for pool indices up to max_rid (every slot fits int32)
  // and the fully checked path above it. Ring 384 (c128): max_rid = floor((2^31-1 - 383) / 384) = 5,592,404, and
  // rid 5,592,405 has base 2,147,483,520, so its slot fits int32 exactly when p % 384 <= 127: both paths, both sides
  // of the edge, mixed with ordinary requests in one batch.
  gpuTest(
    "pool indices at the int32 edge of the request ring (fast and checked paths) agree with the CPU planner",
    ({ gpu }) => {
      void gpu;
      const edge = 5_592_405;
      const ring = { compressRatio: 128 as const, ringSize: 384, swaPageSize: 384 * 4 };
      // decode: S - 1 and max(S - 1 - 128, 0) both with p % 384 <= 127 (so S <= 128 at the edge) -> fits;
      // S = 384 + 300 -> overflows
      const fits = { ...ring, seqLens: [384 * 9 + 100, 100, 128], reqPoolIndices: [edge - 1, edge, edge] };
      expectSameDecode(planDecodeGpu(fits), planDecode(fits), "decode at the edge");
      const over = { ...ring, seqLens: [7, 384 + 300], reqPoolIndices: [edge - 1, edge] };
      expect(errorCode(() => planDecodeGpu(over))).toBe(errorCode(() => planDecode(over)));
      expect(errorCode(() => planDecode(over))).toBe("INT32_OVERFLOW");
      const legacyEdge = Math.floor((2 ** 31 - 1 - 127) / 128);
      for (const cr of [4, 128] as const) {
        const l = { compressRatio: cr, seqLens: [9, 700], reqPoolIndices: [legacyEdge - 1, legacyEdge] };
        expectSameDecode(planDecodeLegacyGpu(l), planDecodeLegacy(l), `legacy decode at the edge c${cr}`);
        const lo = { compressRatio: cr, seqLens: [9, 700], reqPoolIndices: [legacyEdge, legacyEdge + 1] };
        expect(errorCode(() => planDecodeLegacyGpu(lo))).toBe(errorCode(() => planDecodeLegacy(lo)));
      }
      // prefill: a request whose positions stay at p % 384 <= 127 next to an ordinary one; then one that crosses 127
      const pf = { ...ring, seqLens: [384 * 3 + 100, 50], extendLens: [40, 20], reqPoolIndices: [edge, 3] };
      bothPaths(pf, "prefill at the edge");
      const pfo = { ...ring, seqLens: [384 * 3 + 140, 50], extendLens: [40, 20], reqPoolIndices: [edge, 3] };
      expect(errorCode(() => planPrefillGpu(pfo))).toBe(errorCode(() => planPrefill(pfo)));
      expect(errorCode(() => planPrefill(pfo))).toBe("INT32_OVERFLOW");
    },
  );
});
