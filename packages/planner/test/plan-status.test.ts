/**
 * Every status code of the GPU planner maps to the error the CPU planner raises for an input that triggers it (the
 * record holds what the kernel writes for that input: native/planner/plan_kernels.cuh, PlanErr). CPU-side only.
 */
import { describe, expect, test } from "vitest";
import { planDecode, planPrefill, planPrefillLegacy, type PlannerError } from "../src/index.js";
import { plannerErrorOf, type StatusGeometry } from "../src/gpu.js";
import { PLAN_ERR_RULE_NAMES } from "../src/gpu/internal.js";
import { PLAN_ERR, type PlanStatus } from "@dsv4-kv/kernels-cuda/internal";

const c4 = { compressRatio: 4, ringSize: 16, swaPageSize: 256 } as const;
const c128 = { compressRatio: 128, ringSize: 256, swaPageSize: 256 } as const;
const INT32_MAX = 2 ** 31 - 1;

interface Case {
  code: number;
  record: Partial<PlanStatus>;
  geometry?: Partial<StatusGeometry>;
  cpu: () => unknown;
}

const CASES: Record<string, Case> = {
  "negative S": {
    code: 1,
    record: { index: 1, value: -1 },
    cpu: () => planPrefill({ ...c4, seqLens: [10, -1], extendLens: [2, 1], path: "device" }),
  },
  "negative E (device rules)": {
    code: 2,
    record: { index: 1, value: -2, aux: 10 },
    cpu: () => planPrefill({ ...c4, seqLens: [10, 10], extendLens: [2, -2], path: "device" }),
  },
  "E > S": {
    code: 3,
    record: { index: 1, value: 5, aux: 3 },
    cpu: () => planPrefill({ ...c4, seqLens: [10, 3], extendLens: [2, 5], path: "device" }),
  },
  "sum(E) > numQTokens (device rules)": {
    code: 4,
    record: { index: -1, value: 7, aux: 5 },
    cpu: () => planPrefill({ ...c4, seqLens: [10, 10], extendLens: [3, 4], numQTokens: 5, path: "device" }),
  },
  "negative request-pool index": {
    code: 5,
    record: { index: 1, value: -3 },
    cpu: () => planPrefill({ ...c4, seqLens: [10, 10], extendLens: [1, 1], reqPoolIndices: [0, -3] }),
  },
  "request-pool index beyond reqToToken's rows": {
    code: 6,
    record: { index: 0, value: 10, aux: 4 },
    cpu: () =>
      planPrefill({
        ...c4,
        seqLens: [19],
        extendLens: [1],
        reqPoolIndices: [10],
        reqToToken: { data: new Int32Array(4 * 1024), stride: 1024 },
      }),
  },
  "position beyond the reqToToken row": {
    code: 7,
    record: { index: 0, value: 66, aux: 64 },
    cpu: () => planPrefill({ ...c4, seqLens: [67], extendLens: [1], reqToToken: { identity: { tokensPerReq: 64 } } }),
  },
  "full-pool location outside fullToState": {
    code: 8,
    record: { index: 0, value: 18, aux: 18 },
    geometry: { fullToStateLength: 10 },
    cpu: () =>
      planPrefill({ ...c4, seqLens: [19], extendLens: [1], fullToState: Int32Array.from({ length: 10 }, (_, i) => i) }),
  },
  "negative SWA location": {
    code: 9,
    record: { index: 0, value: -1, aux: 18 },
    cpu: () => {
      const data = Int32Array.from({ length: 64 }, (_, i) => i);
      data[18] = -1;
      return planPrefill({ ...c4, seqLens: [19], extendLens: [1], reqToToken: { data, stride: 64 } });
    },
  },
  "request-ring slot beyond int32": {
    code: 10,
    record: { index: 0, value: 2 ** 23, aux: 0 },
    geometry: { ringSize: 256 },
    cpu: () => planPrefill({ ...c128, seqLens: [1], extendLens: [1], reqPoolIndices: [2 ** 23] }),
  },
  "legacy slot beyond int32": {
    code: 10,
    record: { index: 0, value: 2 ** 24, aux: 0 },
    geometry: { legacy: true, ringSize: 128 },
    cpu: () => planPrefillLegacy({ compressRatio: 128, seqLens: [1], extendLens: [1], reqPoolIndices: [2 ** 24] }),
  },
  "decode S < 1": {
    code: 11,
    record: { index: 0, value: 0 },
    cpu: () => planDecode({ ...c4, seqLens: [0] }),
  },
  "E == 0 on host rules": {
    code: 12,
    record: { index: 0, value: 0, aux: 5 },
    cpu: () => planPrefill({ ...c4, seqLens: [5], extendLens: [0] }),
  },
  "int64 S beyond int32": {
    code: 13,
    record: { index: 0, value: 2 ** 32 + 518, aux: 0 },
    cpu: () => planPrefill({ ...c4, seqLens: [2 ** 32 + 518], extendLens: [1], path: "device" }),
  },
  "int64 E below int32": {
    code: 13,
    record: { index: 0, value: -(2 ** 40), aux: 1 },
    cpu: () => planPrefill({ ...c4, seqLens: [10], extendLens: [-(2 ** 40)], path: "device" }),
  },
};

function cpuError(run: () => unknown): PlannerError {
  try {
    run();
  } catch (e) {
    return e as PlannerError;
  }
  throw new Error("the CPU planner accepted the input");
}

describe("GPU status codes = the CPU planner's errors", () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`code ${c.code}: ${name}`, () => {
      const st: PlanStatus = { code: c.code, index: 0, value: 0, aux: 0, numCompress: 0, numWrite: 0, ...c.record };
      const geometry: StatusGeometry = { ringSize: 16, fullToStateLength: 0, legacy: false, ...c.geometry };
      const gpu = plannerErrorOf(st, geometry);
      const cpu = cpuError(c.cpu);
      expect({ name: gpu.name, code: gpu.code, field: gpu.field, rule: gpu.rule }).toEqual({
        name: cpu.name,
        code: cpu.code,
        field: cpu.field,
        rule: cpu.rule,
      });
      expect(Number(gpu.value)).toBe(Number(cpu.value));
    });
  }
  test("every non-zero PlanErr code is covered", () => {
    const codes = new Set(Object.values(CASES).map((c) => c.code));
    const defined = Object.values(PLAN_ERR).filter((v) => v !== 0);
    expect([...codes].sort((a, b) => a - b)).toEqual(defined.sort((a, b) => a - b));
  });
  test("an unknown code is an INTERNAL error", () => {
    const st = { code: 99, index: 0, value: 0, aux: 0, numCompress: 0, numWrite: 0 };
    expect(plannerErrorOf(st, { ringSize: 16, fullToStateLength: 0, legacy: false }).code).toBe("INTERNAL");
  });
});

// The rule table's names against kernels-cuda's generated PlanErr table (moved here from kernels-cuda's
// test/plan-err.test.ts, whose tests may not import the planner: docs/decisions.md D47).
describe("PlanErr: one source", () => {
  test("every non-zero code has a rule, and no rule lacks a code", () => {
    const names = Object.keys(PLAN_ERR).filter((n) => n !== "kErrNone");
    expect([...PLAN_ERR_RULE_NAMES].sort()).toEqual(names.sort());
  });
});
void INT32_MAX;
