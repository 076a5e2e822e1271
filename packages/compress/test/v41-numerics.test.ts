// The V4.1 number formats and entry layouts, byte for byte (docs/reference/deepseek-v4.1.md §10.3).
import { describe, expect, it } from "vitest";
import {
  ENTRY_LAYOUT_TRAITS,
  decodeEntry,
  encodeEntry,
  entryOffsets,
  entryPageBytes,
  V41_ENTRY_LAYOUTS,
} from "../src/index.js";
import {
  bf16Round,
  e2m1Code,
  e2m1Value,
  e4m3Bits,
  e4m3Value,
  fakeQuantFp4,
  fp4FakeQuantScale,
  ue8m0Ceil,
  v41Fp8ScaleExponent,
  v4NopeScaleExponent,
} from "../src/v41/numerics.js";

describe("bf16 / e4m3 / e2m1 / ue8m0", () => {
  it("rounds bf16 to nearest even", () => {
    expect(bf16Round(1 + 2 ** -8)).toBe(1); // tie, even
    expect(bf16Round(1 + 3 * 2 ** -8)).toBe(1 + 2 ** -6); // tie, odd below: up
    expect(bf16Round(1 + 2 ** -8 + 2 ** -20)).toBe(1 + 2 ** -7);
    expect(bf16Round(-1.2345)).toBe(-1.234375);
  });

  it("encodes e4m3fn with RNE and saturation, and decodes every finite code back", () => {
    expect(e4m3Bits(448)).toBe(0x7e);
    expect(e4m3Bits(1e6)).toBe(0x7e);
    expect(e4m3Bits(-1e6)).toBe(0xfe);
    expect(e4m3Bits(1)).toBe(0x38);
    expect(e4m3Bits(1.0625)).toBe(0x38); // tie between 1 and 1.125: even mantissa
    expect(e4m3Bits(1.1875)).toBe(0x3a); // tie between 1.125 and 1.25: 1.25
    expect(e4m3Bits(2 ** -9)).toBe(0x01); // smallest subnormal
    expect(e4m3Bits(2 ** -10)).toBe(0x00); // tie with 0: even
    expect(e4m3Bits(3 * 2 ** -10)).toBe(0x02);
    expect(e4m3Bits(-0)).toBe(0x80);
    for (let b = 0; b < 256; b++) {
      if ((b & 0x7f) === 0x7f) continue; // NaN codes
      expect(e4m3Bits(e4m3Value(b))).toBe(b);
    }
  });

  it("rounds e2m1 to the grid with ties to even, saturating, the sign kept", () => {
    const cases: [number, number][] = [
      [0.25, 0],
      [0.75, 1],
      [1.25, 1],
      [1.75, 2],
      [2.5, 2],
      [3.5, 4],
      [5, 4],
      [5.01, 6],
      [7, 6],
      [-1.75, -2],
    ];
    for (const [x, want] of cases) expect(e2m1Value(e2m1Code(x))).toBe(want);
    expect(e2m1Code(-0)).toBe(8);
    expect(e2m1Code(-0.1)).toBe(8); // rounds to zero, sign kept
    expect(e2m1Code(6)).toBe(7);
  });

  it("derives the scales as the kernels do", () => {
    expect(ue8m0Ceil(1)).toBe(127);
    expect(ue8m0Ceil(1.0000001)).toBe(128);
    expect(v41Fp8ScaleExponent(448)).toBe(127); // 448 / 448 = 1
    expect(v41Fp8ScaleExponent(449)).toBe(128);
    expect(v41Fp8ScaleExponent(0)).toBe(114); // floor 2^-13
    expect(v4NopeScaleExponent(448)).toBe(127);
    expect(v4NopeScaleExponent(0)).toBe(ue8m0Ceil(Math.fround(Math.fround(1e-4) / 448)));
    expect(fp4FakeQuantScale(6)).toBe(1);
    expect(fp4FakeQuantScale(0)).toBe(2 ** -9);
    expect(fp4FakeQuantScale(1e9)).toBe(448);
    expect(fakeQuantFp4(0.3, 1)).toBe(0.5); // nearest of 0 and 0.5
    expect(fakeQuantFp4(3, 0.5)).toBe(3); // 6 on the grid, times the scale
    // `x / scale + 0` clears only an exact −0; a small negative keeps its sign through the e2m1 code
    expect(Object.is(fakeQuantFp4(-0, 1), 0)).toBe(true);
    expect(Object.is(fakeQuantFp4(-0.2, 1), -0)).toBe(true);
  });
});

describe("entry layouts", () => {
  it("has SGLang's sizes and page padding", () => {
    expect(V41_ENTRY_LAYOUTS.map((l) => ENTRY_LAYOUT_TRAITS[l].bytesPerToken)).toEqual([584, 528, 288]);
    expect(entryPageBytes("v4", 128)).toBe(74_880);
    expect(entryPageBytes("v4", 256)).toBe(149_760);
    expect(entryPageBytes("v41", 256)).toBe(135_168);
    expect(entryPageBytes("v41-fp4", 128)).toBe(36_864);
    expect(entryOffsets("v4", 128, 130)).toEqual({ data: 74_880 + 2 * 576, scale: 74_880 + 128 * 576 + 2 * 8 });
  });

  it("v4: 448 e4m3 (a ue8m0 scale per 64) + 64 bf16 little-endian, then 7 scales and a pad byte", () => {
    const v = new Float32Array(512);
    v[0] = 448;
    v[1] = -1;
    v[448] = 1.5;
    v[511] = -2;
    const b = encodeEntry("v4", v);
    expect(b.length).toBe(584);
    expect(b[0]).toBe(0x7e); // 448 with scale 2^0
    expect(b[1]).toBe(0xb8); // -1
    expect([b[448], b[449]]).toEqual([0xc0, 0x3f]); // bf16 1.5 = 0x3fc0
    expect([b[574], b[575]]).toEqual([0x00, 0xc0]); // bf16 -2 = 0xc000
    expect(b[576]).toBe(127);
    expect(b[577]).toBe(v4NopeScaleExponent(0));
    expect(b[583]).toBe(0);
    expect(Array.from(decodeEntry("v4", b).subarray(0, 2))).toEqual([448, -1]);
    expect(decodeEntry("v4", b)[511]).toBe(-2);
  });

  it("v41: 512 e4m3 with a ue8m0 scale per 32, RoPE dims included", () => {
    const v = new Float32Array(512);
    v[0] = 1; // amax 1: scale 2^-8, 1 · 2^8 = 256 = e4m3 0x78
    v[500] = 3;
    const b = encodeEntry("v41", v);
    expect(b.length).toBe(528);
    expect(b[0]).toBe(0x78);
    expect(b[512]).toBe(119);
    expect(b[512 + 15]).toBe(v41Fp8ScaleExponent(3));
    const back = decodeEntry("v41", b);
    expect(back[0]).toBe(1);
    expect(back[500]).toBe(3);
  });

  it("v41-fp4: e2m1 pairs (even element low nibble) and an e4m3 scale per 16", () => {
    const v = new Float32Array(512);
    v[0] = 6;
    v[1] = -1;
    const b = encodeEntry("v41-fp4", v);
    expect(b.length).toBe(288);
    expect(b[0]).toBe(0xa7); // 6 → code 7 (low), -1 → code 0xa (high)
    expect(b[256]).toBe(0x38); // amax 6 → scale 1
    expect(b[257]).toBe(0x01); // an all-zero block: scale 2^-9
    expect(Array.from(decodeEntry("v41-fp4", b).subarray(0, 3))).toEqual([6, -1, 0]);
  });

  it("refuses wrong shapes with typed errors", () => {
    expect(() => encodeEntry("v4", new Float32Array(10))).toThrow(expect.objectContaining({ field: "values.length" }));
    expect(() => decodeEntry("v41", new Uint8Array(584))).toThrow(expect.objectContaining({ field: "bytes.length" }));
    expect(() => encodeEntry("v5" as never, new Float32Array(512))).toThrow(
      expect.objectContaining({ field: "layout" }),
    );
  });
});
