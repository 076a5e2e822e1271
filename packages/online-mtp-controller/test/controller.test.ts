import { onlineC128TotalRows } from "@dsv4-kv/memory-pool";
import { describe, expect, test } from "vitest";
import {
  CpuBackend,
  KV_SCORE_COLS,
  OnlineMtpController,
  OnlineMtpError,
  STATE_ROW_ELEMS,
  logicalForwardMode,
  runSimulation,
  targetVerifyBatchSize,
  type OnlineMtpBackend,
} from "../src/index.js";
import { UpstreamOnlineMtpController } from "../src/testing.js";
import { bitsEqual, randn, setup, verifyOne } from "./helpers.js";

/** Wraps a backend: records every call in order and counts device → host reads. */
function counting(inner: OnlineMtpBackend) {
  const calls: string[] = [];
  let reads = 0;
  const proxy = new Proxy(inner, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const name = String(prop);
        if (name !== "hostIndex") calls.push(name); // a host-side lookup, not a device call
        if (name.startsWith("read")) reads++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { be: proxy as OnlineMtpBackend, calls, reads: () => reads };
}

describe("controller lifecycle (online-mtp §9, §10; invariants 14, 15, 17, 18, 20)", () => {
  test("the verify loop makes no device-to-host read (counting backend)", () => {
    const c = counting(new CpuBackend());
    const s = setup(c.be, { N: 5, D: 4, L: 3 });
    const rpi = c.be.uploadIndex(Int32Array.of(1, 2, 3));
    const seq = c.be.uploadIndex(Int32Array.of(100, 200, 300));
    const kv = c.be.uploadMatrix(randn(s.rng, 12 * KV_SCORE_COLS), 12, KV_SCORE_COLS);
    const before = c.reads();
    c.calls.length = 0;
    for (let step = 0; step < 5; step++) {
      c.be.writeIndex(seq, Int32Array.of(100 + 4 * step, 200 + 3 * step, 300 + step)); // scheduler's H2D upload
      s.ctrl.prepareForward("target_verify", rpi, seq);
      for (let l = 0; l < 3; l++) s.ctrl.writePrefixStates(l, kv, s.ape, "target_verify");
    }
    s.ctrl.flushFinishing([2], [215]);
    s.ctrl.onRequestSlotsAssigned([2]);
    expect(c.reads() - before).toBe(0);
    expect(c.calls.filter((n) => n.startsWith("read"))).toEqual([]);
    expect(c.calls).toContain("writePrefix");
  });

  test("14/15: O only for a verify with rows; commit before mark; idle/disabled/bs 0 launch nothing", () => {
    const c = counting(new CpuBackend());
    const s = setup(c.be, { N: 5, D: 4, L: 2 });
    const rpi = c.be.uploadIndex(Int32Array.of(1, 2));
    const seq = c.be.uploadIndex(Int32Array.of(10, 20));
    const O = s.ctrl.bankStrideRows;
    c.calls.length = 0;
    expect(s.ctrl.prepareForward("target_verify", rpi, seq)).toBe(O);
    expect(c.calls).toEqual(["commitPending", "commitPending"]); // the last layer's commit also marks (fused)
    for (const mode of ["decode", "extend", "mixed", "draft_extend"] as const) {
      c.calls.length = 0;
      expect(s.ctrl.prepareForward(mode, rpi, seq)).toBe(0);
      expect(c.calls).toEqual(["commitPending", "commitPending"]);
      expect(s.ctrl.verifyContext).toBeNull();
    }
    c.calls.length = 0;
    expect(s.ctrl.prepareForward("idle", rpi, seq)).toBe(0);
    expect(s.ctrl.prepareForward("target_verify", rpi, seq, 0)).toBe(0);
    expect(c.calls).toEqual([]);
    expect(s.ctrl.verifyContext).toBeNull();
    const off = new OnlineMtpController({
      backend: c.be,
      numReqSlots: 4,
      maxDraftTokens: 2,
      numDraftTokens: 2,
      numLayers: 1,
      flags: { experimentalOnlineC128Mtp: false },
    });
    c.calls.length = 0;
    expect(off.enabled()).toBe(false);
    expect(off.stateSlotOffset()).toBe(0);
    expect(off.prepareForward("target_verify", rpi, seq)).toBe(0);
    expect(c.calls).toEqual([]);
  });

  test("17: interleaving (verify → unrelated EXTEND → verify): upstream loses the commit, hardened keeps it", () => {
    const run = (Ctor: typeof OnlineMtpController) => {
      const s = setup(new CpuBackend(), { N: 6, D: 4, Ctor });
      const be = s.be;
      const kv = be.uploadMatrix(randn(s.rng, 4 * KV_SCORE_COLS), 4, KV_SCORE_COLS);
      s.ctrl.prepareForward("target_verify", be.uploadIndex(Int32Array.of(1)), be.uploadIndex(Int32Array.of(300)));
      s.ctrl.writePrefixStates(0, kv, s.ape, "target_verify");
      const bank3 = be.readStateBits(s.ctrl.layers[0]!, 1 + 3 * s.ctrl.bankStrideRows, 1);
      // a new request arrives: EXTEND batch without request 1
      s.ctrl.onRequestSlotsAssigned([4]);
      s.ctrl.prepareForward("extend", be.uploadIndex(Int32Array.of(4)), be.uploadIndex(Int32Array.of(50)));
      // next verify of request 1 after accepting 3 tokens
      s.ctrl.prepareForward("target_verify", be.uploadIndex(Int32Array.of(1)), be.uploadIndex(Int32Array.of(303)));
      return bitsEqual(be.readStateBits(s.ctrl.layers[0]!, 1, 1), bank3);
    };
    expect(run(UpstreamOnlineMtpController)).toBe(false); // lost
    expect(run(OnlineMtpController)).toBe(true); // kept
    // the same over a random scenario
    const up = runSimulation({
      backend: new CpuBackend(),
      requests: 4,
      steps: 40,
      draftTokens: 4,
      seed: 9,
      lifecycle: "upstream",
    });
    const hard = runSimulation({
      backend: new CpuBackend(),
      requests: 4,
      steps: 40,
      draftTokens: 4,
      seed: 9,
      lifecycle: "hardened",
    });
    expect(up.lostCommits).toBeGreaterThan(0);
    expect(hard.lostCommits).toBe(0);
  });

  test("18: a finishing request is flushed; a reused slot starts cleared; a stale marker is never consumed", () => {
    const s = setup(new CpuBackend(), { N: 4, D: 4 });
    const be = s.be;
    verifyOne(s, 2, 130);
    const bank2 = be.readStateBits(s.ctrl.layers[0]!, 2 + 2 * s.ctrl.bankStrideRows, 1);
    s.ctrl.flushFinishing([2], [132]);
    expect(bitsEqual(be.readStateBits(s.ctrl.layers[0]!, 2, 1), bank2)).toBe(true);
    expect(be.readIndex(s.ctrl.pendingSeqLens)[2]).toBe(-1);
    // a request that finished WITHOUT a flush leaves a marker; the slot's next owner must not consume it
    verifyOne(s, 3, 40);
    expect(be.readIndex(s.ctrl.pendingSeqLens)[3]).toBe(40);
    s.ctrl.onRequestSlotsAssigned([3]);
    expect(be.readIndex(s.ctrl.pendingSeqLens)[3]).toBe(-1);
    const cleared = be.readStateBits(s.ctrl.layers[0]!, 3, 1);
    s.ctrl.prepareForward("extend", be.uploadIndex(Int32Array.of(3)), be.uploadIndex(Int32Array.of(42)));
    expect(bitsEqual(be.readStateBits(s.ctrl.layers[0]!, 3, 1), cleared)).toBe(true);
    // without the reset hook the stale marker (S = 40) would be consumed at cur = 42: bank 2 copied into bank 0
    const t = setup(new CpuBackend(), { N: 4, D: 4 });
    t.ctrl.prepareForward("target_verify", t.be.uploadIndex(Int32Array.of(3)), t.be.uploadIndex(Int32Array.of(40)));
    const row0 = t.be.readStateBits(t.ctrl.layers[0]!, 3, 1);
    t.ctrl.prepareForward("extend", t.be.uploadIndex(Int32Array.of(3)), t.be.uploadIndex(Int32Array.of(42)));
    expect(bitsEqual(t.be.readStateBits(t.ctrl.layers[0]!, 3, 1), row0)).toBe(false);
  });

  test("adaptive D: a pending commit is clamped by the width of its own verify", () => {
    const s = setup(new CpuBackend(), { N: 3, Dmax: 8, D: 8 });
    const be = s.be;
    verifyOne(s, 1, 10);
    const bank6 = be.readStateBits(s.ctrl.layers[0]!, 1 + 6 * s.ctrl.bankStrideRows, 1);
    s.ctrl.setNumDraftTokens(2);
    s.ctrl.prepareForward("target_verify", be.uploadIndex(Int32Array.of(1)), be.uploadIndex(Int32Array.of(16)));
    expect(bitsEqual(be.readStateBits(s.ctrl.layers[0]!, 1, 1), bank6)).toBe(true);
  });

  test("20: sizes — O = N + 2, rows = (N+2)(1+Dmax), pending length N, bytes = rows·3H·dtype·layers", () => {
    const be = new CpuBackend();
    const c = new OnlineMtpController({
      backend: be,
      numReqSlots: 129,
      maxDraftTokens: 4,
      numDraftTokens: 4,
      numLayers: 1,
    });
    expect(c.bankStrideRows).toBe(131);
    expect(c.stateRows).toBe(655);
    expect(c.stateRows).toBe(onlineC128TotalRows(129, 4));
    expect(c.layers[0]!.rows).toBe(655);
    expect(c.pendingSeqLens.length).toBe(129);
    expect(c.stateBytes).toBe(655 * STATE_ROW_ELEMS * 4);
    // The example of docs/reference/online-mtp.md §14: 3.84 MiB per layer (fp32).
    expect(c.stateBytes / 2 ** 20).toBeCloseTo(3.84, 2);
    const b = new OnlineMtpController({
      backend: be,
      numReqSlots: 129,
      maxDraftTokens: 4,
      numDraftTokens: 4,
      numLayers: 1,
      stateDtype: "bf16",
    });
    expect(b.stateBytes / 2 ** 20).toBeCloseTo(1.92, 2);
  });

  test("validation: D outside [1, min(8, Dmax)], bad sizes, slots out of range → OnlineMtpError", () => {
    const be = new CpuBackend();
    const mk = (o: Partial<ConstructorParameters<typeof OnlineMtpController>[0]>) => () =>
      new OnlineMtpController({
        backend: be,
        numReqSlots: 4,
        maxDraftTokens: 4,
        numDraftTokens: 4,
        numLayers: 1,
        ...o,
      });
    const cases: [() => unknown, string, unknown][] = [
      [mk({ numDraftTokens: 0 }), "numDraftTokens", 0],
      [mk({ numDraftTokens: 5 }), "numDraftTokens", 5],
      [mk({ maxDraftTokens: 9, numDraftTokens: 9 }), "maxDraftTokens", 9],
      [mk({ maxDraftTokens: 0 }), "maxDraftTokens", 0],
      [mk({ numReqSlots: 0 }), "numReqSlots", 0],
      [mk({ numReqSlots: 2.5 }), "numReqSlots", 2.5],
      [mk({ stateDtype: "fp16" as never }), "stateDtype", "fp16"],
      [() => mk({})().onRequestSlotsAssigned([1, 4]), "reqSlots[1]", 4],
      [() => mk({})().flushFinishing([-1], [3]), "reqSlots[0]", -1],
      [() => mk({})().setNumDraftTokens(9), "numDraftTokens", 9],
      [
        () =>
          mk({})().writePrefixStates(1, be.allocMatrix(4, KV_SCORE_COLS), be.allocMatrix(128, 512), "target_verify"),
        "layerId",
        1,
      ],
      [() => mk({})().prepareForward("target_verify", be.allocIndex(2, 1), be.allocIndex(2, 5), 3), "verifyBs", 3],
    ];
    for (const [fn, field, value] of cases) {
      let err: unknown;
      try {
        fn();
      } catch (e) {
        err = e;
      }
      expect(err, field).toBeInstanceOf(OnlineMtpError);
      const e = err as OnlineMtpError;
      expect(e.field).toBe(field);
      expect(e.value).toBe(value);
      expect(e.message).toContain(e.rule);
    }
  });

  test("forward-mode helpers (online-mtp §11)", () => {
    expect(logicalForwardMode({ forwardMode: "idle", originalForwardMode: "target_verify" })).toBe("idle");
    expect(logicalForwardMode({ forwardMode: "extend", originalForwardMode: "target_verify" })).toBe("extend");
    expect(logicalForwardMode({ forwardMode: "decode", originalForwardMode: "target_verify" })).toBe("target_verify");
    expect(logicalForwardMode({ forwardMode: "decode" })).toBe("decode");
    expect(
      targetVerifyBatchSize({ actualForwardMode: "idle", draftTokenCount: 8, draftTokenNum: 4, batchSize: 2 }),
    ).toBe(0);
    expect(targetVerifyBatchSize({ draftTokenCount: null, draftTokenNum: 4, batchSize: 3 })).toBe(3);
    expect(targetVerifyBatchSize({ draftTokenCount: 8, draftTokenNum: 0, batchSize: 3 })).toBe(0);
    expect(targetVerifyBatchSize({ draftTokenCount: 9, draftTokenNum: 4, batchSize: 3 })).toBe(0);
    expect(targetVerifyBatchSize({ draftTokenCount: 12, draftTokenNum: 4, batchSize: 8 })).toBe(3);
  });

  test("16 at scale: many requests, D up to 8, adaptive D, fp32 and bf16, zero lost commits", () => {
    for (const [dtype, adaptive, seed] of [
      ["fp32", false, 21],
      ["fp32", true, 22],
      ["bf16", true, 23],
    ] as const) {
      const r = runSimulation({
        backend: new CpuBackend(),
        requests: 12,
        steps: 120,
        draftTokens: 8,
        adaptive,
        seed,
        stateDtype: dtype,
      });
      expect(r.lostCommits).toBe(0);
      expect(r.violations).toBe(0);
      expect(r.maxAbsError).toBeLessThan(dtype === "fp32" ? 2e-4 * 128 : 1);
    }
  });
});
