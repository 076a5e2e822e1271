/**
 * What `check` says about a resolved ring: the shipped proof that covers it, a proof run now when the ring is
 * small enough to prove within a check's usual time, or "not proved" with the command that would prove it.
 */
import { requireInteger, validateRing } from "../inputs.js";
import { writePad } from "../pad.js";
import { RingGeometry, type ProofRing } from "./geometry.js";
import { proveResidency } from "./prove.js";
import { chunkBound } from "./search.js";
import { shippedResidencyProof } from "./table.js";

/** Plans a live proof may make (each prefix times each chunk length): about a second on a laptop core. */
export const LIVE_PROOF_PLAN_BUDGET = 40_000;

export interface ResidencyProofStatus {
  /** proved: every schedule of at most `draftTokens` draft tokens is safe; fails: a counterexample exists. */
  status: "proved" | "fails" | "not proved";
  source: "shipped table" | "live" | null;
  draftTokens: number;
  states: number | null;
  /** Why it was not proved, or the counterexample's explanation. */
  detail: string | null;
  /** The command that proves (or refutes) it. */
  command: string;
}

function command(ring: ProofRing, draftTokens: number): string {
  const req = ring.useReqRing ? " --req-ring" : "";
  const flags = `--ratio ${ring.compressRatio} --ring ${ring.ringSize} --swa-page ${ring.swaPageSize}${req}`;
  return `dsv4-kv prove residency ${flags} --draft-tokens ${draftTokens} --adaptive`;
}

/** The proof status of a ring with its derived pad for every schedule of at most `draftTokens` draft tokens. */
export function residencyProofStatus(ring: ProofRing, draftTokens: number): ResidencyProofStatus {
  validateRing(ring);
  requireInteger("draftTokens", draftTokens, 1, 65535);
  const cmd = command(ring, draftTokens);
  const shipped = shippedResidencyProof(ring, draftTokens);
  if (shipped !== null) {
    return {
      status: "proved",
      source: "shipped table",
      draftTokens,
      states: shipped.states,
      detail: null,
      command: cmd,
    };
  }
  const g = new RingGeometry(ring);
  const plans = g.canonicalCount * (chunkBound(g, writePad(ring.compressRatio, ring.ringSize)) + draftTokens);
  if (plans > LIVE_PROOF_PLAN_BUDGET) {
    const detail = `too large to prove within check (${plans} plans); run the command`;
    return { status: "not proved", source: null, draftTokens, states: null, detail, command: cmd };
  }
  const p = proveResidency({ ...ring, draftTokens, adaptive: true });
  return {
    status: p.proved ? "proved" : "fails",
    source: "live",
    draftTokens,
    states: p.states,
    detail: p.counterexample?.violation.message ?? null,
    command: cmd,
  };
}
