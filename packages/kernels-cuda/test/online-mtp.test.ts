/**
 * The online c128 MTP bindings (native/online_mtp): host-side argument validation (runs wherever the addon is built,
 * GPU or not: the checks come before any device work), and on a GPU round trips of every kernel variant against a
 * float64 reference written here, bitwise commits, out-of-range request / slot indices reported through the error
 * word and never written, fp32 and bf16 state.
 */
import { describe, expect, test } from "vitest";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import {
  createDeviceBuffer,
  getDefaultContext,
  probeOnlineMtp,
  type DeviceBuffer,
  type GpuContext,
  KernelsCudaError,
} from "../src/index.js";
import { ONLINE_MTP_ERR, ONLINE_MTP_KERNEL, onlineMtpNative, type OnlineMtpNative } from "../src/internal.js";
import { fromBf16, Rng, toBf16 } from "./helpers.js";
import { COMMIT_VARIANT, WRITE_PREFIX_VARIANT } from "../src/internal.js";
import { loadNativeUnchecked } from "../src/testing.js";
import { hasBenchVariants, processBenchAddon } from "./bench-build.js";

const H = 512;
const ROW = 3 * H;
const KVC = 2 * H;
const ERR_CODE = "ERR_DSV4KV_ONLINE_MTP";

function thrown(f: () => unknown): Error & { code?: string } {
  try {
    f();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error("expected a throw");
}

describe("argument validation (host side, no GPU needed)", () => {
  const addon = loadNativeUnchecked() as { onlineMtp?: OnlineMtpNative } | null;
  const nat = addon?.onlineMtp;
  const wp = { stateType: 0, batch: 1, numVerify: 4, numReqSlots: 4, bankStrideRows: 6 };
  const writePrefixCase = (
    name: string,
    patch: Record<string, unknown>,
    re: RegExp,
  ): [string, () => unknown, RegExp] => [name, () => nat!.writePrefix(null as never, { ...wp, ...patch } as never), re];
  const cases: [string, () => unknown, RegExp][] = [
    ["args not an object", () => nat!.writePrefix(null as never, 5 as never), /^args = 5: must be an object$/],
    writePrefixCase("numVerify 9", { numVerify: 9 }, /^numVerify = 9: must be an integer in \[1, 8\]$/),
    writePrefixCase("numVerify 0", { numVerify: 0 }, /^numVerify = 0: must be an integer in \[1, 8\]$/),
    writePrefixCase("numVerify fractional", { numVerify: 2.5 }, /^numVerify = 2.5: must be an integer in \[1, 8\]$/),
    writePrefixCase("batch negative", { batch: -1 }, /^batch = -1: must be an integer in \[0, 2147483647\]$/),
    writePrefixCase("bank stride below N", { bankStrideRows: 3 }, /^bankStrideRows = 3: must be an integer in \[4, /),
    writePrefixCase("stateType 2", { stateType: 2 }, /^stateType = 2: must be an integer in \[0, 1\]$/),
    writePrefixCase("variant 4", { variant: 4 }, /^variant = 4: must be an integer in \[0, 3\]$/),
    writePrefixCase("split 3", { split: 3 }, /^split = 3: must be 0 \(auto\), 1, 2, 4, 8 or 16$/),
    writePrefixCase("split 32", { split: 32 }, /^split = 32: must be an integer in \[0, 16\]$/),
    writePrefixCase(
      "numVerify not a number",
      { numVerify: "4" },
      /^numVerify = "4": must be a number \(an integer in \[1, 8\]\)$/,
    ),
    [
      "a boolean is not 0/1",
      () => nat!.markPending(null as never, { batch: 1, numVerify: 1, numReqSlots: 2, clearAll: true } as never),
      /^clearAll = true: must be a number \(an integer in \[0, 1\]\)$/,
    ],
    [
      "mark clearAll 2",
      () => nat!.markPending(null as never, { batch: 1, numVerify: 1, numReqSlots: 2, clearAll: 2 } as never),
      /^clearAll = 2: must be an integer in \[0, 1\]$/,
    ],
    [
      "commit Dmax 0",
      () => nat!.commitPending(null as never, { stateType: 0, batch: 1, maxDraftTokens: 0 } as never),
      /^maxDraftTokens = 0: must be an integer in \[1, 8\]$/,
    ],
    [
      "commit variant 5",
      () =>
        nat!.commitPending(
          null as never,
          {
            stateType: 0,
            batch: 1,
            maxDraftTokens: 2,
            clampWidth: 0,
            numReqSlots: 2,
            bankStrideRows: 4,
            consume: 0,
            variant: 5,
          } as never,
        ),
      /^variant = 5: must be an integer in \[0, 2\]$/,
    ],
    [
      "reset count > grid",
      () => nat!.resetSlots(null as never, { stateType: 0, count: 70000 } as never),
      /^count = 70000: must be an integer in \[0, 65535\]$/,
    ],
    [
      "decode variant 2",
      () =>
        nat!.decode(null as never, { stateType: 0, batch: 1, numReqSlots: 2, slotOffsetRows: 0, variant: 2 } as never),
      hasBenchVariants(addon)
        ? /^variant = 2: must be 0 \(legacy\), 1 \(vec\) or 3 \(scalar\) for decode$/
        : /^variant = 2: must be 3 \(scalar\) in this build: /,
    ],
    [
      "prefill numSegments negative",
      () => nat!.prefill(null as never, { stateType: 0, numSegments: -3 } as never),
      /^numSegments = -3: must be an integer/,
    ],
    [
      "buffer not a DeviceBuffer",
      () => nat!.writePrefix(null as never, { ...wp, kvScore: {} } as never),
      /^kvScore = \{\}: must be a DeviceBuffer$/,
    ],
  ];
  // A normal build holds only each kernel's default shape (DSV4KV_BENCH_VARIANTS off): any other is refused.
  const notBuilt = (shipped: string) =>
    new RegExp(
      `: must be ${shipped} in this build: the benchmark-only variants are built only with the CMake option DSV4KV_BENCH_VARIANTS=ON$`,
    );
  const commitArgs = { stateType: 0, batch: 1, maxDraftTokens: 2, clampWidth: 0, numReqSlots: 2, bankStrideRows: 4 };
  const decodeArgs = { stateType: 0, batch: 1, numReqSlots: 2, slotOffsetRows: 0 };
  const benchOnly: [string, () => unknown, RegExp][] = [
    ...[0, 1, 2].map((v): [string, () => unknown, RegExp] =>
      writePrefixCase(`writePrefix variant ${v}`, { variant: v }, notBuilt("3 \\(scalar\\)")),
    ),
    ...[0, 2].map((v): [string, () => unknown, RegExp] => [
      `commit variant ${v}`,
      () => nat!.commitPending(null as never, { ...commitArgs, consume: 0, variant: v } as never),
      notBuilt("1 \\(regs\\)"),
    ]),
    ...[0, 1].map((v): [string, () => unknown, RegExp] => [
      `decode variant ${v}`,
      () => nat!.decode(null as never, { ...decodeArgs, variant: v } as never),
      notBuilt("3 \\(scalar\\)"),
    ]),
  ];
  for (const [name, f, re] of benchOnly) {
    test(`without DSV4KV_BENCH_VARIANTS, ${name} is refused as not built`, (ctx) => {
      if (!nat) ctx.skip("addon not built");
      if (hasBenchVariants(addon)) ctx.skip("a DSV4KV_BENCH_VARIANTS build has every variant");
      const e = thrown(f);
      expect(e.message).toMatch(re);
      expect(KernelsCudaError.isInstance(e)).toBe(true);
      expect([e.code, (e as KernelsCudaError).field, (e as KernelsCudaError).params.nativeCode]).toEqual([
        "INVALID_ARGUMENT",
        "variant",
        ERR_CODE,
      ]);
    });
  }
  for (const [name, f, re] of cases) {
    test(`${name}: names field, value and rule`, (ctx) => {
      if (!nat) ctx.skip("addon not built");
      const e = thrown(f);
      expect(e.message).toMatch(re);
      expect(KernelsCudaError.isInstance(e)).toBe(true);
      const nativeCode = (e as KernelsCudaError).params.nativeCode;
      if (e.code === "INVALID_TYPE") expect(nativeCode).toBe("ERR_INVALID_ARG_TYPE");
      else expect([e.code, nativeCode]).toEqual(["INVALID_ARGUMENT", ERR_CODE]);
    });
  }
  test("exports the copy helpers and constants", (ctx) => {
    if (!nat) ctx.skip("addon not built");
    for (const k of [
      "writePrefix",
      "markPending",
      "commitPending",
      "resetSlots",
      "decode",
      "prefill",
      "copyToDevice",
      "copyToHost",
      "fill",
    ])
      expect(typeof (nat as unknown as Record<string, unknown>)[k], k).toBe("function");
    expect(nat!.headDim).toBe(H);
    expect(nat!.maxVerifyTokens).toBe(8);
  });
});

// ---- GPU -------------------------------------------------------------------------------------------------------

type Dtype = "fp32" | "bf16";
interface Env {
  nat: OnlineMtpNative;
  ctx: GpuContext;
  bufs: DeviceBuffer[];
}
function dev(env: Env, view: ArrayBufferView): DeviceBuffer {
  const b = createDeviceBuffer(Math.max(16, view.byteLength), env.ctx);
  env.bufs.push(b);
  env.nat.copyToDevice(env.ctx, b, view);
  return b;
}
/** State rows as float values (bf16 widened); `vals` are rounded to the dtype first. */
function stateBuf(env: Env, vals: Float32Array, dtype: Dtype): { buf: DeviceBuffer; host: Float32Array } {
  if (dtype === "fp32") return { buf: dev(env, vals), host: Float32Array.from(vals) };
  const bits = Uint16Array.from(vals, toBf16);
  return { buf: dev(env, bits), host: Float32Array.from(bits, fromBf16) };
}
function readState(
  env: Env,
  b: DeviceBuffer,
  rows: number,
  dtype: Dtype,
): { vals: Float32Array; bits: Uint32Array | Uint16Array } {
  if (dtype === "fp32") {
    const bits = env.nat.copyToHost(env.ctx, b, new Uint32Array(rows * ROW));
    return { vals: new Float32Array(bits.buffer), bits };
  }
  const bits = env.nat.copyToHost(env.ctx, b, new Uint16Array(rows * ROW));
  return { vals: Float32Array.from(bits, fromBf16), bits };
}
function randomState(rng: Rng, rows: number): Float32Array {
  const v = new Float32Array(rows * ROW);
  for (let r = 0; r < rows; r++)
    for (let d = 0; d < H; d++) {
      v[r * ROW + d] = rng.n();
      v[r * ROW + H + d] = 1 + 4 * rng.u();
      v[r * ROW + 2 * H + d] = rng.n();
    }
  return v;
}
function randn(rng: Rng, n: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, () => scale * rng.n());
}
/** docs/reference/online-mtp.md §5.1 in float64 on one channel. */
function step(st: number[], k: number, s: number, pos: number): void {
  if (pos === 0) {
    st[0] = s;
    st[1] = 1;
    st[2] = k;
    return;
  }
  const m2 = Math.max(st[0]!, s);
  const al = st[1]! * Math.exp(st[0]! - m2);
  const be = Math.exp(s - m2);
  const sg = al + be;
  st[2] = (st[2]! * al + k * be) / sg;
  st[0] = m2;
  st[1] = sg;
}
function close(got: number, want: number, dtype: Dtype): boolean {
  const [atol, rtol] = dtype === "fp32" ? [2e-4, 2e-4] : [1e-2, 8e-3];
  return Math.abs(got - want) <= atol + rtol * Math.abs(want);
}

const gpuTest = createGpuTest(
  probeOnlineMtp,
  (): Env => ({ nat: onlineMtpNative(), ctx: getDefaultContext(), bufs: [] }),
);

/** writePrefix shapes: the default (`scalar`) at several splits, plus the benchmark-only ones in a bench build. */
function wpShapes(nat: OnlineMtpNative): [string, number, number][] {
  const shipped: [string, number, number][] = [
    ["scalar auto", WRITE_PREFIX_VARIANT.scalar, 0],
    ["scalar split 1", WRITE_PREFIX_VARIANT.scalar, 1],
    ["scalar split 2", WRITE_PREFIX_VARIANT.scalar, 2],
    ["scalar split 8", WRITE_PREFIX_VARIANT.scalar, 8],
    ["scalar split 16", WRITE_PREFIX_VARIANT.scalar, 16],
  ];
  if (!hasBenchVariants({ onlineMtp: nat })) return shipped;
  return [
    ...shipped,
    ["legacy", WRITE_PREFIX_VARIANT.legacy, 0],
    ["vec auto", WRITE_PREFIX_VARIANT.vec, 0],
    ["vec split 1", WRITE_PREFIX_VARIANT.vec, 1],
    ["vec split 2", WRITE_PREFIX_VARIANT.vec, 2],
    ["vec split 16", WRITE_PREFIX_VARIANT.vec, 16],
    ["vecAccurate", WRITE_PREFIX_VARIANT.vecAccurate, 4],
  ];
}
/** The variants of a kernel this build holds: the default alone, or all of them in a bench build. */
function builtVariants<T>(nat: OnlineMtpNative, all: readonly T[], shipped: T): readonly T[] {
  return hasBenchVariants({ onlineMtp: nat }) ? all : [shipped];
}

describe("bench arguments (with a GPU context; test/online-mtp-keys.test.ts checks them without one)", () => {
  const common = { batch: 1, numVerify: 1, stateType: 0, graph: 0, rotate: 1, iters: 1, reps: 1 };
  const benchAddon = processBenchAddon();
  gpuTest("copyBytes must be an integer byte count; each op takes only its own variants", ({ gpu: env, skip }) => {
    if (!benchAddon.addon) return skip(benchAddon.reason);
    const nat = benchAddon.addon.onlineMtp;
    const bench = (args: Record<string, unknown>) => () => nat.bench(env.ctx, { ...common, ...args } as never);
    expect(bench({ op: "copy", copyBytes: 2.5 })).toThrow(
      /^copyBytes = 2.5: must be an integer in \[1, 17179869184\]$/,
    );
    expect(bench({ op: "copy" })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", field: "copyBytes" }));
    expect(bench({ op: "commit", variant: 3 })).toThrow(/^variant = 3: must be an integer in \[0, 2\]$/);
    if (nat.benchVariants)
      expect(bench({ op: "decode", variant: 2 })).toThrow(/^variant = 2: must be 0 \(legacy\), 1 \(vec\) or 3/);
    else
      for (const [op, variant] of [
        ["writePrefix", 1],
        ["commit", 0],
        ["decode", 0],
      ] as const)
        expect(bench({ op, variant }), `${op} ${variant}`).toThrow(
          expect.objectContaining({ code: "INVALID_ARGUMENT", field: "variant" }),
        );
  });
});

/** N request slots, bank stride O rows, 8 draft banks plus bank 0, `batch` requests. */
function bankGeometry(N: number, O: number, batch: number) {
  const Dmax = 8;
  return { N, O, Dmax, rows: O * (Dmax + 1), batch };
}

describe("GPU round trips", () => {
  for (const dtype of ["fp32", "bf16"] as const) {
    gpuTest(
      `writePrefix, every built variant, D 1..8, ${dtype}: banks = float64 fold; bank 0, skipped banks, padding rows untouched`,
      ({ gpu: env }) => {
        const { N, O, rows, batch } = bankGeometry(12, 14, 9);
        for (const D of [1, 2, 3, 4, 5, 6, 7, 8]) {
          for (const [name, variant, split] of wpShapes(env.nat)) {
            const rng = new Rng(100 + D * 7 + variant * 31 + split);
            const init = randomState(rng, rows);
            const st = stateBuf(env, init, dtype);
            const kv = randn(rng, batch * D * KVC);
            const ape = randn(rng, 128 * H, 0.5);
            const offs = [0, 1, 2, 63, 120, 126, 127, 5, 124];
            const seq = Int32Array.from({ length: batch }, (_, b) => 1024 + offs[b]!);
            seq[7] = -1; // padding row
            const rpi = Int32Array.from({ length: batch }, (_, b) => (b === 8 ? -1 : b + 1)); // row 8: padding slot
            env.nat.writePrefix(env.ctx, {
              kvScore: dev(env, kv),
              seqLens: dev(env, seq),
              reqPoolIndices: dev(env, rpi),
              ape: dev(env, ape),
              state: st.buf,
              batch,
              numVerify: D,
              bankStrideRows: O,
              numReqSlots: N,
              stateType: dtype === "fp32" ? 0 : 1,
              variant,
              split,
            });
            const { vals, bits } = readState(env, st.buf, rows, dtype);
            const want = Float32Array.from(st.host); // rows the kernel must leave alone keep their initial values
            const written = new Set<number>();
            for (let b = 0; b < batch; b++) {
              const S = seq[b]!,
                r = rpi[b]!;
              if (S < 0 || r < 0) continue;
              const start = S & 127;
              for (let d = 0; d < H; d++) {
                const c =
                  start !== 0
                    ? [st.host[r * ROW + d]!, st.host[r * ROW + H + d]!, st.host[r * ROW + 2 * H + d]!]
                    : [0, 0, 0];
                for (let i = 0; i < D; i++) {
                  const pos = (start + i) & 127;
                  step(c, kv[(b * D + i) * KVC + d]!, kv[(b * D + i) * KVC + H + d]! + ape[pos * H + d]!, pos);
                  if (((S + i + 1) & 127) !== 0) {
                    const row = r + (i + 1) * O;
                    written.add(row);
                    want[row * ROW + d] = c[0]!;
                    want[row * ROW + H + d] = c[1]!;
                    want[row * ROW + 2 * H + d] = c[2]!;
                  }
                }
              }
            }
            let bad = 0,
              untouchedBad = 0;
            const hostBits = dtype === "fp32" ? new Uint32Array(st.host.buffer) : Uint16Array.from(st.host, toBf16);
            for (let row = 0; row < rows; row++) {
              for (let e = 0; e < ROW; e++) {
                const i = row * ROW + e;
                if (written.has(row)) {
                  if (!close(vals[i]!, want[i]!, dtype)) bad++;
                } else {
                  if (bits[i] !== hostBits[i]) untouchedBad++;
                }
              }
            }
            expect(bad, `${name} D=${D}: written banks off the float64 fold`).toBe(0);
            expect(untouchedBad, `${name} D=${D}: rows that must stay untouched changed`).toBe(0);
          }
        }
      },
    );

    gpuTest(
      `commitPending, every variant, plain and fused with mark, ${dtype}: bitwise copy of bank a, markers`,
      ({ gpu: env }) => {
        const { N, O, Dmax, rows, batch } = bankGeometry(10, 12, 8);
        for (const [name, variant] of builtVariants(env.nat, Object.entries(COMMIT_VARIANT), [
          "regs",
          COMMIT_VARIANT.regs,
        ] as [string, number])) {
          for (const fused of [false, true]) {
            const rng = new Rng(7 + variant * 3 + (fused ? 1 : 0));
            const st = stateBuf(env, randomState(rng, rows), dtype);
            const before = readState(env, st.buf, rows, dtype).bits.slice();
            const S = Int32Array.of(1000, 1020, 126, 127, 300, 64, 90, 5); // pending per request row
            const pendHost = new Int32Array(N).fill(-1);
            const widHost = new Int32Array(N).fill(0);
            const rpi = Int32Array.of(1, 2, 3, 4, 5, -1, 7, 9);
            for (let b = 0; b < batch; b++) {
              const r = rpi[b]!;
              if (r < 0) continue;
              pendHost[r] = S[b]!;
              widHost[r] = 4;
            }
            pendHost[9] = -1; // request 9: no marker
            const cur = Int32Array.of(1003, 1020, 128, 131, 299, 65, 94, 10); // a = 3, 0, 2 (boundary), 4, <0, pad, 4, none
            const markSeq = Int32Array.from({ length: batch }, (_, b) => 2000 + b);
            const pend = dev(env, pendHost),
              wid = dev(env, widHost);
            env.nat.commitPending(env.ctx, {
              curSeqLens: dev(env, cur),
              reqPoolIndices: dev(env, rpi),
              pendingSeqLens: pend,
              pendingWidths: wid,
              state: st.buf,
              batch,
              maxDraftTokens: Dmax,
              clampWidth: 0,
              bankStrideRows: O,
              numReqSlots: N,
              consume: 1,
              markSeqLens: fused ? dev(env, markSeq) : null,
              markWidth: 3,
              stateType: dtype === "fp32" ? 0 : 1,
              variant,
            });
            const after = readState(env, st.buf, rows, dtype).bits;
            const expectBits = before.slice();
            const banks = [3, 0, 0, 4, 0, 0, 4, 0];
            rpi.forEach((r, b) => {
              if (r >= 0 && banks[b]! > 0)
                expectBits.copyWithin(r * ROW, (r + banks[b]! * O) * ROW, (r + banks[b]! * O + 1) * ROW);
            });
            expect(
              Array.from(after).every((v, i) => v === expectBits[i]),
              `${name} fused=${fused}: state`,
            ).toBe(true);
            const p = env.nat.copyToHost(env.ctx, pend, new Int32Array(N));
            const w = env.nat.copyToHost(env.ctx, wid, new Int32Array(N));
            const wantP = Int32Array.from(pendHost),
              wantW = Int32Array.from(widHost);
            rpi.forEach((r, b) => {
              if (r < 0) return;
              if (fused) {
                wantP[r] = markSeq[b]!;
                wantW[r] = 3;
              } else if (pendHost[r]! >= 0) {
                wantP[r] = -1;
                wantW[r] = 0;
              }
            });
            expect(Array.from(p), `${name} fused=${fused}: pending`).toEqual(Array.from(wantP));
            expect(Array.from(w), `${name} fused=${fused}: widths`).toEqual(Array.from(wantW));
          }
        }
      },
    );

    gpuTest(
      `decode, scalar (default; splits 1/2/16/auto), legacy and vec (splits 1/4/auto), ${dtype}: state and emitted entries = float64`,
      ({ gpu: env }) => {
        const N = 10,
          rows = N + 12,
          batch = 8;
        const decodeShapes = [
          [3, 0],
          [3, 1],
          [3, 2],
          [3, 16],
          [0, 0],
          [1, 1],
          [1, 4],
          [1, 0],
        ] as const;
        const shapes = hasBenchVariants({ onlineMtp: env.nat }) ? decodeShapes : decodeShapes.filter(([v]) => v === 3);
        for (const [variant, split] of shapes) {
          const rng = new Rng(55 + variant * 5 + split);
          const st = stateBuf(env, randomState(rng, rows), dtype);
          const kv = randn(rng, batch * KVC);
          const ape = randn(rng, 128 * H, 0.5);
          const L = Int32Array.of(1, 2, 128, 129, 64, 256, 0, 77); // includes pos 0, 127 (emit), L = 0 (skip)
          const rpi = Int32Array.of(1, 2, 3, 4, 5, 6, 7, -1);
          const out = createDeviceBuffer(batch * H * 4, env.ctx);
          env.bufs.push(out);
          env.nat.fill(env.ctx, out, 0);
          const off = 12; // slotOffsetRows: rows r + 12 <= 18 < rows
          env.nat.decode(env.ctx, {
            state: st.buf,
            kvScore: dev(env, kv),
            ape: dev(env, ape),
            seqLens: dev(env, L),
            reqPoolIndices: dev(env, rpi),
            out,
            batch,
            slotOffsetRows: off,
            numReqSlots: N,
            stateType: dtype === "fp32" ? 0 : 1,
            variant,
            split,
          });
          const { vals } = readState(env, st.buf, rows, dtype);
          const o = env.nat.copyToHost(env.ctx, out, new Float32Array(batch * H));
          let bad = 0;
          for (let b = 0; b < batch; b++) {
            const r = rpi[b]!,
              l = L[b]!;
            for (let d = 0; d < H; d++) {
              if (l <= 0 || r < 0) {
                if (o[b * H + d] !== 0) bad++;
                continue;
              }
              const row = r + off,
                pos = (l - 1) & 127;
              const c = [st.host[row * ROW + d]!, st.host[row * ROW + H + d]!, st.host[row * ROW + 2 * H + d]!];
              step(c, kv[b * KVC + d]!, kv[b * KVC + H + d]! + ape[pos * H + d]!, pos);
              if (pos === 127) {
                if (!close(o[b * H + d]!, c[2]!, "fp32")) bad++;
              } else {
                for (let j = 0; j < 3; j++) if (!close(vals[row * ROW + j * H + d]!, c[j]!, dtype)) bad++;
              }
            }
          }
          expect(bad, `decode variant ${variant} split ${split}`).toBe(0);
        }
      },
    );
  }

  gpuTest("out-of-range request / slot indices: reported in the error word, never written", ({ gpu: env }) => {
    const N = 4,
      O = 6,
      Dmax = 2,
      rows = O * (Dmax + 1);
    const rng = new Rng(9);
    const init = randomState(rng, rows);
    const st = stateBuf(env, init, "fp32");
    const err = createDeviceBuffer(16, env.ctx);
    env.bufs.push(err);
    const readErr = () => Array.from(env.nat.copyToHost(env.ctx, err, new Int32Array(4)));
    const clearErr = () => env.nat.fill(env.ctx, err, 0);
    /** Runs `launch` on a cleared error word; the word must then name row 1, the bad index and the kernel. */
    const expectReported = (label: string, code: number, bad: number, kernel: number, launch: () => void) => {
      clearErr();
      launch();
      expect(readErr(), label).toEqual([code, 1, bad, kernel]);
    };
    const kv = dev(env, randn(rng, 2 * 2 * KVC));
    const ape = dev(env, randn(rng, 128 * H));
    const seq = dev(env, Int32Array.of(1030, 1031));
    const pend = dev(env, Int32Array.of(-1, 1029, -1, -1)),
      wid = dev(env, Int32Array.of(0, 2, 0, 0));
    const out = createDeviceBuffer(2 * H * 4, env.ctx);
    env.bufs.push(out);
    for (const bad of [N, O, 1 << 30]) {
      const rpi = dev(env, Int32Array.of(1, bad));
      const wpArgs = {
        kvScore: kv,
        seqLens: seq,
        reqPoolIndices: rpi,
        ape,
        state: st.buf,
        batch: 2,
        numVerify: 2,
        bankStrideRows: O,
        numReqSlots: N,
        stateType: 0 as const,
      };
      const wpShapesReported = [
        [3, 0],
        [3, 16],
        [0, 0],
        [1, 0],
        [1, 8],
        [2, 2],
      ] as const;
      for (const [variant, split] of hasBenchVariants({ onlineMtp: env.nat })
        ? wpShapesReported
        : wpShapesReported.slice(0, 2)) {
        expectReported(
          `writePrefix variant ${variant}`,
          ONLINE_MTP_ERR.reqIndex,
          bad,
          ONLINE_MTP_KERNEL.writePrefix,
          () => env.nat.writePrefix(env.ctx, { ...wpArgs, variant, split, err }),
        );
      }
      for (const variant of builtVariants(env.nat, [0, 1, 2], COMMIT_VARIANT.regs)) {
        expectReported(`commit variant ${variant}`, ONLINE_MTP_ERR.reqIndex, bad, ONLINE_MTP_KERNEL.commitPending, () =>
          env.nat.commitPending(env.ctx, {
            curSeqLens: seq,
            reqPoolIndices: rpi,
            pendingSeqLens: pend,
            pendingWidths: wid,
            state: st.buf,
            batch: 2,
            maxDraftTokens: Dmax,
            clampWidth: 0,
            bankStrideRows: O,
            numReqSlots: N,
            consume: 0,
            stateType: 0,
            variant,
            err,
          }),
        );
      }
      for (const variant of builtVariants(env.nat, [0, 1, 3], WRITE_PREFIX_VARIANT.scalar)) {
        expectReported(`decode variant ${variant}`, ONLINE_MTP_ERR.reqIndex, bad, ONLINE_MTP_KERNEL.decode, () =>
          env.nat.decode(env.ctx, {
            state: st.buf,
            kvScore: kv,
            ape,
            seqLens: seq,
            reqPoolIndices: rpi,
            out,
            batch: 2,
            slotOffsetRows: 0,
            numReqSlots: N,
            stateType: 0,
            variant,
            err,
          }),
        );
      }
      expectReported("resetSlots", ONLINE_MTP_ERR.slotIndex, bad, ONLINE_MTP_KERNEL.resetSlots, () =>
        env.nat.resetSlots(env.ctx, {
          state: st.buf,
          slots: rpi,
          count: 2,
          bankStrideRows: O,
          maxDraftTokens: Dmax,
          numReqSlots: N,
          stateType: 0,
          err,
        }),
      );
      // without an error word: skipped silently
      env.nat.writePrefix(env.ctx, wpArgs);
    }
    // Only request 1's rows may have changed (banks 1, 2 by writePrefix; bank 0 by commit/reset/decode); every
    // other row, the padding rows N..O-1 of each bank included, keeps its bits.
    const { bits } = readState(env, st.buf, rows, "fp32");
    const initBits = new Uint32Array(init.buffer);
    for (let row = 0; row < rows; row++) {
      if (row % O === 1) continue;
      expect(
        bits.subarray(row * ROW, (row + 1) * ROW).every((v, i) => v === initBits[row * ROW + i]),
        `row ${row}`,
      ).toBe(true);
    }
  });

  gpuTest("copyToDevice / copyToHost / fill: stream-ordered round trip, offsets checked", ({ gpu: env }) => {
    const b = createDeviceBuffer(64, env.ctx);
    env.bufs.push(b);
    env.nat.fill(env.ctx, b, 0xab);
    env.nat.copyToDevice(env.ctx, b, Uint32Array.of(1, 2, 3, 4), 16);
    const out = env.nat.copyToHost(env.ctx, b, new Uint32Array(16));
    expect(out[0]).toBe(0xabababab);
    expect(Array.from(out.subarray(4, 8))).toEqual([1, 2, 3, 4]);
    expect(thrown(() => env.nat.copyToDevice(env.ctx, b, new Uint8Array(65))).message).toMatch(
      /^byteOffset = 0: must be an integer in \[0, buf\.byteLength − view\.byteLength\] = \[0, -1\]$/,
    );
    expect(thrown(() => env.nat.copyToHost(env.ctx, b, new Uint8Array(8), 60)).message).toMatch(
      /^byteOffset = 60: must be an integer in \[0, .*\] = \[0, 56\]$/,
    );
    expect(thrown(() => env.nat.fill(env.ctx, b, 256)).message).toMatch(
      /^byte = 256: must be an integer in \[0, 255\]$/,
    );
    for (const x of env.bufs) x.free();
    env.bufs.length = 0;
  });
});
