// Every validation rule as a property: take any valid batch, break exactly one precondition, and the planner
// refuses with that rule's code and the field that broke it (never a plan, never a crash).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { PlannerError, planPrefill, type PrefillPlanOptions } from "../src/index.js";
import { testSeed } from "../src/testing.js";
import { thrown } from "./helpers.js";

const SEED = testSeed(20260311);

const validArb = fc
  .record({
    c128: fc.boolean(),
    reqRing: fc.boolean(),
    device: fc.boolean(),
    reqs: fc.array(fc.record({ prefix: fc.integer({ min: 0, max: 1000 }), extend: fc.integer({ min: 1, max: 64 }) }), {
      minLength: 2,
      maxLength: 12,
    }),
  })
  .map(({ c128, reqRing, device, reqs }) => {
    const o: PrefillPlanOptions = {
      compressRatio: c128 ? 128 : 4,
      ringSize: c128 ? 256 : 16,
      swaPageSize: 256,
      useReqRing: !c128 && reqRing,
      seqLens: reqs.map((r) => r.prefix + r.extend),
      extendLens: reqs.map((r) => r.extend),
      path: device ? "device" : "host",
    };
    return o;
  });

type Mutation = (o: PrefillPlanOptions, k: number) => { options: PrefillPlanOptions; code: string; field: RegExp };

const mutations: Record<string, Mutation> = {
  ratio: (o, k) => ({
    options: { ...o, compressRatio: [2, 8, 64, 0][k % 4]! },
    code: "INVALID_RATIO",
    field: /^compressRatio$/,
  }),
  reqRingC128: (o) => ({
    options: { ...o, compressRatio: 128, ringSize: 256, useReqRing: true },
    code: "REQ_RING_NEEDS_C4",
    field: /^useReqRing$/,
  }),
  ringNotMultiple: (o) => ({
    options: { ...o, ringSize: o.ringSize + 1, swaPageSize: (o.ringSize + 1) * 4 },
    code: "INVALID_RING",
    field: /^ringSize$/,
  }),
  spsNotMultiple: (o) => ({
    options: { ...o, swaPageSize: o.ringSize * 3 + o.compressRatio },
    code: "INVALID_RING",
    field: /^swaPageSize$/,
  }),
  extendAboveSeq: (o, k) => {
    const ext = [...(o.extendLens as number[])];
    const seq = o.seqLens as number[];
    const b = k % ext.length;
    ext[b] = seq[b]! + 1;
    return {
      options: { ...o, extendLens: ext, numQTokens: ext.reduce((a, x) => a + x, 0) },
      code: "EXTEND_LEN",
      field: new RegExp(`^extendLens\\[${b}\\]$`),
    };
  },
  negativeExtend: (o, k) => {
    const ext = [...(o.extendLens as number[])];
    const b = k % ext.length;
    ext[b] = o.path === "device" ? -1 - (k % 3) : -(k % 3); // host refuses 0 too
    return {
      options: { ...o, extendLens: ext, numQTokens: 65535 },
      code: "EXTEND_LEN",
      field: new RegExp(`^extendLens\\[${b}\\]$`),
    };
  },
  sumMismatch: (o, k) => {
    const ext = [...(o.extendLens as number[])];
    const seq = [...(o.seqLens as number[])];
    const sum = ext.reduce((a, x) => a + x, 0);
    if (o.path !== "device") {
      return { options: { ...o, numQTokens: sum + 1 + (k % 3) }, code: "EXTEND_SUM", field: /^numQTokens$/ };
    }
    // Device path: only a sum above numQTokens is wrong. Lowering numQTokens could meet batch size first (all
    // extends 1), so grow one request's extend (and its seqLen with it) past a numQTokens of the old sum.
    const b = k % ext.length;
    ext[b] = ext[b]! + 1 + (k % 3);
    seq[b] = seq[b]! + 1 + (k % 3);
    return {
      options: { ...o, seqLens: seq, extendLens: ext, numQTokens: sum },
      code: "EXTEND_SUM",
      field: /^numQTokens$/,
    };
  },
  numQTooLarge: (o) => ({ options: { ...o, numQTokens: 65536 }, code: "NUM_Q_TOKENS", field: /^numQTokens$/ }),
  batchAboveNumQ: (o) => ({
    options: { ...o, path: "device", numQTokens: (o.seqLens as number[]).length - 1 },
    code: "NUM_Q_TOKENS",
    field: /^numQTokens$/,
  }),
  nonInteger: (o, k) => {
    const seq = [...(o.seqLens as number[])];
    seq[k % seq.length] = seq[k % seq.length]! + 0.5;
    return { options: { ...o, seqLens: seq }, code: "INVALID_ARGUMENT", field: /^seqLens\[\d+\]$/ };
  },
  ridOutOfRange: (o) => ({
    options: {
      ...o,
      compressRatio: 4,
      ringSize: 16,
      useReqRing: false,
      reqPoolIndices: (o.seqLens as number[]).map((_, i) => i + 100),
      reqToToken: { data: new Int32Array(2 * 4096), stride: 4096 },
    },
    code: "INDEX_OUT_OF_RANGE",
    field: /^reqPoolIndices$/,
  }),
};

describe("every validation rule refuses one broken precondition (property)", () => {
  test.each(Object.keys(mutations))("%s", (name) => {
    fc.assert(
      fc.property(validArb, fc.nat(), (o, k) => {
        expect(() => planPrefill(o)).not.toThrow();
        const { options, code, field } = mutations[name]!(o, k);
        const caught = thrown(() => planPrefill(options));
        expect(caught).toBeInstanceOf(PlannerError);
        const e = caught as PlannerError;
        expect(e.code).toBe(code);
        expect(e.field).toMatch(field);
        expect(e.message.startsWith(`${e.field} = `)).toBe(true);
      }),
      // Fixed seed (DSV4KV_TEST_SEED overrides); fast-check prints the seed and counterexample on failure.
      { numRuns: 150, seed: SEED },
    );
  });
});
