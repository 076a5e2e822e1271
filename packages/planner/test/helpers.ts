import type { CompressPlanTable, PrefillPlanOptions, WritePlanTable } from "../src/index.js";
import { planPrefill } from "../src/index.js";

/** Valid compress rows as (seqLen, ragged, bufferLen, rp0, rp1) tuples. */
export function cTuples(t: CompressPlanTable): number[][] {
  return t.validRecords().map((r) => [r.seqLen, r.raggedId, r.bufferLen, r.readPage0, r.readPage1]);
}
/** Valid write rows as (ragged, writeLoc) tuples. */
export function wTuples(t: WritePlanTable): number[][] {
  return t.validRecords().map((r) => [r.raggedId, r.writeLoc]);
}
export function hexOfRow(t: { bytes: Uint8Array }, row: number, rowBytes: number): string {
  return Buffer.from(t.bytes.subarray(row * rowBytes, (row + 1) * rowBytes))
    .toString("hex")
    .replace(/(..)(?!$)/g, "$1 ");
}

/** Positions written for a single-request batch (ragged id == extend index), as upstream's test reads them. */
export function writtenPositions(options: PrefillPlanOptions, prefix: number): Set<number> {
  const plan = planPrefill(options);
  return new Set(plan.planW.validRecords().map((w) => prefix + w.raggedId));
}

export function range(lo: number, hi: number): number[] {
  return Array.from({ length: Math.max(0, hi - lo) }, (_, i) => lo + i);
}

/**
 * Independent per-token reference of stage 0 (the upstream host loop, token by token), used to check the
 * range-based implementation. Rows are stage-0 values: C = [seqLen, ragged, bufferLen, -1, b], W = [packed, p+1].
 */
export function referenceStage0(
  cr: number,
  swaPageSize: number,
  pad: number,
  useReqRing: boolean,
  seqLens: number[],
  extendLens: number[],
): { c: number[][]; w: number[][] } {
  const window = cr === 4 ? 8 : cr;
  const c: number[][] = [];
  const w: number[][] = [];
  let counter = 0;
  seqLens.forEach((s, b) => {
    const e = extendLens[b]!;
    const prefix = s - e;
    const lastC = Math.floor(s / cr) * cr;
    const firstW = Math.min(lastC - (cr === 4 ? cr : 0), s - pad);
    for (let j = 0; j < e; j++) {
      const p = prefix + j;
      const rag = counter + j;
      if ((p + 1) % cr === 0) c.push([p + 1, rag, window - Math.min(j + 1, window), -1, b]);
      const tail = cr === 4 && !useReqRing && p % swaPageSize >= swaPageSize - cr;
      if (p >= firstW || tail) w.push([(rag | (b << 16)) >>> 0, p + 1]);
    }
    counter += e;
  });
  return { c, w };
}

/** What `fn` throws (undefined when it returns). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}
