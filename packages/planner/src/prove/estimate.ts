/**
 * What a residency proof will cost, known before it starts: every canonical prefix it reaches is planned for every
 * chunk length and draft count (the bulk of the time, and of the memory, since the plans are kept), and each
 * such prefix is at least one state. A caller refuses a proof whose estimate passes its bounds before it runs.
 */
import { validateRing } from "../inputs.js";
import { RingGeometry } from "./geometry.js";
import { type ResidencyProofOptions, chunkBound, resolvePad } from "./search.js";

export interface ResidencyProofEstimate {
  /** Canonical prefixes (2 × the addressing's period): each reached one is planned, and is at least one state. */
  canonicalPrefixes: number;
  /** Prefill chunk lengths planned per prefix (1..chunkLengths). */
  chunkLengths: number;
  /** Draft counts planned per prefix (1 or, adaptive, D). */
  draftCounts: number;
  /** Batch plans: canonicalPrefixes × (chunkLengths + draftCounts). */
  plans: number;
  /** Tokens those plans cover (a plan's cost grows with its tokens): the work estimate. */
  plannedTokens: number;
  /** Bytes the kept plan effects take, about (each holds a few window-sized bit sets). */
  effectBytes: number;
  writePad: number;
}

/** Bytes of one kept batch effect besides its bit sets: object, array slot, bigint headers (measured, rounded up). */
const EFFECT_OVERHEAD_BYTES = 600;
/** Bit sets per effect (read mask, clobber, written, and tails'). */
const EFFECT_BIT_SETS = 4;

export function estimateResidencyProof(o: ResidencyProofOptions): ResidencyProofEstimate {
  validateRing(o);
  const g = new RingGeometry(o);
  const writePad = resolvePad(o);
  const chunkLengths = chunkBound(g, writePad);
  const draftCounts = o.adaptive === true ? o.draftTokens : 1;
  const canonicalPrefixes = g.canonicalCount;
  const draftTokens = o.adaptive === true ? (o.draftTokens * (o.draftTokens + 1)) / 2 : o.draftTokens;
  const perPrefixTokens = (chunkLengths * (chunkLengths + 1)) / 2 + draftTokens;
  const windowBytes = Math.ceil((g.window + chunkLengths) / 8);
  return {
    canonicalPrefixes,
    chunkLengths,
    draftCounts,
    plans: canonicalPrefixes * (chunkLengths + draftCounts),
    plannedTokens: canonicalPrefixes * perPrefixTokens,
    effectBytes:
      canonicalPrefixes * (chunkLengths + draftCounts) * (EFFECT_OVERHEAD_BYTES + EFFECT_BIT_SETS * windowBytes),
    writePad,
  };
}
