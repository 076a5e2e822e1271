import { describe, expect, it } from "vitest";
import {
  MemoryPoolError,
  attentionHeadDim,
  c128OfflineRequestRows,
  c128OfflineStateRow,
  compressStatePool,
  compressStateRingSize,
  compressStateWritePad,
  fullLocToC4CompressedIndex,
  indexerBytesPerToken,
  indexerPool,
  kvBytesPerToken,
  offlineStateRowBytes,
  onlineC128RowBytes,
  singleKvPool,
  swaLocToC4StateRow,
  swaRingSize,
} from "../src/index.js";
import { configuratorKvBytesPerToken } from "../src/bytes.js";
import { kvBytesPerPage } from "../src/pools.js";
import { FLASH } from "./fixtures.js";

describe("ring sizes (pools-and-sizing §4.1)", () => {
  it("c4 8/16, c128 128/256", () => {
    expect(compressStateRingSize(4, { isSpeculative: false })).toBe(8);
    expect(compressStateRingSize(4, { isSpeculative: true })).toBe(16);
    expect(compressStateRingSize(128, { isSpeculative: false })).toBe(128);
    expect(compressStateRingSize(128, { isSpeculative: true })).toBe(256);
  });

  it("online c128 is ring 1; with speculation only under the experimental switch (V-S9)", () => {
    expect(compressStateRingSize(128, { isSpeculative: false, onlineC128: true })).toBe(1);
    expect(compressStateRingSize(128, { isSpeculative: true, onlineC128: true, onlineC128Mtp: true })).toBe(1);
    expect(() => compressStateRingSize(128, { isSpeculative: true, onlineC128: true })).toThrow(
      /online c128 does not support MTP/,
    );
    // online applies to c128 only
    expect(compressStateRingSize(4, { isSpeculative: true, onlineC128: true })).toBe(16);
  });

  it("ratio 2: 2 without speculation, smallest power of two >= 2 + D with it", () => {
    expect(compressStateRingSize(2, { isSpeculative: false })).toBe(2);
    expect(compressStateRingSize(2, { isSpeculative: true, draftTokens: 4 })).toBe(8);
    expect(compressStateRingSize(2, { isSpeculative: true, draftTokens: 6 })).toBe(8);
    expect(compressStateRingSize(2, { isSpeculative: true, draftTokens: 7 })).toBe(16);
    expect(compressStateRingSize(2, { isSpeculative: true, draftTokens: 1 })).toBe(4);
    for (let d = 0; d < 100; d++) {
      const ring = compressStateRingSize(2, { isSpeculative: true, draftTokens: d });
      expect(ring).toBeGreaterThanOrEqual(2 + d);
      expect(ring / 2).toBeLessThan(2 + d);
      expect(Math.log2(ring) % 1).toBe(0);
    }
  });

  it("rejects an unknown ratio with a typed error", () => {
    expect(() => compressStateRingSize(8, { isSpeculative: false })).toThrow(MemoryPoolError);
    expect(() => compressStateRingSize(8, { isSpeculative: false })).toThrow(/ratio = 8/);
  });
});

describe("write pad from the planner (pools-and-sizing §4.2)", () => {
  it("values", () => {
    expect(compressStateWritePad(4, 8)).toBe(0);
    expect(compressStateWritePad(128, 128)).toBe(0);
    expect(compressStateWritePad(4, 16)).toBe(10);
    expect(compressStateWritePad(128, 256)).toBe(130);
    expect(compressStateWritePad(128, 1)).toBe(0);
    // ratio 2: windowSize(2) = 2 → pad = ring
    expect(compressStateWritePad(2, 8)).toBe(8);
  });

  it("SWA ring (pools-and-sizing §4.3)", () => {
    expect(swaRingSize(128, false)).toBe(128);
    expect(swaRingSize(128, true, 4)).toBe(131);
  });
});

describe("byte constants (pools-and-sizing §3, §5.1)", () => {
  it("KV 584 both ways, page alignment 576, indexer 132/68", () => {
    expect(kvBytesPerToken(FLASH)).toBe(584);
    expect(configuratorKvBytesPerToken(FLASH)).toBe(584);
    expect(indexerBytesPerToken(128)).toBe(132);
    expect(indexerBytesPerToken(128, true)).toBe(68);
    expect(attentionHeadDim(FLASH)).toBe(512);
  });

  it("state rows 8192 / 2048 / 4096 / 6144 B in fp32, halved in bf16", () => {
    expect(offlineStateRowBytes(512, true, 4)).toBe(8192);
    expect(offlineStateRowBytes(128, true, 4)).toBe(2048);
    expect(offlineStateRowBytes(512, false, 4)).toBe(4096);
    expect(onlineC128RowBytes(512, 4)).toBe(6144);
    expect(offlineStateRowBytes(512, true, 2)).toBe(4096);
    expect(offlineStateRowBytes(128, true, 2)).toBe(1024);
    expect(offlineStateRowBytes(512, false, 2)).toBe(2048);
  });

  it("page padding 149,760 / 37,440 / 1,728 and numPages = (size + pt + 1) // pt", () => {
    expect(kvBytesPerPage(256, FLASH)).toBe(149_760);
    expect(kvBytesPerPage(64, FLASH)).toBe(37_440);
    expect(kvBytesPerPage(2, FLASH)).toBe(1_728);
    expect(singleKvPool({ size: 1024, pageTokens: 256, layers: 3, dims: FLASH })).toMatchObject({
      shapePerLayer: [5, 149_760],
      totalBytes: 3 * 5 * 149_760,
    });
    expect(singleKvPool({ size: 255, pageTokens: 256, layers: 1, dims: FLASH }).shapePerLayer[0]).toBe(2);
    expect(singleKvPool({ size: 254, pageTokens: 256, layers: 1, dims: FLASH }).shapePerLayer[0]).toBe(1);
  });

  it("indexer pool pages of 64 · 132 = 8448 B (pools-and-sizing §5.2)", () => {
    expect(indexerPool({ size: 64 * 10, pageTokens: 64, layers: 21, indexerBytesPerToken: 132 })).toMatchObject({
      shapePerLayer: [11, 8448],
    });
  });

  it("offline state rows round up to the ratio; online requires ring 1 (V-K1)", () => {
    expect(
      compressStatePool({ size: 257 * 256, ringSize: 256, ratio: 128, headDim: 512, stateDtypeBytes: 4, layers: 20 }),
    ).toMatchObject({
      shapePerLayer: [66_176, 1024],
      totalBytes: 5_421_137_920,
    });
    expect(
      compressStatePool({ size: 10, ringSize: 16, ratio: 4, headDim: 512, stateDtypeBytes: 4, layers: 1 })
        .shapePerLayer,
    ).toEqual([28, 2048]);
    expect(() =>
      compressStatePool({
        size: 10,
        ringSize: 2,
        ratio: 128,
        headDim: 512,
        online: true,
        stateDtypeBytes: 4,
        layers: 1,
      }),
    ).toThrow(/online compress requires ring_size=1/);
    expect(() =>
      compressStatePool({ size: 10, ringSize: 16, ratio: 4, headDim: 512, stateDtypeBytes: 3, layers: 1 }),
    ).toThrow(/stateDtypeBytes = 3/);
  });
});

describe("slot math (pools-and-sizing §6)", () => {
  it("SWA location → c4 state row: one ring per SWA page", () => {
    expect(swaLocToC4StateRow(0, 256, 16)).toBe(0);
    expect(swaLocToC4StateRow(17, 256, 16)).toBe(1);
    expect(swaLocToC4StateRow(256, 256, 16)).toBe(16);
    expect(swaLocToC4StateRow(256 + 255, 256, 16)).toBe(16 + 15);
    expect(swaLocToC4StateRow(-1, 256, 16)).toBe(-1);
    expect(swaLocToC4StateRow(-7, 256, 16)).toBe(-1);
  });

  it("c128 offline: reqIdx·ring + pos mod ring; clearing covers the request's ring", () => {
    expect(c128OfflineStateRow(3, 300, 256)).toBe(3 * 256 + 44);
    expect(c128OfflineStateRow(3, -1, 256)).toBe(-1);
    expect(c128OfflineRequestRows(3, 256)).toEqual({ startRow: 768, endRow: 1024 });
  });

  it("HiSparse: (f + 1) % 4 == 0 ⇒ f // 4", () => {
    expect(fullLocToC4CompressedIndex(3)).toBe(0);
    expect(fullLocToC4CompressedIndex(7)).toBe(1);
    expect(fullLocToC4CompressedIndex(4)).toBeNull();
    expect(fullLocToC4CompressedIndex(0)).toBeNull();
  });
});
