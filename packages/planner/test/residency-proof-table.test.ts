// The shipped residency proofs (src/prove/table.ts) are recomputed here: a planner change that alters a proof's
// verdict or its state space fails this test until the table is regenerated.
import { describe, expect, test } from "vitest";
import { SHIPPED_RESIDENCY_PROOFS, proveResidency, shippedResidencyProof, writePad } from "../src/index.js";

describe("shipped residency proofs", () => {
  test.each(SHIPPED_RESIDENCY_PROOFS.map((p) => [`c${p.ring.compressRatio} ring ${p.ring.ringSize}`, p] as const))(
    "%s recomputes to the shipped row",
    (_name, row) => {
      expect(row.writePad).toBe(writePad(row.ring.compressRatio, row.ring.ringSize));
      const p = proveResidency({ ...row.ring, draftTokens: row.draftTokens, adaptive: true });
      expect({ proved: p.proved, states: p.states, transitions: p.transitions, writePad: p.writePad }).toEqual({
        proved: true,
        states: row.states,
        transitions: row.transitions,
        writePad: row.writePad,
      });
    },
    300_000,
  );

  test("lookup: covered draft counts, request rings at any page, paged rings only at their page", () => {
    expect(shippedResidencyProof({ compressRatio: 4, ringSize: 16, swaPageSize: 256 }, 4)?.draftTokens).toBe(10);
    expect(shippedResidencyProof({ compressRatio: 4, ringSize: 16, swaPageSize: 256 }, 11)).toBeNull();
    expect(shippedResidencyProof({ compressRatio: 4, ringSize: 16, swaPageSize: 64 }, 4)).toBeNull();
    expect(shippedResidencyProof({ compressRatio: 4, ringSize: 16, swaPageSize: 64, useReqRing: true }, 4)).not.toBeNull();
    expect(shippedResidencyProof({ compressRatio: 128, ringSize: 256, swaPageSize: 512 }, 130)).not.toBeNull();
    expect(shippedResidencyProof({ compressRatio: 128, ringSize: 512, swaPageSize: 512 }, 1)).toBeNull();
  });
});
