/** Strict inputs: one test per refusal class of the controller, the helpers and the simulation. */
import { describe, expect, test } from "vitest";
import {
  CpuBackend,
  KV_SCORE_COLS,
  OnlineMtpController,
  type OnlineMtpControllerOptions,
  logicalForwardMode,
  runSimulation,
  targetVerifyBatchSize,
} from "../src/index.js";
import {
  bankRow,
  chunkPos,
  clearedRow,
  compareRows,
  foldRow,
  fromBf16Bits,
  mergeRows,
  segmentStats,
  updateRow,
} from "../src/testing.js";
import { toBf16Bits } from "../src/internal.js";
import { H, setup } from "./helpers.js";
import { BACKEND_REFUSALS, expectRefused } from "./refusals.js";

const be = new CpuBackend();
const base: OnlineMtpControllerOptions = {
  backend: be,
  numReqSlots: 4,
  maxDraftTokens: 4,
  numDraftTokens: 4,
  numLayers: 2,
};
const make = (o: Record<string, unknown> = {}) => new OnlineMtpController({ ...base, ...o } as never);
const rpi = () => be.uploadIndex(Int32Array.of(1, 2));
const seq = () => be.uploadIndex(Int32Array.of(10, 20));

describe("CPU backend refusals", () => {
  for (const [name, fn] of Object.entries(BACKEND_REFUSALS)) test(name, () => fn(new CpuBackend()));
});

describe("controller refusals", () => {
  test("options: unknown keys (with a suggestion), strings for numbers, a backend without its methods", () => {
    const e = expectRefused(() => make({ numReqSlot: 4 }), "UNKNOWN_KEY", "options.numReqSlot");
    expect(e.params.suggestion).toBe("numReqSlots");
    expectRefused(() => make({ numReqSlots: "4" }), "INVALID_TYPE", "numReqSlots", "4");
    expectRefused(() => make({ numLayers: Number.NaN }), "INVALID_ARGUMENT", "numLayers");
    expectRefused(() => make({ backend: {} }), "INVALID_TYPE", "backend.uploadIndex");
    expectRefused(() => make({ stateDtype: "fp16" }), "DTYPE", "stateDtype", "fp16");
  });

  test("flags: a string is not a boolean; unknown flags are refused", () => {
    // "false" is truthy: without the check the controller ran enabled
    expectRefused(() => make({ flags: { mtpEnabled: "false" } }), "INVALID_TYPE", "flags.mtpEnabled", "false");
    const e = expectRefused(() => make({ flags: { onlineCompres: true } }), "UNKNOWN_KEY", "flags.onlineCompres");
    expect(e.params.suggestion).toBe("onlineCompress");
  });

  test("prepareForward: an unknown forward mode is refused (it used to commit as if it were an extend)", () => {
    const c = make();
    const e = expectRefused(() => c.prepareForward("target-verify" as never, rpi(), seq()), "INVALID_ARGUMENT", "mode");
    expect(e.params.suggestion).toBe("target_verify");
    expect(c.counters.commitLaunches).toBe(0);
    expectRefused(
      () => c.writePrefixStates(0, be.allocMatrix(4, KV_SCORE_COLS), be.allocMatrix(128, H), "verify" as never),
      "INVALID_ARGUMENT",
      "mode",
    );
  });

  test("prepareForward: vectors of different lengths, non-handles, verifyBs out of range or not an integer", () => {
    const c = make();
    const three = be.uploadIndex(Int32Array.of(10, 20, 30));
    expectRefused(() => c.prepareForward("decode", rpi(), three), "SHAPE", "seqLens.length", 3);
    expectRefused(() => c.prepareForward("decode", Int32Array.of(1) as never, seq()), "INVALID_TYPE", "reqPoolIndices");
    expectRefused(() => c.prepareForward("target_verify", rpi(), seq(), -1), "BATCH_SIZE", "verifyBs", -1);
    expectRefused(() => c.prepareForward("target_verify", rpi(), seq(), 1.5), "BATCH_SIZE", "verifyBs", 1.5);
    expectRefused(() => c.prepareForward("target_verify", rpi(), seq(), "2" as never), "INVALID_TYPE", "verifyBs");
    expect(c.counters.commitLaunches).toBe(0);
  });

  test("commitPending / markPending / beginVerify: negative or non-integer batch sizes (once silently skipped)", () => {
    const c = make();
    expectRefused(() => c.commitPending(rpi(), seq(), -1), "BATCH_SIZE", "batchSize", -1);
    expectRefused(() => c.commitPending(rpi(), seq(), 2.5), "BATCH_SIZE", "batchSize", 2.5);
    expectRefused(() => c.commitPending(rpi(), seq(), 3), "BATCH_SIZE", "batchSize", 3);
    expectRefused(
      () => c.commitPending(rpi(), seq(), 2, { seqLens: seq(), width: 5 }),
      "DRAFT_TOKENS",
      "mark.width",
      5,
    );
    expectRefused(() => c.markPending(seq(), rpi(), -2), "BATCH_SIZE", "batchSize", -2);
    expectRefused(() => c.beginVerify(rpi(), seq(), 3), "BATCH_SIZE", "batchSize", 3);
    expect(c.verifyContext).toBeNull();
    expect(c.counters).toMatchObject({ commitLaunches: 0, markLaunches: 0, verifies: 0 });
  });

  test("flushFinishing: slots out of range, repeated, negative lengths — refused even when the feature is off", () => {
    const off = make({ flags: { mtpEnabled: false } });
    // the disabled controller used to return before looking at its inputs
    expectRefused(() => off.flushFinishing([9], [3]), "REQ_INDEX", "reqSlots[0]", 9);
    const c = make();
    expectRefused(() => c.flushFinishing([1, 1], [3, 4]), "DUPLICATE_REQ", "reqSlots[1]", 1);
    expectRefused(() => c.flushFinishing([1], [-3]), "INVALID_ARGUMENT", "finalSeqLens[0]", -3);
    expectRefused(() => c.flushFinishing([1], [2 ** 31]), "INVALID_ARGUMENT", "finalSeqLens[0]", 2 ** 31);
    expectRefused(() => c.flushFinishing([1, 2], [3]), "SHAPE", "finalSeqLens.length", 1);
    expectRefused(() => c.flushFinishing("12" as never, [1, 2]), "INVALID_TYPE", "reqSlots", "12");
    expect(c.counters.flushes).toBe(0);
  });

  test("onRequestSlotsAssigned: repeated slots, strings and fractions for slots", () => {
    const c = make();
    expectRefused(() => c.onRequestSlotsAssigned([2, 3, 2]), "DUPLICATE_REQ", "reqSlots[2]", 2);
    expectRefused(() => c.onRequestSlotsAssigned(["1"] as never), "INVALID_TYPE", "reqSlots[0]", "1");
    expectRefused(() => c.onRequestSlotsAssigned([1.5]), "REQ_INDEX", "reqSlots[0]", 1.5);
    expect(c.counters.resets).toBe(0);
  });

  test("writePrefixStates: handles of the wrong kind", () => {
    const c = make();
    expectRefused(
      () => c.writePrefixStates(0, rpi() as never, be.allocMatrix(128, H), "target_verify"),
      "INVALID_TYPE",
      "kvScoreInput",
      "index",
    );
  });
});

describe("forward-mode helper refusals", () => {
  test("unknown modes (with a suggestion) and unknown keys", () => {
    const e = expectRefused(
      () => logicalForwardMode({ forwardMode: "decod" as never }),
      "INVALID_ARGUMENT",
      "batch.forwardMode",
    );
    expect(e.params.suggestion).toBe("decode");
    expectRefused(
      () => logicalForwardMode({ forwardMode: "decode", originalForwardMode: "x" as never }),
      "INVALID_ARGUMENT",
      "batch.originalForwardMode",
    );
    expectRefused(
      () => logicalForwardMode({ forwardMode: "decode", mode: "idle" } as never),
      "UNKNOWN_KEY",
      "batch.mode",
    );
  });

  test("negative, fractional and string counts", () => {
    const ok = { draftTokenCount: 8, draftTokenNum: 4, batchSize: 2 };
    expect(targetVerifyBatchSize(ok)).toBe(2);
    expectRefused(() => targetVerifyBatchSize({ ...ok, draftTokenNum: -4 }), "DRAFT_TOKENS", "batch.draftTokenNum", -4);
    expectRefused(
      () => targetVerifyBatchSize({ ...ok, draftTokenCount: 7.5 }),
      "INVALID_ARGUMENT",
      "batch.draftTokenCount",
      7.5,
    );
    expectRefused(() => targetVerifyBatchSize({ ...ok, batchSize: "2" as never }), "INVALID_TYPE", "batch.batchSize");
    expectRefused(
      () => targetVerifyBatchSize({ ...ok, actualForwardMode: "idel" as never }),
      "INVALID_ARGUMENT",
      "batch.actualForwardMode",
    );
  });
});

describe("math helper refusals", () => {
  const token = { kvScore: new Float32Array(2 * H).fill(0.5), ape: new Float32Array(H) };

  test("positions outside the chunk, unknown precision, rows of the wrong length", () => {
    expectRefused(() => updateRow(clearedRow(H), token, 128, "f64"), "INVALID_ARGUMENT", "pos", 128);
    expectRefused(() => updateRow(clearedRow(H), token, -1, "f64"), "INVALID_ARGUMENT", "pos", -1);
    expectRefused(() => updateRow(clearedRow(H), token, 3, "f16" as never), "INVALID_ARGUMENT", "precision", "f16");
    expectRefused(() => updateRow(new Float64Array(4), token, 3, "f64"), "SHAPE", "row");
    expectRefused(() => foldRow(null, [token, token], 127, "f64", H), "INVALID_ARGUMENT", "tokens.length", 2);
    expectRefused(() => foldRow(new Float64Array(3), [token], 0, "f64", H), "SHAPE", "start.length", 3);
    expectRefused(() => clearedRow(0), "SHAPE", "headDim", 0);
    expectRefused(() => chunkPos(-1), "INVALID_ARGUMENT", "p", -1);
    expectRefused(() => bankRow(6, 0, 6), "REQ_INDEX", "r", 6);
    expectRefused(() => bankRow(1, 9, 6), "DRAFT_TOKENS", "b", 9);
  });

  test("non-finite token values, empty segments, short token rows", () => {
    const nan = { kvScore: Float32Array.from(token.kvScore), ape: token.ape };
    nan.kvScore[H + 3] = Number.NaN;
    expectRefused(() => updateRow(clearedRow(H), nan, 3, "f32"), "INVALID_ARGUMENT", `token.kvScore[${H + 3}]`);
    expectRefused(() => segmentStats([], "f64", H), "SHAPE", "tokens.length", 0);
    expectRefused(
      () => segmentStats([{ kvScore: new Float32Array(H), ape: token.ape }], "f64", H),
      "SHAPE",
      "tokens[0].kvScore.length",
      H,
    );
  });

  test("comparisons: mismatched lengths and bad tolerances", () => {
    expectRefused(() => compareRows([1, 2], [1, 2, 3], { atol: 0, rtol: 0 }), "SHAPE", "actual.length", 2);
    expectRefused(() => compareRows([1], [1], { atol: -1, rtol: 0 }), "INVALID_ARGUMENT", "tol.atol", -1);
    expectRefused(() => compareRows([1], [1], { atol: Number.NaN, rtol: 0 }), "INVALID_ARGUMENT", "tol.atol");
    expectRefused(() => mergeRows(clearedRow(H), clearedRow(4), "f64"), "SHAPE", "b.length", 12);
  });

  test("bf16 bits outside 16 bits are refused, not wrapped; strings are not numbers", () => {
    expect(fromBf16Bits(0x3f80)).toBe(1);
    expectRefused(() => fromBf16Bits(0x13f80), "INVALID_ARGUMENT", "b", 0x13f80); // used to read as 0x3f80 = 1
    expectRefused(() => fromBf16Bits(-1), "INVALID_ARGUMENT", "b", -1);
    expectRefused(() => toBf16Bits("1" as never), "INVALID_TYPE", "x", "1");
  });
});

describe("simulation option refusals", () => {
  const sim = { backend: new CpuBackend(), requests: 2, steps: 1, draftTokens: 2 };
  test("unknown keys, booleans as strings, misspelt lifecycle, bad seeds and probabilities", () => {
    expect(runSimulation(sim).lostCommits).toBe(0);
    expectRefused(() => runSimulation({ ...sim, draftToken: 2 } as never), "UNKNOWN_KEY", "options.draftToken");
    expectRefused(() => runSimulation({ ...sim, adaptive: "false" as never }), "INVALID_TYPE", "adaptive", "false");
    // a misspelt lifecycle used to run the hardened controller
    const e = expectRefused(
      () => runSimulation({ ...sim, lifecycle: "upstrem" as never }),
      "INVALID_ARGUMENT",
      "lifecycle",
    );
    expect(e.params.suggestion).toBe("upstream");
    expectRefused(() => runSimulation({ ...sim, seed: -1 }), "INVALID_ARGUMENT", "seed", -1);
    expectRefused(
      () => runSimulation({ ...sim, extendProbability: Number.NaN }),
      "INVALID_ARGUMENT",
      "extendProbability",
    );
    expectRefused(() => runSimulation({ ...sim, finishProbability: 2 }), "INVALID_ARGUMENT", "finishProbability", 2);
    expectRefused(() => runSimulation({ ...sim, stateDtype: "bf32" as never }), "DTYPE", "stateDtype", "bf32");
    expectRefused(() => runSimulation({ ...sim, steps: "1" as never }), "INVALID_TYPE", "steps", "1");
  });
});

describe("writePrefixStates needs a row per draft token of every request", () => {
  test("fewer rows than batch × D are refused (upstream clamps the batch and leaves requests without states)", () => {
    const s = setup(new CpuBackend(), { N: 4, Dmax: 4, D: 4 });
    s.ctrl.prepareForward(
      "target_verify",
      s.be.uploadIndex(Int32Array.of(1, 2)),
      s.be.uploadIndex(Int32Array.of(9, 9)),
    );
    const short = s.be.uploadMatrix(new Float32Array(7 * KV_SCORE_COLS), 7, KV_SCORE_COLS);
    expectRefused(() => s.ctrl.writePrefixStates(0, short, s.ape, "target_verify"), "SHAPE", "kvScoreInput.rows", 7);
    // Padding rows past batch × D stay legal (CUDA-graph buckets).
    const padded = s.be.uploadMatrix(new Float32Array(12 * KV_SCORE_COLS), 12, KV_SCORE_COLS);
    expect(() => s.ctrl.writePrefixStates(0, padded, s.ape, "target_verify")).not.toThrow();
  });
});
