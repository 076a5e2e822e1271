/**
 * Residency proofs of the standard configurations, computed ahead of time so that `check` can cite them without
 * spending seconds (test/residency-proof-table.test.ts recomputes every row and fails when one drifts). Each row
 * is an adaptive proof at its draft count, which covers every schedule of at most that many draft tokens.
 */
import { requireInteger } from "../inputs.js";
import type { ProofRing } from "./geometry.js";

export interface ShippedResidencyProof {
  ring: Required<ProofRing>;
  /** The derived pad of the ring (the rows are proofs of the shipped planner, not of forced pads). */
  writePad: number;
  /** Proved for every draft count 1..draftTokens at each verify. */
  draftTokens: number;
  states: number;
  transitions: number;
}

/** One shipped row: ring (ratio, size, SWA page, request ring), its pad, the proved draft count and the counts. */
function row(
  ring: [compressRatio: 4 | 128, ringSize: number, swaPageSize: number, useReqRing: boolean],
  writePad: number,
  draftTokens: number,
  states: number,
  transitions: number,
): ShippedResidencyProof {
  const [compressRatio, ringSize, swaPageSize, useReqRing] = ring;
  return { ring: { compressRatio, ringSize, swaPageSize, useReqRing }, writePad, draftTokens, states, transitions };
}

export const SHIPPED_RESIDENCY_PROOFS: readonly ShippedResidencyProof[] = [
  row([4, 16, 256, false], 10, 10, 512, 304_328),
  row([4, 16, 128, false], 10, 10, 256, 86_600),
  row([4, 16, 256, true], 10, 10, 32, 3_080),
  row([128, 256, 256, false], 130, 130, 512, 4_745_916),
];

/**
 * The shipped proof covering `draftTokens` on this ring with its derived pad, or null. A request ring's proof
 * does not depend on the SWA page size (only paged c4 addresses by page), so those rows match any valid page.
 */
export function shippedResidencyProof(ring: ProofRing, draftTokens: number): ShippedResidencyProof | null {
  requireInteger("draftTokens", draftTokens, 1, 65535);
  const paged = ring.compressRatio === 4 && !(ring.useReqRing ?? false);
  for (const p of SHIPPED_RESIDENCY_PROOFS) {
    const r = p.ring;
    if (r.compressRatio !== ring.compressRatio || r.ringSize !== ring.ringSize) continue;
    if (r.useReqRing !== (ring.useReqRing ?? false) && ring.compressRatio === 4) continue;
    if (paged && r.swaPageSize !== ring.swaPageSize) continue;
    if (ring.swaPageSize % r.ringSize !== 0) continue;
    if (draftTokens <= p.draftTokens) return p;
  }
  return null;
}
