// `dsv4-kv simulate residency --html FILE` end to end: the page's payload, unchanged terminal output and exit
// codes, the replay of a counterexample, and an unwritable path refused naming --html (InputError, exit 2).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { InputError } from "../src/commands/args.js";
import { run } from "../src/commands/simulate-residency.js";
import type { ResidencyPayload } from "../src/report-html/residency-payload.js";
import { cli } from "./cli-helpers.js";
import { c4Ring16 } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4kv-residency-html-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function payloadOf(path: string): ResidencyPayload {
  const html = readFileSync(path, "utf8");
  const m = /<script type="application\/json" id="dsv4kv-data">(.*?)<\/script>/s.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(m![1]!) as ResidencyPayload;
}

describe("dsv4-kv simulate residency --html", () => {
  test("D 11: exit 1, the same terminal report, and a page whose verdict is the terminal's", () => {
    const page = join(dir, "d11.html");
    const plain = cli(c4Ring16(11));
    const r = cli(c4Ring16(11, { html: page }));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(plain.stdout);
    const payload = payloadOf(page);
    expect(payload.kind).toBe("residency");
    expect(payload.command).toBe(
      `dsv4-kv simulate residency --ratio 4 --ring 16 --swa-page 256 --draft-tokens 11 --html ${page}`,
    );
    expect([...payload.verdict.lines, payload.verdict.result].join("\n")).toBe(plain.stdout.trimEnd());
    expect(payload.verdict.clean).toBe(false);
    const [ring] = payload.rings;
    expect(ring!.inputs).toMatchObject({
      compressRatio: 4,
      ringSize: 16,
      swaPageSize: 256,
      draftTokens: 11,
      writePad: 10,
    });
    expect(ring!.fault).toMatchObject({ slot: 24, position: 344, step: 5 });
    expect(ring!.batches.at(-1)!.step).toBe(5);
  });

  test("D 10: exit 0 and a page that says clean, with the run's last batches", () => {
    const page = join(dir, "d10.html");
    const r = cli(c4Ring16(10, { html: page, json: true }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).violations).toBe(0);
    const payload = payloadOf(page);
    expect(payload.verdict.result).toBe("result: clean");
    expect(payload.rings[0]!.fault).toBeNull();
    expect(payload.rings[0]!.batches.at(-1)!.step).toBe(301);
  });

  test("no ring flags: one section per default ring", () => {
    const page = join(dir, "defaults.html");
    expect(cli(["simulate", "residency", "--steps", "50", "--html", page]).code).toBe(0);
    expect(payloadOf(page).rings.map((x) => x.inputs.ringSize)).toEqual([16, 256]);
  });

  test("--replay FILE --html: the counterexample's batches, replayed", () => {
    const proof = join(dir, "proof.json");
    writeFileSync(
      proof,
      JSON.stringify({
        proved: false,
        ring: { compressRatio: 4, ringSize: 16, swaPageSize: 256, useReqRing: false },
        writePad: 10,
        counterexample: {
          batches: [
            { kind: "prefill", tokens: 518 },
            { kind: "verify", draftTokens: 11, accept: 1 },
            { kind: "prefill", tokens: 1 },
          ],
        },
      }),
    );
    const page = join(dir, "replay.html");
    const r = cli(["simulate", "residency", "--replay", proof, "--html", page]);
    expect(r.code).toBe(1);
    const ring = payloadOf(page).rings[0]!;
    expect(ring.inputs).toMatchObject({ padSource: "replay", replayFile: proof, draftTokens: null });
    expect(ring.fault).toMatchObject({ kind: "stale-read", slot: 32, position: 512 });
    expect(ring.fault!.clobberedBy).toMatchObject({ step: 2, position: 528, rejectedDraft: true });
  });

  test("an unwritable --html path: exit 2, a typed error naming --html, nothing on stdout", () => {
    const r = cli(c4Ring16(10, { steps: 10, html: join(dir, "no-such-folder", "page.html"), json: true }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^dsv4-kv simulate residency: --html = ".*page\.html": cannot be written \(ENOENT\)/);
  });

  test("a folder as --html: exit 2 (EISDIR) before the run", () => {
    const r = cli(c4Ring16(10, { html: dir }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('--html = "');
    expect(r.stderr).toContain("cannot be written (EISDIR)");
  });

  test("the refusal is an InputError whose field is --html", async () => {
    const out: string[] = [];
    const stream = { write: (chunk: string) => out.push(chunk) > 0, isTTY: false };
    const io = { stdout: stream, stderr: stream, stdin: process.stdin, env: {} };
    const error = await run(["--steps", "5", "--html", join(dir, "missing", "p.html")], io).catch((e: unknown) => e);
    expect(InputError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "INPUT", field: "--html", value: join(dir, "missing", "p.html") });
    expect(out).toEqual([]);
  });
});
