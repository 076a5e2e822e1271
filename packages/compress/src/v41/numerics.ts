/**
 * The number formats of DeepSeek-V4.1's compressed entries, bit-exact on the CPU
 * (docs/reference/deepseek-v4.1.md §10.2): bf16 (round to nearest even), e4m3fn (OCP fp8, RNE, saturating at ±448,
 * as CUDA's `cvt.rn.satfinite`), e2m1 (fp4: RNE onto {0, 0.5, 1, 1.5, 2, 3, 4, 6}, saturating at ±6, the sign kept)
 * and ue8m0 (a biased power-of-two exponent). Values in and out are numbers holding fp32 values.
 */
const f = Math.fround;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The fp32 bits of `x` (x is rounded to fp32 first). */
export function fp32Bits(x: number): number {
  f32[0] = x;
  return u32[0]!;
}

/** The fp32 value of `bits`. */
export function fp32FromBits(bits: number): number {
  u32[0] = bits >>> 0;
  return f32[0]!;
}

/** fp32 → bf16 bits, round to nearest even (finite inputs). */
export function bf16Bits(x: number): number {
  const b = fp32Bits(x);
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** fp32 → the fp32 value of its bf16 rounding (nearest even). */
export function bf16Round(x: number): number {
  return fp32FromBits(bf16Bits(x) << 16);
}

/** Largest finite e4m3fn value. */
export const E4M3_MAX = 448;
/** Largest e2m1 magnitude. */
export const E2M1_MAX = 6;

/** Round |x| to the grid of `step` multiples, ties to even multiples (exact: step is a power of two). */
function rneToStep(mag: number, step: number): number {
  const q = mag / step;
  const fl = Math.floor(q);
  const rest = q - fl;
  const n = rest > 0.5 || (rest === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
  return n * step;
}

/** The e4m3fn value nearest |x| (RNE), saturated at 448; sign of x applied. */
export function e4m3Round(x: number): number {
  const mag = Math.min(Math.abs(x), E4M3_MAX);
  if (mag === 0) return x < 0 || Object.is(x, -0) ? -0 : 0;
  const e = Math.max(Math.floor(Math.log2(mag)), -6);
  // log2 may land one off at a power of two; fix the binade exactly
  const exp = 2 ** e > mag ? e - 1 : 2 ** (e + 1) <= mag ? e + 1 : e;
  const q = Math.min(rneToStep(mag, 2 ** (Math.max(exp, -6) - 3)), E4M3_MAX);
  return x < 0 ? -q : q;
}

/** e4m3fn bits of x: RNE, saturating (`cvt.rn.satfinite.e4m3x2.f32`). */
export function e4m3Bits(x: number): number {
  const v = e4m3Round(x);
  const sign = v < 0 || Object.is(v, -0) ? 0x80 : 0;
  const mag = Math.abs(v);
  if (mag === 0) return sign;
  if (mag < 2 ** -6) return sign | Math.round(mag / 2 ** -9); // subnormal: mantissa × 2^-9
  const e = Math.floor(Math.log2(mag));
  const exp = 2 ** e > mag ? e - 1 : e;
  const mant = Math.round((mag / 2 ** exp - 1) * 8);
  return sign | ((exp + 7) << 3) | mant;
}

/** The value of e4m3fn bits (0x7f / 0xff, NaN, is refused by the callers: never produced here). */
export function e4m3Value(bits: number): number {
  const sign = bits & 0x80 ? -1 : 1;
  const exp = (bits >>> 3) & 0xf;
  const mant = bits & 7;
  const mag = exp === 0 ? mant * 2 ** -9 : (1 + mant / 8) * 2 ** (exp - 7);
  return sign * mag;
}

const E2M1_GRID = [0, 0.5, 1, 1.5, 2, 3, 4, 6] as const;

/** e2m1 code (4 bits, sign in bit 3) of x: RNE onto the grid, saturating at 6, the sign kept (also for ±0). */
export function e2m1Code(x: number): number {
  const mag = Math.min(Math.abs(x), E2M1_MAX);
  const step = mag < 2 ? 0.5 : mag < 4 ? 1 : 2;
  const q = rneToStep(mag, step);
  const idx = q < 2 ? q * 2 : q < 4 ? q + 2 : q / 2 + 4;
  const neg = x < 0 || Object.is(x, -0);
  return idx | (neg ? 8 : 0);
}

/** The value of an e2m1 code. */
export function e2m1Value(code: number): number {
  const mag = E2M1_GRID[code & 7]!;
  return code & 8 ? -mag : mag;
}

/** `cast_to_ue8m0`: the biased exponent of the smallest power of two >= x (x > 0 finite fp32). */
export function ue8m0Ceil(x: number): number {
  const b = fp32Bits(x);
  return ((b >>> 23) & 0xff) + ((b & 0x7fffff) !== 0 ? 1 : 0);
}

/** 2^(e − 127), the scale a ue8m0 byte stands for. */
export function ue8m0Value(exponent: number): number {
  return 2 ** (exponent - 127);
}

/**
 * The V4 nope scale exponent of a 64-element tile: `cast_to_ue8m0(fp32(max(1e-4, amax) / 448))` (the fp32 quotient
 * first, then rounded up to a power of two).
 */
export function v4NopeScaleExponent(amax: number): number {
  return ue8m0Ceil(f(Math.max(f(1e-4), amax) / E4M3_MAX));
}

/**
 * The V41 fp8 scale exponent of a 32-element tile: `2^ceil(log2(max(amax / 448, 1e-4)))` read from the bits of amax
 * (exact, no fp32 division): amax's exponent − 8, plus one when its mantissa exceeds 1.75, floored at 2^-13.
 */
export function v41Fp8ScaleExponent(amax: number): number {
  const b = fp32Bits(amax);
  return Math.max(((b >>> 23) & 0xff) - 8 + ((b & 0x7fffff) > 0x600000 ? 1 : 0), 114);
}

function fp4Scale(raw: number): number {
  return e4m3Round(Math.min(Math.max(raw, 2 ** -9), E4M3_MAX));
}

/** The fake-quant scale of a 16-element block (`compressed_kv_scale`): e4m3(clamp(fp32(amax · fp32(1/6)), 2^-9, 448)). */
export function fp4FakeQuantScale(amax: number): number {
  return fp4Scale(f(amax * f(1 / E2M1_MAX)));
}

/** The stored scale of a 16-element v41-fp4 block (`store_row_fp4`): e4m3(clamp(fp32(amax / 6), 2^-9, 448)). */
export function fp4StoreScale(amax: number): number {
  return fp4Scale(f(amax / E2M1_MAX));
}

/** Fake fp4 quantisation of one value with its block scale: e2m1(fp32(x / scale) + 0) · scale. */
export function fakeQuantFp4(x: number, scale: number): number {
  return f(e2m1Value(e2m1Code(f(x / scale) + 0)) * scale);
}
