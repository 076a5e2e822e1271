// `prove residency --ratio 2` and `simulate residency --ratio 2` (docs/reference/ratio2-pair-ring.md): the proof
// decides a ring and width, prints SGLang's guards beside it, tabulates which R₂ serves which D, and its
// counterexample replays through `simulate residency --replay`; flags of the c4/c128 ring are refused for ratio 2.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

describe("prove residency --ratio 2", () => {
  it("a ring too small: the shortest counterexample, the bound by hand and SGLang's guards; exit 1", () => {
    const r = cli(["prove", "residency", "--ratio", "2", "--ring", "4", "--draft-tokens", "5"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain("c2 pair ring 4 (request ring, torch verify writer), D = 5");
    expect(r.stdout).toMatch(/1\. prefill of 2 tokens at prefix 0\n {2}2\. verify of D=5 at prefix 2, accept 1\n/);
    expect(r.stdout).toMatch(/holds position 6 \(a rejected draft\)/);
    expect(r.stdout).toMatch(/by hand this ring serves D <= 4 .* ring_size > draft_len refuses it, write pad 4 < 5/);
  });

  it("DSpark's ring (R₂ 8, every D up to 6) proves; exit 0", () => {
    const r = cli(["prove", "residency", "--ratio", "2", "--ring", "8", "--draft-tokens", "6", "--adaptive"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/proved: no batch sequence loses a committed partner/);
  });

  it("--find-max alone: which R₂ serves which D, by proofs, beside the kernel check, the pad and SGLang's sizing", () => {
    const r = cli(["prove", "residency", "--ratio", "2", "--find-max", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout).rings;
    expect(
      rows.map((x: { ringSize: number; torchMaxDraftTokens: number }) => [x.ringSize, x.torchMaxDraftTokens]),
    ).toEqual([
      [2, 2],
      [4, 4],
      [8, 8],
      [16, 16],
      [32, 32],
      [64, 64],
    ]);
    expect(rows[2]).toMatchObject({
      fusedMaxDraftTokens: 7,
      kernelCheckMaxDraftTokens: 7,
      writePad: 8,
      sglangSizesFor: "D 3-6",
    });
    expect(rows[0]).toMatchObject({ fusedMaxDraftTokens: 1, writePad: 0, sglangSizesFor: "no speculation" });
  });

  it("the --json counterexample replays in simulate residency --replay (also a --find-max failure)", () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-ring-"));
    for (const extra of [["--draft-tokens", "9"], ["--find-max"]]) {
      const p = cli([
        "prove",
        "residency",
        "--ratio",
        "2",
        "--ring",
        "8",
        "--verify-writer",
        "verify-fused",
        ...extra,
        "--json",
      ]);
      const file = join(dir, `${extra[0]}.json`);
      writeFileSync(file, p.stdout);
      const proof = JSON.parse(p.stdout);
      const failure = proof.failure ?? proof;
      const replay = cli(["simulate", "residency", "--replay", file, "--json"]);
      expect(replay.code, replay.stderr).toBe(1);
      expect(JSON.parse(replay.stdout).firstViolation).toEqual(failure.counterexample.violation);
    }
  });

  it("refuses the c4/c128 flags for ratio 2, and --verify-writer elsewhere", () => {
    const bad = (args: string[], pattern: RegExp) => {
      const r = cli(["prove", "residency", ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(pattern);
    };
    bad(["--ratio", "2", "--ring", "8", "--swa-page", "256", "--draft-tokens", "2"], /--swa-page.*no SWA page/);
    bad(["--ratio", "2", "--ring", "8", "--pad", "3", "--draft-tokens", "2"], /--pad.*no write pad/);
    bad(["--ratio", "2", "--draft-tokens", "2"], /--ring.*is required/);
    bad(
      ["--ratio", "4", "--ring", "16", "--swa-page", "256", "--draft-tokens", "2", "--verify-writer", "torch"],
      /only to --ratio 2/,
    );
    bad(["--ratio", "4", "--ring", "16", "--draft-tokens", "2"], /--swa-page: is required/);
  });
});

describe("simulate residency --ratio 2", () => {
  it("runs clean within the bound and finds the violation past it", () => {
    const ok = cli(["simulate", "residency", "--ratio", "2", "--ring", "8", "--draft-tokens", "6", "--adaptive"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/serves at most 8 draft tokens per verify/);
    const bad = cli(["simulate", "residency", "--ratio", "2", "--ring", "8", "--draft-tokens", "9", "--json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      ring: { compressRatio: 2, ringSize: 8 },
      firstViolation: { kind: "never-written" },
    });
  });
});
