/**
 * The pair-state ring as a model of the residency search (docs/reference/ratio2-pair-ring.md#4-the-proof): states
 * reduce to (prefix mod lcm(R₂, 2), whether the last committed position's slot still holds it when the prefix is
 * odd), and each batch's effect comes from `pairBatchAccess`, the rules the simulator runs.
 */
import type { BatchEffect } from "../prove/effects.js";
import type { PrefixPlanner, ProofModel, StateGeometry } from "../prove/search.js";
import { type PairBatch, type PairRingConfig, pairBatchAccess } from "./access.js";

/**
 * Only one committed position can ever be read from the ring: the partner `p - 1` of an odd prefix `p` (every other
 * partner is the previous row of the same batch). So the window is that position or nothing, and prefixes one period
 * apart (the ring's slots and the parity both repeat) have the same future.
 */
export class PairRingGeometry implements StateGeometry {
  readonly cr = 2;
  readonly paged = false;
  readonly swaPageSize = 0;
  /** lcm(R₂, 2): shifting a prefix by it keeps every slot and every parity. */
  readonly period: number;
  constructor(readonly ringSize: number) {
    this.period = ringSize % 2 === 0 ? ringSize : 2 * ringSize;
  }
  windowStart(p: number): number {
    return p % 2 === 1 ? p - 1 : p;
  }
  canonical(p: number): number {
    return p % this.period;
  }
}

/**
 * Longest chunk the search explores: a chunk of R₂ rows or more writes every slot (its last R₂ rows) and ends in a
 * state set by its end's canonical prefix alone, so lengths from R₂ on repeat with the period.
 */
export function pairChunkBound(g: PairRingGeometry): number {
  return g.ringSize + g.period;
}

/** The effect of `batch` at prefix `prefix` on the canonical state's window bit. */
export function pairEffect(config: Required<PairRingConfig>, prefix: number, batch: PairBatch): BatchEffect {
  const a = pairBatchAccess(config, batch, prefix);
  const windowSlot = prefix % 2 === 1 ? (prefix - 1) % config.ringSize : -1;
  // last writer per slot; two writers of one concurrent block leave the slot holding neither
  const bySlot = new Map<number, number | null>();
  for (const w of a.writes) bySlot.set(w.slot, a.concurrent && bySlot.has(w.slot) ? null : w.position);
  let written = 0n;
  for (const x of bySlot.values()) if (x !== null) written |= 1n << BigInt(x - prefix);
  return {
    readMask: a.read === null ? 0n : 1n,
    clobber: bySlot.has(windowSlot) ? 1n : 0n,
    written,
    readsAfterWrite: a.concurrent,
    unconditional: false,
    tails: [],
  };
}

/** The search model of one pair ring. */
export function pairRingModel(config: Required<PairRingConfig>): ProofModel {
  const g = new PairRingGeometry(config.ringSize);
  return {
    key: `2/${config.ringSize}/${config.verifyWriter}`,
    geometry: g,
    maxChunk: pairChunkBound(g),
    at(canonical): PrefixPlanner {
      return {
        chunk: (tokens) => pairEffect(config, canonical, { kind: "prefill", tokens }),
        verify: (draftTokens) => pairEffect(config, canonical, { kind: "verify", draftTokens }),
        decode: () => pairEffect(config, canonical, { kind: "decode" }),
      };
    },
  };
}
