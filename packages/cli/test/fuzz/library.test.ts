// The public library functions under hostile inputs. Each call either returns or throws a
// dsv4-kv error with a code (Dsv4KvError.isInstance): never a TypeError, a RangeError or a crash. Seeded and bounded
// in time (@dsv4-kv/vitest-preset/fuzz); a failure prints the seed and the shrunk input to replay it.
import { CpuCompressBackend, runCompressScenario, scenarioStateRows } from "@dsv4-kv/compress";
import { Dsv4KvError } from "@dsv4-kv/errors";
import { readPlanStatus, decodePlanStatus } from "@dsv4-kv/planner/gpu";
import { CpuBackend, OnlineMtpController, runSimulation } from "@dsv4-kv/online-mtp-controller";
import { planDecode, planDecodeLegacy, planPrefill, replayResidency, runResidencyScenario } from "@dsv4-kv/planner";
import {
  MODEL_PRESETS,
  checkServerConfig,
  modelFromConfigJson,
  parseCustomModel,
  parseServerArgs,
  parseSglangLog,
} from "@dsv4-kv/server-config";
import { presetConfigJson } from "@dsv4-kv/server-config/testing";
import fc from "fast-check";
import { describe, test } from "vitest";
import { fuzzParams, hostileValue, mutated, typedOrOk as typedOrOkBy } from "@dsv4-kv/vitest-preset/fuzz";

const typedOrOk = (fn: () => unknown) => typedOrOkBy(fn, (e): e is Dsv4KvError => Dsv4KvError.isInstance(e));

const FLASH = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
const prefill = { compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518, 9], extendLens: [6, 9] };
const decode = { compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [640, 3] };
const scenario = { compressRatio: 4, ringSize: 16, swaPageSize: 256, draftTokens: 3, steps: 20, seed: 1 };
const WORK = { steps: 40, draftTokens: 64, initialPrefill: 4096 } as const;

describe("fuzz: planner", () => {
  test("planPrefill, planDecode, planDecodeLegacy", () => {
    fc.assert(
      fc.property(mutated(prefill), mutated(decode), (p, d) => {
        typedOrOk(() => planPrefill(p as never));
        typedOrOk(() => planDecode(d as never));
        typedOrOk(() => planDecodeLegacy({ ...d, compressRatio: 128 } as never));
      }),
      fuzzParams(),
    );
  });
  test("runResidencyScenario and replayResidency", () => {
    const batch = fc.oneof(
      mutated({ kind: "prefill", tokens: 5 }, { tokens: 4096 }),
      mutated({ kind: "verify", draftTokens: 3, accept: 2 }),
      hostileValue,
    );
    fc.assert(
      fc.property(mutated(scenario, WORK), fc.array(batch, { maxLength: 5 }), (s, batches) => {
        typedOrOk(() => runResidencyScenario(s as never));
        typedOrOk(() => replayResidency({ ...scenario, ...s, steps: undefined } as never, batches as never));
      }),
      fuzzParams(),
    );
  });
});

describe("fuzz: server-config", () => {
  const args = parseServerArgs({});
  if (!args.ok) throw new Error("default args refused");
  const config = presetConfigJson(FLASH, "deepseek");
  test("parseServerArgs, parseCustomModel, modelFromConfigJson, parseSglangLog", () => {
    const logLine = fc.constantFrom(
      "server_args=ServerArgs(tp_size=8, model_path='x')",
      "DSV4 memory calculation: bytes_per_full_token=9259.9 max_total_num_tokens=",
      "[2026-01-01 TP0] max_total_num_tokens=123",
      "\u0000\r\n",
      "",
    );
    fc.assert(
      fc.property(
        mutated({ tpSize: 8, dpSize: 1, maxRunningRequests: 64, enableDpAttention: false }),
        mutated(config),
        fc.array(fc.oneof(logLine, fc.string({ maxLength: 40 })), { maxLength: 6 }),
        (a, c, lines) => {
          typedOrOk(() => parseServerArgs(a));
          typedOrOk(() => parseServerArgs(a, { fromFlags: true }));
          typedOrOk(() => parseCustomModel(c));
          typedOrOk(() => modelFromConfigJson(c));
          typedOrOk(() => parseSglangLog(lines.join("\n")));
        },
      ),
      fuzzParams(),
    );
  });
  test("checkServerConfig with mutated args, model and budget", () => {
    const budget = mutated({ kind: "bytes", kvBudgetBytes: 2 ** 34 });
    fc.assert(
      fc.property(
        mutated(args.args, { maxRunningRequests: 4096 }),
        mutated(FLASH as unknown as Record<string, unknown>),
        budget,
        (a, m, b) => {
          typedOrOk(() => checkServerConfig(a as never, m as never, b as never, { residencySteps: 5 }));
        },
      ),
      fuzzParams(),
    );
  });
});

describe("fuzz: online-mtp-controller and kernels-cuda's host readers", () => {
  const opts = { numReqSlots: 4, maxDraftTokens: 4, numDraftTokens: 4, numLayers: 1 };
  test("OnlineMtpController construction and prepareForward on the CPU backend", () => {
    const ints = fc.array(fc.integer({ min: -3, max: 9 }), { maxLength: 5 });
    const mode = fc.constantFrom("target_verify", "decode", "extend", "idle", "draft_extend", "bogus", 3);
    fc.assert(
      fc.property(mutated(opts, { numReqSlots: 64, numLayers: 4 }), mode, ints, ints, (o, m, rpi, seq) => {
        const backend = new CpuBackend();
        typedOrOk(() => {
          const c = new OnlineMtpController({ ...o, backend } as never);
          c.prepareForward(
            m as never,
            backend.uploadIndex(Int32Array.from(rpi)),
            backend.uploadIndex(Int32Array.from(seq)),
          );
        });
      }),
      fuzzParams(),
    );
  });
  test("runSimulation", () => {
    const sim = { requests: 3, steps: 5, draftTokens: 3, seed: 1 };
    fc.assert(
      fc.property(mutated(sim, { requests: 8, steps: 10 }), (s) => typedOrOk(() => runSimulation(s as never))),
      fuzzParams(1500),
    );
  });
  test("runCompressScenario on the CPU backends", () => {
    const opts = { compressRatio: 4, draftTokens: 3, steps: 3, requests: 2, seed: 1, headDim: 128, ringSize: 16 };
    const tame = { steps: 4, requests: 3, ringSize: 1024, swaPageSize: 1024, draftTokens: 16 };
    fc.assert(
      fc.property(mutated(opts, tame), (o) => {
        typedOrOk(() => {
          const stateRows = scenarioStateRows(o as never);
          const { compressRatio, headDim = 512, stateDtype = "fp32" } = o;
          const ring = new CpuCompressBackend({ compressRatio, headDim, stateDtype, stateRows } as never);
          runCompressScenario(o as never, ring, new CpuBackend());
        });
      }),
      fuzzParams(1500),
    );
  });
  test("decodePlanStatus and readPlanStatus", () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 13_000 }), hostileValue), (bytes) => {
        typedOrOk(() => decodePlanStatus(bytes as never));
        typedOrOk(() => readPlanStatus(bytes as never));
      }),
      fuzzParams(1500),
    );
  });
});
