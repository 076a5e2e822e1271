/**
 * The GPU backend's host side (uploads, buffer reuse, the 0xFF out fill, state copies at row offsets, the error word
 * → CompressError mapping) against a fake addon whose "kernels" are the CPU reference on the fake buffers' bytes.
 * Runs everywhere; test/gpu-backend.test.ts runs the real kernels.
 */
import { CompressPlanTable, WritePlanTable } from "@dsv4-kv/planner";
import { describe, expect, test, vi } from "vitest";

interface FakeBuffer {
  bytes: Uint8Array;
  readonly byteLength: number;
  freed: boolean;
  free(): void;
}

const fake = vi.hoisted(() => ({ nextError: null as Int32Array | null, launches: 0, allocs: 0 }));

// The driver and its typed bindings (kernels-cuda root and ./internal) both come from this one fake.
const fakeKernelsCuda = vi.hoisted(() => async () => {
  const { CpuCompressBackend } = await import("../src/cpu-backend.js");
  const buf = (n: number): FakeBuffer => {
    fake.allocs++;
    return {
      bytes: new Uint8Array(n),
      byteLength: n,
      freed: false,
      free() {
        this.freed = true;
      },
    };
  };
  const live = (b: FakeBuffer) => {
    if (b.freed) throw new Error("use of a freed buffer");
    return b;
  };
  const bytesOf = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  // Runs the CPU reference over the fake state's bytes (state injected, read back after the call).
  const run = (a: Record<string, unknown>, op: "prefill" | "decode") => {
    fake.launches++;
    if (fake.nextError) {
      // A "bad plan": the device records the word (the rows' work is not modelled).
      live(a.err as FakeBuffer).bytes.set(bytesOf(fake.nextError));
      fake.nextError = null;
      return;
    }
    const cr = a.cr as 4 | 128;
    const headDim = a.headDim as number;
    const stateType = a.stateType as number;
    const stateRows = a.stateRows as number;
    const cpu = new CpuCompressBackend({
      compressRatio: cr,
      headDim,
      stateDtype: stateType ? "bf16" : "fp32",
      stateRows,
    });
    const s = live(a.state as FakeBuffer);
    const internal = cpu as unknown as { state: Float32Array | Uint16Array };
    bytesOf(internal.state).set(s.bytes.subarray(0, internal.state.byteLength));
    const w = cr === 4 ? 8 : 128;
    cpu.setApe(new Float32Array(live(a.ape as FakeBuffer).bytes.slice(0, w * headDim * 4).buffer));
    const rowElems = (cr === 4 ? 4 : 2) * headDim;
    const input = new Float32Array(
      live(a.input as FakeBuffer).bytes.slice(0, (a.inputRows as number) * rowElems * 4).buffer,
    );
    let out: Float32Array;
    if (op === "prefill") {
      const planC = live(a.planC as FakeBuffer).bytes.slice(0, (a.numPlanC as number) * 16);
      const planW = live(a.planW as FakeBuffer).bytes.slice(0, (a.numPlanW as number) * 8);
      out = cpu.prefill({ input, inputRows: a.inputRows as number, planC, planW });
    } else {
      const batch = a.batch as number;
      const planD = live(a.planD as FakeBuffer).bytes.slice(0, batch * 16);
      out = cpu.decode({ input: input.slice(0, batch * rowElems), planD, batch });
    }
    // The kernels leave rows they do not compute untouched: copy only the finite ones.
    const o = live(a.out as FakeBuffer);
    const view = new Float32Array(o.bytes.buffer, 0, out.length);
    out.forEach((x, i) => {
      if (!Number.isNaN(x)) view[i] = x;
    });
    s.bytes.set(bytesOf(internal.state));
  };
  return {
    COMPRESS_ERR: { none: 0, seqLen: 1, bufferLen: 2, raggedRow: 3, ringRow: 4, writeLoc: 5, writeRagged: 6 },
    COMPRESS_KERNEL: { prefillCompress: 0, prefillWrite: 1, decode: 2 },
    COMPRESS_STATE_TYPE: { fp32: 0, bf16: 1 },
    probeCompress: () => ({ ok: true, reason: "fake" }),
    createContext: () => ({ device: 0, synchronize() {}, destroy() {} }),
    createDeviceBuffer: (n: number) => buf(n),
    onlineMtpNative: () => ({
      copyToDevice: (_c: unknown, b: FakeBuffer, v: ArrayBufferView, off = 0) => live(b).bytes.set(bytesOf(v), off),
      copyToHost: (_c: unknown, b: FakeBuffer, v: ArrayBufferView, off = 0) => {
        bytesOf(v).set(live(b).bytes.subarray(off, off + v.byteLength));
        return v;
      },
      fill: (_c: unknown, b: FakeBuffer, byte: number) => {
        live(b).bytes.fill(byte);
        return b;
      },
    }),
    compressNative: () => ({
      prefill: (_c: unknown, a: Record<string, unknown>) => run(a, "prefill"),
      decode: (_c: unknown, a: Record<string, unknown>) => run(a, "decode"),
    }),
  };
});
vi.mock("@dsv4-kv/kernels-cuda", () => fakeKernelsCuda());
vi.mock("@dsv4-kv/kernels-cuda/internal", () => fakeKernelsCuda());

const { GpuCompressBackend } = await import("../src/gpu.js");
const { injectDeviceRowChecksOnly } = await import("../src/gpu-backend.js");
const { CpuCompressBackend, CompressError } = await import("../src/index.js");
const { Harness, firstDifference } = await import("./helpers.js");
const { CONFIGS, configName, runStepsPaired } = await import("./steps.js");
const { BAD_CASES } = await import("./bad-plans.js");

describe("GPU backend host side, on a fake addon", () => {
  for (const o of CONFIGS) {
    test(`${configName(o)}: outputs and state bits equal the CPU's, buffers reused`, () => {
      const cpu = new CpuCompressBackend(Harness.geometry(o));
      const allocs0 = fake.allocs;
      const g = new GpuCompressBackend(Harness.geometry(o));
      let calls = 0;
      runStepsPaired(o, g, cpu, (r, want) => {
        expect(firstDifference(new Uint32Array(r.out.buffer), new Uint32Array(want.out.buffer))).toBe(-1);
        expect(
          firstDifference(g.readStateBits(0, g.geometry.stateRows), cpu.readStateBits(0, cpu.geometry.stateRows)),
        ).toBe(-1);
        calls++;
      });
      expect(calls).toBeGreaterThan(4);
      expect(fake.allocs - allocs0).toBeLessThan(15); // regrown a few times, not per call
      expect(g.readStateRows(2, 3)).toEqual(cpu.readStateRows(2, 3));
      g.dispose();
    });
  }
  test("a device error word becomes the host validator's CompressError (and is cleared)", () => {
    const c = BAD_CASES.find((x) => x.field === "planC[0].readPage1")!;
    const g = new GpuCompressBackend({ compressRatio: 4, headDim: 128, stateDtype: "fp32", stateRows: 64 });
    injectDeviceRowChecksOnly(g);
    g.setApe(new Float32Array(8 * 128));
    fake.nextError = Int32Array.of(4, 0, 16, 0);
    let err: unknown;
    try {
      g.prefill(c.prefill!);
    } catch (e) {
      err = e;
    }
    expect(CompressError.isInstance(err)).toBe(true);
    expect([
      (err as InstanceType<typeof CompressError>).field,
      (err as InstanceType<typeof CompressError>).value,
    ]).toEqual(["planC[0].readPage1", 16]);
    fake.nextError = Int32Array.of(4, 0, 16, 7); // an unknown kernel id
    expect(() => g.prefill(c.prefill!)).toThrowError(expect.objectContaining({ code: "INTERNAL" }));
    // A word for a row the host accepts: INTERNAL (a disagreement), and the word is cleared after each.
    const ok = BAD_CASES.find((x) => x.field === "planW[1].raggedId")!;
    fake.nextError = Int32Array.of(1, 0, 8, 0);
    expect(() => g.prefill({ ...ok.prefill!, planW: new Uint8Array(0) })).toThrowError(
      expect.objectContaining({ code: "INTERNAL", field: "device error word" }),
    );
    expect(() => g.prefill({ ...ok.prefill!, planW: new Uint8Array(0) })).not.toThrow();
  });
  test("the test hook is not a constructor option: deviceRowChecksOnly is an unknown key", () => {
    const geometry = { compressRatio: 4, headDim: 128, stateDtype: "fp32", stateRows: 64 } as const;
    const options = { deviceRowChecksOnly: true } as never;
    let err: unknown;
    try {
      new GpuCompressBackend(geometry, options).dispose();
    } catch (e) {
      err = e;
    }
    expect(CompressError.isInstance(err)).toBe(true);
    expect((err as InstanceType<typeof CompressError>).field).toBe("options.deviceRowChecksOnly");
  });
});

describe("an empty batch reads no dummy input row", () => {
  const geometry = { compressRatio: 4, headDim: 128, stateDtype: "fp32", stateRows: 64 } as const;
  type Backend = InstanceType<typeof GpuCompressBackend> | InstanceType<typeof CpuCompressBackend>;
  const stateOf = (b: Backend) => b.readStateBits(0, geometry.stateRows);
  const bitsOf = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

  /** A GPU and a CPU backend after one prefill of a real input row: the row a dummy-row read would find. */
  function pair(deviceRowChecksOnly: boolean) {
    const g = new GpuCompressBackend(geometry);
    const cpu = new CpuCompressBackend(geometry);
    if (deviceRowChecksOnly) injectDeviceRowChecksOnly(g);
    const ape = new Float32Array(8 * 128).fill(0.25);
    const earlier = { input: new Float32Array(4 * 128).fill(3), inputRows: 1, planC: new Uint8Array(0) };
    for (const b of [g, cpu]) {
      b.setApe(ape);
      b.prefill({ ...earlier, planW: new Uint8Array(0) });
    }
    return { g, cpu };
  }

  function errorOf(f: () => unknown): InstanceType<typeof CompressError> {
    try {
      f();
    } catch (e) {
      if (CompressError.isInstance(e)) return e as InstanceType<typeof CompressError>;
      throw e;
    }
    throw new Error("expected a CompressError");
  }

  function padding(rowsC: number, rowsW: number): { planC: Uint8Array; planW: Uint8Array } {
    const planC = CompressPlanTable.allocate(rowsC);
    const planW = WritePlanTable.allocate(rowsW);
    for (let i = 0; i < rowsC; i++) planC.setInvalid(i);
    for (let i = 0; i < rowsW; i++) planW.setInvalid(i);
    return { planC: planC.bytes, planW: planW.bytes };
  }

  // Rows that read input row 0 (with one input row they are valid): a write, and a c4 window of q = 3 whose last
  // element is its own token.
  const READS_ROW_0 = [
    { planW: WritePlanTable.fromRecords([{ raggedId: 0, writeLoc: 5 }]).bytes, planC: new Uint8Array(0) },
    {
      planW: new Uint8Array(0),
      planC: CompressPlanTable.fromRecords([{ seqLen: 4, raggedId: 0, bufferLen: 7, readPage0: -1, readPage1: 0 }])
        .bytes,
    },
  ];
  for (const [i, plans] of READS_ROW_0.entries()) {
    test(`0 input rows, a plan row reading input (case ${i}), device checks only: the CPU's CompressError`, () => {
      const { g, cpu } = pair(true);
      const batch = { input: new Float32Array(0), inputRows: 0, ...plans };
      const want = errorOf(() => cpu.prefill(batch));
      const launches = fake.launches;
      const got = errorOf(() => g.prefill(batch));
      expect([got.code, got.field, got.value]).toEqual([want.code, want.field, want.value]);
      expect(fake.launches).toBe(launches);
      expect(firstDifference(stateOf(g), stateOf(cpu))).toBe(-1);
      g.dispose();
    });
  }
  for (const deviceRowChecksOnly of [false, true]) {
    test(`0 input rows, padding rows only (device checks only: ${deviceRowChecksOnly}): the CPU's result`, () => {
      const { g, cpu } = pair(deviceRowChecksOnly);
      const batch = { input: new Float32Array(0), inputRows: 0, ...padding(3, 2) };
      const out = g.prefill(batch);
      expect(out.length).toBe(3 * 128);
      expect(firstDifference(bitsOf(out), bitsOf(cpu.prefill(batch)))).toBe(-1);
      expect(firstDifference(stateOf(g), stateOf(cpu))).toBe(-1);
      g.dispose();
    });
    test(`decode of batch 0 (device checks only: ${deviceRowChecksOnly}) launches nothing`, () => {
      const { g, cpu } = pair(deviceRowChecksOnly);
      const batch = { input: new Float32Array(0), planD: new Uint8Array(0), batch: 0 };
      const launches = fake.launches;
      expect(g.decode(batch)).toEqual(cpu.decode(batch));
      expect(fake.launches).toBe(launches);
      expect(firstDifference(stateOf(g), stateOf(cpu))).toBe(-1);
      g.dispose();
    });
  }
});
