// `dsv4-kv plan` end to end: a spawned process, JSON in and out, exit codes.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CUDA_GRAPH_TAIL_OPTIONS } from "@dsv4-kv/planner/testing";
import { describe, expect, test } from "vitest";
import { cli } from "./cli-helpers.js";

const ex1 = { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };

describe("dsv4-kv plan", () => {
  test("one case from stdin: rows and exact bytes (planner §9.1)", () => {
    const r = cli(["plan"], JSON.stringify(ex1));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.planC).toEqual([{ seqLen: 516, raggedId: 3, bufferLen: 4, readPage0: 7, readPage1: 8 }]);
    expect(out.planW).toHaveLength(6);
    expect(out.planW[3]).toEqual({ raggedId: 3, writeLoc: 35 });
    expect(out.planD).toEqual([]);
    expect(out.bytes.planC).toBe("04020000030004000700000008000000");
    expect(out.bytes.planW.slice(48, 64)).toBe("0300000023000000");
  });

  test("an array from --input gives an array out, in order, with padding rows and every kind", () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-kv-plan-"));
    const file = join(dir, "cases.json");
    writeFileSync(
      file,
      JSON.stringify([
        { kind: "prefill", ...CUDA_GRAPH_TAIL_OPTIONS },
        { kind: "decode", compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [640] },
        { kind: "prefill-legacy", compressRatio: 4, seqLens: [12], extendLens: [12], reqPoolIndices: [3] },
        { kind: "decode-legacy", compressRatio: 128, seqLens: [640], reqPoolIndices: [2] },
        { ...ex1, useReqRing: true, reqToToken: { identity: { tokensPerReq: 1024 } } },
        { ...ex1, reqToToken: [Array.from({ length: 600 }, (_, p) => p)], fullToState: "identity" },
      ]),
    );
    const r = cli(["plan", "--input", file]);
    expect(r.code).toBe(0);
    const [bucket, decode, legacy, legacyDecode, reqRing, explicit] = JSON.parse(r.stdout);
    expect(bucket.planW).toEqual([
      { raggedId: 0, writeLoc: 0 },
      { raggedId: 1, writeLoc: 65 },
      { raggedId: 2, writeLoc: 66 },
      { invalid: true },
    ]);
    expect(bucket.planC).toEqual([{ invalid: true }, { invalid: true }, { invalid: true }, { invalid: true }]);
    expect(bucket.bytes.planW.slice(-16)).toBe("ffffffffffffffff");
    expect(decode.planD).toEqual([{ seqLen: 640, writeLoc: 127, readPage0: 1, readPage1: 0 }]);
    expect(legacy.planC.map((c: { readPage0: number; readPage1: number }) => [c.readPage0, c.readPage1])).toEqual([
      [6, 6],
      [6, 7],
      [7, 6],
    ]);
    expect(legacyDecode.planD[0]).toEqual({ seqLen: 640, writeLoc: 383, readPage0: 2, readPage1: 2 });
    expect(reqRing.planC[0]).toEqual({ seqLen: 516, raggedId: 3, bufferLen: 4, readPage0: 3, readPage1: 0 });
    expect(explicit.bytes).toEqual(JSON.parse(cli(["plan"], JSON.stringify(ex1)).stdout).bytes);
  });

  test("a bad case prints {error} in its place and exits 2; the others are still planned", () => {
    const r = cli(["plan"], JSON.stringify([ex1, { ...ex1, extendLens: [0] }, { ...ex1, kind: "nope" }]));
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout);
    expect(out[0].planC).toHaveLength(1);
    expect(out[1].error).toMatchObject({ code: "EXTEND_LEN" });
    expect(out[1].error.message).toMatch(/extendLens\[0\] = 0: must be > 0/);
    expect(out[2].error.code).toBe("INVALID_CASE");
    expect(r.stderr).toMatch(/EXTEND_LEN/);
  });

  test("input that is not JSON exits 2 with an INPUT error object and the parser's position", () => {
    const r = cli(["plan"], "{not json");
    expect(r.code).toBe(2);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: "INPUT", field: "stdin" });
    expect(error.message).toMatch(/is not JSON: .*position 1/);
    expect(r.stderr).toMatch(/^dsv4-kv plan: INPUT: stdin: is not JSON/);
  });

  test("--path gpu: the CUDA planner's bytes equal the CPU planner's, or exit 2 with the reason and fixes", () => {
    const cases = JSON.stringify([
      ex1,
      { kind: "decode", compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [640, 641] },
    ]);
    const cpu = cli(["plan"], cases);
    const gpu = cli(["plan", "--path", "gpu"], cases);
    if (gpu.code === 0) {
      expect(JSON.parse(gpu.stdout)).toEqual(JSON.parse(cpu.stdout));
    } else {
      expect(gpu.code).toBe(2);
      const err = JSON.parse(gpu.stdout).error;
      expect(err.code).toMatch(/GPU_UNAVAILABLE$/);
      expect(err.message).toMatch(/Possible causes and solutions/);
    }
    expect(cli(["plan", "--path", "tpu"], cases).code).toBe(2);
  });

  test("--help, --version, unknown flags and unknown commands", () => {
    const h = cli(["plan", "--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/Usage: dsv4-kv plan/);
    expect(cli(["--version"]).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(cli(["--help"]).stdout).toMatch(/simulate residency/);
    const bad = cli(["plan", "--bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bogus/);
    expect(cli(["frobnicate"]).code).toBe(2);
  });
});
