// The shipped residency proofs (src/prove/table.ts) are recomputed here: a planner change that alters a proof's
// verdict or its state space fails this test until the table is regenerated.
import { describe, expect, test } from "vitest";
import { SHIPPED_RESIDENCY_PROOFS, proveResidency, residencyProofStatus, writePad } from "../src/index.js";
import { shippedResidencyProof } from "../src/prove/table.js";

describe("shipped residency proofs", () => {
  test.each(
    SHIPPED_RESIDENCY_PROOFS.map((p) => {
      const r = p.ring;
      const kind = r.compressRatio === 4 && !r.useReqRing ? `paged, SWA page ${r.swaPageSize}` : "request ring";
      return [`c${r.compressRatio} ring ${r.ringSize} (${kind})`, p] as const;
    }),
  )(
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
    expect(
      shippedResidencyProof({ compressRatio: 4, ringSize: 16, swaPageSize: 64, useReqRing: true }, 4),
    ).not.toBeNull();
    expect(shippedResidencyProof({ compressRatio: 128, ringSize: 256, swaPageSize: 512 }, 130)).not.toBeNull();
    expect(shippedResidencyProof({ compressRatio: 128, ringSize: 512, swaPageSize: 512 }, 1)).toBeNull();
  });

  test("what check cites: the table, a live proof of a small ring, or not proved with the command", () => {
    expect(residencyProofStatus({ compressRatio: 4, ringSize: 16, swaPageSize: 256 }, 4)).toMatchObject({
      status: "proved",
      source: "shipped table",
      states: 512,
    });
    const small = { compressRatio: 4, ringSize: 16, swaPageSize: 16 };
    expect(residencyProofStatus(small, 10)).toMatchObject({ status: "proved", source: "live" });
    const fails = residencyProofStatus(small, 11);
    expect(fails).toMatchObject({ status: "fails", source: "live" });
    expect(fails.detail).toMatch(/needs position/);
    const big = residencyProofStatus({ compressRatio: 128, ringSize: 512, swaPageSize: 512 }, 300);
    expect(big).toMatchObject({ status: "not proved", source: null });
    expect(big.command).toBe(
      "dsv4-kv prove residency --ratio 128 --ring 512 --swa-page 512 --draft-tokens 300 --adaptive",
    );
  });
});
