/**
 * Backend-generic refusal checks (strict inputs): every bad input of a backend call is refused with an
 * OnlineMtpError naming field, value and rule, before anything is launched or copied. Registered for the CPU
 * backend and, on a CUDA machine, for the GPU backend.
 */
import { expect } from "vitest";
import { KV_SCORE_COLS, OnlineMtpError, type OnlineMtpBackend } from "../src/index.js";
import { H, changedRows, setup, snapshot, writePrefixParams } from "./helpers.js";

/** The refusal `fn` throws (fails the test when it throws something else or nothing). */
export function refusal(fn: () => unknown): OnlineMtpError {
  try {
    fn();
  } catch (e) {
    if (OnlineMtpError.isInstance(e)) return e as OnlineMtpError;
    throw e;
  }
  throw new Error("expected an OnlineMtpError, nothing was thrown");
}

/** `fn` is refused with `code` on `field` (and, when given, echoes `value`); the message carries the rule. */
export function expectRefused(fn: () => unknown, code: string, field: string, value?: unknown): OnlineMtpError {
  const e = refusal(fn);
  expect({ code: e.code, field: e.field }).toEqual({ code, field });
  if (value !== undefined) expect(e.value).toEqual(value);
  expect(e.rule.length).toBeGreaterThan(5);
  expect(e.message).toContain(e.rule);
  return e;
}

export type Refusal = (be: OnlineMtpBackend) => void;

export const BACKEND_REFUSALS: Record<string, Refusal> = {
  "index uploads: wrong dtypes, plain arrays, int32 overflow (never wrapped), negative lengths": (be) => {
    expectRefused(() => be.uploadIndex(Float32Array.of(1) as never), "DTYPE", "values");
    expectRefused(() => be.uploadIndex([1, 2] as never), "DTYPE", "values");
    expectRefused(() => be.allocIndex(4, 2 ** 32 + 5), "INVALID_ARGUMENT", "value", 2 ** 32 + 5);
    expectRefused(() => be.allocIndex(4, Number.NaN), "INVALID_ARGUMENT", "value");
    expectRefused(() => be.allocIndex(-1, 0), "SHAPE", "length", -1);
    expectRefused(() => be.allocIndex("4" as never, 0), "INVALID_TYPE", "length", "4");
    const v = be.allocIndex(2, 0);
    expectRefused(() => be.writeIndex(v, Int32Array.of(1, 2, 3)), "SHAPE", "values.length", 3);
    expectRefused(() => be.writeIndex(v, [1] as never), "DTYPE", "values");
  },

  "matrix uploads: non-finite values, strings for sizes, wrong lengths": (be) => {
    const bad = new Float32Array(2 * KV_SCORE_COLS);
    bad[7] = Number.POSITIVE_INFINITY;
    expectRefused(() => be.uploadMatrix(bad, 2, KV_SCORE_COLS), "INVALID_ARGUMENT", "values[7]");
    bad[7] = Number.NaN;
    expectRefused(() => be.uploadMatrix(bad, 2, KV_SCORE_COLS), "INVALID_ARGUMENT", "values[7]");
    expectRefused(() => be.uploadMatrix(new Float32Array(4), "2" as never, 2), "INVALID_TYPE", "rows", "2");
    expectRefused(() => be.uploadMatrix(new Float32Array(4), 2, 3), "SHAPE", "values.length", 4);
    expectRefused(() => be.uploadMatrix(new Float64Array(4) as never, 2, 2), "DTYPE", "values");
    expectRefused(() => be.allocMatrix(-2, H), "SHAPE", "rows", -2);
    expectRefused(() => be.allocMatrix(2, 1.5), "SHAPE", "cols", 1.5);
  },

  "state buffers: unknown dtype (with a suggestion), row ranges, partial rows": (be) => {
    const e = expectRefused(() => be.allocState(4, "bf61" as never), "DTYPE", "dtype", "bf61");
    expect(e.params.suggestion).toBe("bf16");
    expectRefused(() => be.allocState(-1, "fp32"), "STATE_ROWS", "rows", -1);
    const s = be.allocState(4, "fp32");
    expectRefused(() => be.readStateRows(s, 0, -1), "STATE_ROWS", "count", -1);
    expectRefused(() => be.readStateRows(s, 1.5, 1), "STATE_ROWS", "firstRow", 1.5);
    expectRefused(() => be.readStateBits(s, 3, 2), "STATE_ROWS", "rows", [3, 2]);
    expectRefused(() => be.writeStateRows(s, 0, new Float32Array(100)), "SHAPE", "values.length", 100);
    expectRefused(() => be.readStateRows(be.allocIndex(4, 0) as never, 0, 1), "INVALID_TYPE", "s", "index");
  },

  "kernel parameters: unknown keys, booleans as strings, handles of the wrong kind or from elsewhere": (be) => {
    const s = setup(be, { N: 4, Dmax: 4, D: 4, seed: 31 });
    const prefix = writePrefixParams(s);
    const { kvScore: kv, seqLens: idx } = prefix;
    const before = snapshot(be, s.ctrl);
    const e = expectRefused(() => be.writePrefix({ ...prefix, batchsize: 2 } as never), "UNKNOWN_KEY", "batchsize");
    expect(e.params.suggestion).toBe("batchSize");
    expectRefused(() => be.writePrefix({ ...prefix, kvScore: idx as never }), "INVALID_TYPE", "kvScore", "index");
    expectRefused(() => be.writePrefix({ ...prefix, batchSize: -1 }), "BATCH_SIZE", "batchSize", -1);
    expectRefused(
      () => be.writePrefix({ ...prefix, numVerifyTokens: "4" as never }),
      "INVALID_TYPE",
      "numVerifyTokens",
    );
    const forged = { kind: "index", length: 2 } as const;
    expectRefused(() => be.writePrefix({ ...prefix, seqLens: forged }), "BACKEND", "seqLens");
    const mark = {
      seqLens: idx,
      reqPoolIndices: idx,
      pendingSeqLens: s.ctrl.pendingSeqLens,
      pendingWidths: s.ctrl.pendingWidths,
      batchSize: 2,
      numVerifyTokens: 4,
      numReqSlots: 4,
    };
    expectRefused(() => be.markPending({ ...mark, clearAll: "false" as never }), "INVALID_TYPE", "clearAll", "false");
    const commit = {
      curSeqLens: idx,
      reqPoolIndices: idx,
      pendingSeqLens: s.ctrl.pendingSeqLens,
      pendingWidths: s.ctrl.pendingWidths,
      state: s.ctrl.layers[0]!,
      batchSize: 2,
      maxDraftTokens: 4,
      clampWidth: null,
      bankStrideRows: s.ctrl.bankStrideRows,
      numReqSlots: 4,
      consume: true,
    };
    expectRefused(() => be.commitPending({ ...commit, consume: 1 as never }), "INVALID_TYPE", "consume", 1);
    expectRefused(
      () => be.commitPending({ ...commit, mark: { seqLens: idx, width: 0 } }),
      "DRAFT_TOKENS",
      "mark.width",
      0,
    );
    expectRefused(() => be.commitPending({ ...commit, clampWidth: 9 }), "DRAFT_TOKENS", "clampWidth", 9);
    const reset = {
      state: s.ctrl.layers[0]!,
      slots: idx,
      count: 2,
      bankStrideRows: s.ctrl.bankStrideRows,
      maxDraftTokens: 4,
      numReqSlots: 4,
    };
    expectRefused(() => be.resetSlots(reset as never), "INVALID_TYPE", "pending");
    const out = be.allocMatrix(1, H);
    const prefill = { state: s.ctrl.layers[0]!, kvScore: kv, ape: s.ape, segments: idx, numSegments: 1, out };
    expectRefused(() => be.onlinePrefill({ ...prefill, numSegments: 0.5 }), "BATCH_SIZE", "numSegments", 0.5);
    expectRefused(() => be.onlinePrefill(prefill), "SHAPE", "segments.length", 2);
    const decode = { state: s.ctrl.layers[0]!, kvScore: kv, ape: s.ape, seqLens: idx, reqPoolIndices: idx, out };
    const decodeParams = { ...decode, batchSize: 1, slotOffsetRows: -4, numReqSlots: 4 };
    expectRefused(() => be.onlineDecode(decodeParams), "BANK_STRIDE", "slotOffsetRows", -4);
    be.synchronize();
    expect(changedRows(before, snapshot(be, s.ctrl))).toEqual([]); // nothing ran
  },
};
