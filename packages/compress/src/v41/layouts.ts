/**
 * The byte layouts of one DeepSeek-V4.1 compressed entry (a 512-wide latent; docs/reference/deepseek-v4.1.md §10.3),
 * as SGLang's `KVLayout` defines them: a page is `pageSize` data rows, then `pageSize` scale rows, padded to the
 * layout's alignment.
 * - `v4` (584 B): 448 e4m3 nope values (one ue8m0 scale per 64) + 64 bf16 RoPE values; 7 scale bytes + 1 pad.
 * - `v41` (528 B): 512 e4m3 values, RoPE included, one ue8m0 scale per 32: 16 scale bytes.
 * - `v41-fp4` (288 B): 512 e2m1 codes, two per byte (the even element in the low nibble), one e4m3 scale per 16.
 */
import { check, checkInt, checkOneOf } from "../check.js";
import {
  bf16Bits,
  e2m1Code,
  e2m1Value,
  e4m3Bits,
  e4m3Value,
  fp32FromBits,
  fp4StoreScale,
  ue8m0Value,
  v41Fp8ScaleExponent,
  v4NopeScaleExponent,
} from "./numerics.js";

export type V41EntryLayout = "v4" | "v41" | "v41-fp4";

export const V41_ENTRY_LAYOUTS: readonly V41EntryLayout[] = ["v4", "v41", "v41-fp4"];

/** Latent width (head_dim) and its RoPE tail (qk_rope_head_dim) of every V4.1 compressed entry. */
export const V41_LATENT_DIM = 512;
export const V41_ROPE_DIM = 64;

export interface EntryLayoutTraits {
  readonly dataBytes: number;
  readonly scaleBytes: number;
  /** Elements sharing one scale. */
  readonly tile: number;
  /** Page stride alignment (the reader's TMA row stride). */
  readonly pageAlign: number;
  readonly bytesPerToken: number;
}

export const ENTRY_LAYOUT_TRAITS: Readonly<Record<V41EntryLayout, EntryLayoutTraits>> = Object.freeze({
  v4: Object.freeze({ dataBytes: 576, scaleBytes: 8, tile: 64, pageAlign: 576, bytesPerToken: 584 }),
  v41: Object.freeze({ dataBytes: 512, scaleBytes: 16, tile: 32, pageAlign: 512, bytesPerToken: 528 }),
  "v41-fp4": Object.freeze({ dataBytes: 256, scaleBytes: 32, tile: 16, pageAlign: 256, bytesPerToken: 288 }),
});

const NOPE = V41_LATENT_DIM - V41_ROPE_DIM;

/** Bytes of one page of `pageSize` entries, padded to the layout's alignment. */
export function entryPageBytes(layout: V41EntryLayout, pageSize: number): number {
  checkOneOf(layout, V41_ENTRY_LAYOUTS, "layout");
  checkInt(pageSize, 1, 1 << 20, "pageSize");
  const t = ENTRY_LAYOUT_TRAITS[layout];
  return Math.ceil((pageSize * t.bytesPerToken) / t.pageAlign) * t.pageAlign;
}

/** Byte offsets of slot `slot`'s data row and scale row in a paged cache of `pageSize`-entry pages. */
export function entryOffsets(layout: V41EntryLayout, pageSize: number, slot: number): { data: number; scale: number } {
  const pageBytes = entryPageBytes(layout, pageSize);
  checkInt(slot, 0, 2 ** 31 - 1, "slot");
  const t = ENTRY_LAYOUT_TRAITS[layout];
  const page = Math.floor(slot / pageSize);
  const o = slot % pageSize;
  return {
    data: page * pageBytes + o * t.dataBytes,
    scale: page * pageBytes + pageSize * t.dataBytes + o * t.scaleBytes,
  };
}

function tileAmax(values: Float32Array, from: number, to: number): number {
  let amax = 0;
  for (let i = from; i < to; i++) amax = Math.max(amax, Math.abs(values[i]!));
  return amax;
}

/**
 * Encodes one entry's final values (512 fp32: the fake-quantised latent for v4 / v41, the rotated bf16 latent for
 * v41-fp4) into `data` (dataBytes) and `scale` (scaleBytes), as the kernels store them. Unchecked: the caller sizes.
 */
export function storeEntry(layout: V41EntryLayout, values: Float32Array, data: Uint8Array, scale: Uint8Array): void {
  if (layout === "v41-fp4") {
    for (let b = 0; b < V41_LATENT_DIM / 16; b++) {
      const s = fp4StoreScale(tileAmax(values, b * 16, b * 16 + 16));
      scale[b] = e4m3Bits(s);
      for (let i = b * 16; i < b * 16 + 16; i += 2) {
        const lo = e2m1Code(Math.fround(values[i]! / s));
        const hi = e2m1Code(Math.fround(values[i + 1]! / s));
        data[i / 2] = lo | (hi << 4);
      }
    }
    return;
  }
  const tile = ENTRY_LAYOUT_TRAITS[layout].tile;
  const quantised = layout === "v4" ? NOPE : V41_LATENT_DIM;
  for (let t = 0; t < quantised / tile; t++) {
    const amax = tileAmax(values, t * tile, t * tile + tile);
    const e = layout === "v4" ? v4NopeScaleExponent(amax) : v41Fp8ScaleExponent(amax);
    scale[t] = e;
    const inv = 2 ** (127 - e);
    for (let i = t * tile; i < t * tile + tile; i++) data[i] = e4m3Bits(Math.fround(values[i]! * inv));
  }
  if (layout !== "v4") return;
  scale[NOPE / tile] = 0; // the pad byte
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = NOPE; i < V41_LATENT_DIM; i++) view.setUint16(NOPE + (i - NOPE) * 2, bf16Bits(values[i]!), true);
}

/** Decodes one entry (its data row and scale row) back to 512 values, as an attention reader would. */
export function loadEntry(layout: V41EntryLayout, data: Uint8Array, scale: Uint8Array): Float32Array {
  checkOneOf(layout, V41_ENTRY_LAYOUTS, "layout");
  const t = ENTRY_LAYOUT_TRAITS[layout];
  check(data.length === t.dataBytes, "BUFFER_SHAPE", "data.length", data.length, `must be ${t.dataBytes}`);
  check(scale.length === t.scaleBytes, "BUFFER_SHAPE", "scale.length", scale.length, `must be ${t.scaleBytes}`);
  const out = new Float32Array(V41_LATENT_DIM);
  if (layout === "v41-fp4") {
    for (let i = 0; i < V41_LATENT_DIM; i++) {
      const code = i % 2 === 0 ? data[i / 2]! & 0xf : data[(i - 1) / 2]! >>> 4;
      out[i] = e2m1Value(code) * e4m3Value(scale[Math.floor(i / 16)]!);
    }
    return out;
  }
  const quantised = layout === "v4" ? NOPE : V41_LATENT_DIM;
  for (let i = 0; i < quantised; i++) out[i] = e4m3Value(data[i]!) * ue8m0Value(scale[Math.floor(i / t.tile)]!);
  if (layout === "v4") {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (let i = NOPE; i < V41_LATENT_DIM; i++)
      out[i] = fp32FromBits(view.getUint16(NOPE + (i - NOPE) * 2, true) << 16);
  }
  return out;
}

/** One entry as its bytesPerToken bytes: the data row, then the scale row (a page keeps them apart). */
export function encodeEntry(layout: V41EntryLayout, values: Float32Array): Uint8Array {
  checkOneOf(layout, V41_ENTRY_LAYOUTS, "layout");
  check(values.length === V41_LATENT_DIM, "BUFFER_SHAPE", "values.length", values.length, "must be 512");
  const t = ENTRY_LAYOUT_TRAITS[layout];
  const out = new Uint8Array(t.bytesPerToken);
  storeEntry(layout, values, out.subarray(0, t.dataBytes), out.subarray(t.dataBytes));
  return out;
}

/** `encodeEntry`'s inverse on its bytes. */
export function decodeEntry(layout: V41EntryLayout, bytes: Uint8Array): Float32Array {
  checkOneOf(layout, V41_ENTRY_LAYOUTS, "layout");
  const t = ENTRY_LAYOUT_TRAITS[layout];
  check(bytes.length === t.bytesPerToken, "BUFFER_SHAPE", "bytes.length", bytes.length, `must be ${t.bytesPerToken}`);
  return loadEntry(layout, bytes.subarray(0, t.dataBytes), bytes.subarray(t.dataBytes));
}
