// `dsv4-kv simulate residency` end to end.
import { describe, expect, test } from "vitest";
import { cli } from "./cli-helpers.js";
import { c4Ring16, flagArgs } from "./helpers.js";

describe("dsv4-kv simulate residency", () => {
  test("clean at the derived pad: exit 0, JSON summary", () => {
    const r = cli(c4Ring16(10, { steps: 200, json: true }));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ violations: 0, firstViolation: null, writePad: 10 });
    expect(out.steps).toBe(201);
    expect(out.verifies).toBeGreaterThan(100);
  });

  test("D = pad + 1 is caught: exit 1 and the first violation explained", () => {
    const r = cli([
      "simulate",
      "residency",
      ...flagArgs({ ratio: 128, ring: 256, "swa-page": 256, "draft-tokens": 131, steps: 100 }),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/violations?; first:/);
    expect(r.stdout).toMatch(/needs position \d+, but slot \d+/);
  });

  test("the pre-fix device pad loses positions at D = 5 (c4), the derived one does not", () => {
    const args = c4Ring16(5, { json: true, steps: 200 });
    expect(cli([...args, "--pad-formula", "pre-fix-device"]).code).toBe(1);
    expect(cli([...args, "--pad-formula", "pre-fix-host"]).code).toBe(1);
    expect(cli([...args, "--pad-formula", "derived"]).code).toBe(0);
    const forced = JSON.parse(cli([...args, "--pad", "4"]).stdout);
    expect(forced.writePad).toBe(4);
    expect(forced.violations).toBeGreaterThan(0);
  });

  test("adaptive D and the request ring", () => {
    const r = cli(c4Ring16(10, { "req-ring": true, adaptive: true, seed: 9, json: true }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).ring.useReqRing).toBe(true);
  });

  test("no flags: the default DeepSeek-V4 rings (c4 16 at 10, c128 256 at 130) are clean", () => {
    const r = cli(["simulate", "residency", "--json", "--steps", "100"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(
      out.rings.map((x: { ring: { ringSize: number }; draftTokens: number }) => [x.ring.ringSize, x.draftTokens]),
    ).toEqual([
      [16, 10],
      [256, 130],
    ]);
  });

  test("bad input exits 2 with a message naming the flag", () => {
    const missing = cli(["simulate", "residency", "--ratio", "4"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--ring: is required when any of .* \(so are --swa-page, --draft-tokens\)/);
    const badRatio = cli(c4Ring16(3, { ratio: 8 }));
    expect(badRatio.code).toBe(2);
    expect(badRatio.stderr).toMatch(/--ratio = 8: must be 4 or 128/);
    const badRing = cli(c4Ring16(3, { ring: 18 }));
    expect(badRing.code).toBe(2);
    expect(badRing.stderr).toMatch(/ringSize = 18: must be a multiple of compressRatio 4/);
    expect(cli(["simulate", "residency", "--steps", "x"]).stderr).toMatch(/--steps = "x": must be an integer/);
    expect(cli(["simulate", "residency", "--pad", "3", "--pad-formula", "derived"]).code).toBe(2);
  });

  test("piped: the estimate and plain lines, no progress bar; --quiet: nothing on stderr", () => {
    const r = cli(c4Ring16(10, { steps: 2500 }));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^simulate residency: 1 ring × 2,500 batches after the initial prefill/);
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).not.toContain("\x1b");
    expect(cli(c4Ring16(10, { steps: 2500, quiet: true })).stderr).toBe("");
  });
});
