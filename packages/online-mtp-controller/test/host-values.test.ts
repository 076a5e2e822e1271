// prepareForward / beginVerify / markPending with a slot outside the pool or a negative length used to
// return the verify offset and commit nothing for that row (the kernels skip it); a controller of 1e6 slots threw a
// RangeError from a 13.8e9-element typed array. Both are refused by name now.
import { describe, expect, test } from "vitest";
import { CpuBackend, MAX_REQ_SLOTS, OnlineMtpController } from "../src/index.js";
import { expectRefused } from "./refusals.js";

function controller(numReqSlots = 4) {
  const backend = new CpuBackend();
  const ctrl = new OnlineMtpController({ backend, numReqSlots, maxDraftTokens: 4, numDraftTokens: 4, numLayers: 1 });
  const idx = (...v: number[]) => backend.uploadIndex(Int32Array.from(v));
  return { backend, ctrl, idx };
}

describe("request slots and sequence lengths of a batch are checked against the host's values", () => {
  test("slot 99 of 4 and seqLen -7 in prepareForward (verify and decode)", () => {
    const { ctrl, idx } = controller();
    expectRefused(() => ctrl.prepareForward("target_verify", idx(99), idx(10)), "REQ_INDEX", "reqPoolIndices[0]", 99);
    expectRefused(
      () => ctrl.prepareForward("target_verify", idx(1, 2), idx(10, -7)),
      "INVALID_ARGUMENT",
      "seqLens[1]",
      -7,
    );
    expectRefused(() => ctrl.prepareForward("decode", idx(1, -1), idx(10, 11)), "REQ_INDEX", "reqPoolIndices[1]", -1);
    expect(ctrl.counters.verifies).toBe(0);
  });
  test("beginVerify and markPending check their batch rows, and a later writeIndex is seen", () => {
    const { backend, ctrl, idx } = controller();
    expectRefused(() => ctrl.beginVerify(idx(4), idx(10), 1), "REQ_INDEX", "reqPoolIndices[0]", 4);
    expectRefused(() => ctrl.markPending(idx(-3), idx(1), 1), "INVALID_ARGUMENT", "seqLens[0]", -3);
    const rpi = idx(1);
    backend.writeIndex(rpi, Int32Array.of(7));
    expectRefused(() => ctrl.beginVerify(rpi, idx(10), 1), "REQ_INDEX", "reqPoolIndices[0]", 7);
  });
  test("valid batches still run; rows past verifyBs (CUDA-graph padding) are not read, so not checked", () => {
    const { ctrl, idx } = controller();
    expect(ctrl.prepareForward("target_verify", idx(1, 2), idx(10, 20))).toBe(ctrl.bankStrideRows);
    expect(ctrl.prepareForward("decode", idx(1, 2, 3), idx(11, 21, 5))).toBe(0);
    expect(ctrl.prepareForward("target_verify", idx(1, 99), idx(12, -1), 1)).toBe(ctrl.bankStrideRows);
  });
});

describe("numReqSlots is bounded before any state is allocated", () => {
  test("1e6 slots are refused by name, MAX_REQ_SLOTS is the bound", () => {
    expectRefused(
      () =>
        new OnlineMtpController({
          backend: new CpuBackend(),
          numReqSlots: 1e6,
          maxDraftTokens: 8,
          numDraftTokens: 4,
          numLayers: 1,
        }),
      "REQ_INDEX",
      "numReqSlots",
      1e6,
    );
    expect(MAX_REQ_SLOTS).toBe(65536);
  });
});
