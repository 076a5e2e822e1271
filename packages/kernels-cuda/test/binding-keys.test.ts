/**
 * The planner binding reads every params object through one key table per call (native/planner/binding.cpp
 * kPrefillKeys, kDecodeKeys), and so do the online-MTP and compress bindings (native/online_mtp/binding.cpp,
 * native/compress/binding.cpp: an integer table and a buffer table per call) and the bench build's entries
 * (native/bench/*_bench.cpp kBenchKeys); src/addon-types.ts types the same keys: the tables and the interfaces
 * must list the same keys, and the addon refuses what the table does not allow, naming the key (the online-MTP
 * refusals: test/online-mtp-keys.test.ts). The refusals need
 * the CUDA build (the cfg is read before the context, so no device is needed); they skip with a CPU-only addon.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { KernelsCudaError } from "../src/index.js";
import { loadNativeUnchecked } from "../src/testing.js";

const read = (rel: string) => readFileSync(new URL(`../${rel}`, import.meta.url), "utf8");
const binding = read("native/planner/binding.cpp");
const onlineBinding = read("native/online_mtp/binding.cpp");
const compressBinding = read("native/compress/binding.cpp");
// The bench entries' tables (bench build only).
const plannerBench = read("native/bench/planner_bench.cpp");
const onlineBench = read("native/bench/online_mtp_bench.cpp");
const compressBench = read("native/bench/compress_bench.cpp");
const types = read("src/addon-types.ts");

/** The keys of one C++ table (`const IntKey<T> name[] = { ... };`), the slot macro expanded. */
function tableKeys(name: string, source = binding): string[] {
  const body = new RegExp(`${name}\\[\\] = \\{([\\s\\S]*?)\\n\\};`).exec(source)?.[1] ?? "";
  // The macro's lines: the #define line and every line after one that ends in a backslash.
  const slotText = /#define DSV4KV_SLOT_KEYS\(T\)((?:.*\\\n)*.*)/.exec(binding)?.[1] ?? "";
  const expanded = body.replace(/DSV4KV_SLOT_KEYS\(\w+\)/, slotText);
  return [...expanded.matchAll(/\{"(\w+)",/g)].map((m) => m[1]!).sort();
}

/** The keys of one table of `source` (`kXKeys[] = { {"key", ...}, ... };` or `kXStringKeys[] = {"op"};`). */
function keysOfTable(source: string, name: string): string[] {
  const body = new RegExp(`\\b${name}\\[\\] = \\{([\\s\\S]*?)\\};`).exec(source)?.[1] ?? "";
  return [...body.replace(/\/\/.*$/gm, "").matchAll(/"(\w+)"/g)].map((m) => m[1]!);
}

/** The keys of one TS interface of `source` (addon-types.ts), its `extends` base included. */
function interfaceKeys(name: string, source = types): string[] {
  const m = new RegExp(`export interface ${name}(?: extends (\\w+))? \\{([\\s\\S]*?)\\n\\}`).exec(source);
  if (!m) return [];
  const own = [...m[2]!.matchAll(/^ {2}(\w+)\??:/gm)].map((k) => k[1]!);
  return [...own, ...(m[1] ? interfaceKeys(m[1], source) : [])].sort();
}

describe("the native key tables and addon-types.ts list the same keys", () => {
  test.each([
    ["kPrefillKeys", "PrefillPlanConfig"],
    ["kDecodeKeys", "DecodePlanConfig"],
    ["kBenchKeys", "PlanBenchOptions", plannerBench],
  ])("%s = %s", (table, iface, source = binding) => {
    const native = tableKeys(table, source);
    expect(native.length).toBeGreaterThan(2);
    expect(native).toEqual(interfaceKeys(iface));
  });
});

/** The rows of one device-buffer table (`kXDevBufs[] = {...}`), its row macros (`DSV4KV_DEV_*(P)`) expanded. */
function devBufKeys(name: string): { key: string; required: boolean }[] {
  const body = new RegExp(`${name}\\[\\] = \\{([\\s\\S]*?)\\n\\};`).exec(binding)?.[1] ?? "";
  const macros = new Map(
    [...binding.matchAll(/#define (DSV4KV_DEV_\w+)\(P\)((?:.*\\\n)*.*)/g)].map((m) => [m[1]!, m[2]!] as const),
  );
  const expanded = body.replace(/(DSV4KV_DEV_\w+)\(\w+\)/g, (_, macro: string) => macros.get(macro) ?? "");
  const rows = expanded.replace(/\\\n/g, " ").matchAll(/\{\s*"(\w+)",\s*(true|false),/g);
  return [...rows].map((m) => ({ key: m[1]!, required: m[2] === "true" }));
}
/** An interface's keys with whether each is required (no `?`), `Omit<Base, "k">` bases included. */
function interfaceFields(name: string): { key: string; required: boolean }[] {
  const m = new RegExp(`export interface ${name}(?: extends Omit<(\\w+), "(\\w+)">)? \\{([\\s\\S]*?)\\n\\}`).exec(
    types,
  );
  if (!m) return [];
  const own = [...m[3]!.matchAll(/^ {2}(\w+)(\??):/gm)].map((k) => ({ key: k[1]!, required: k[2] !== "?" }));
  const base = m[1] ? interfaceFields(m[1]).filter((f) => f.key !== m[2]) : [];
  return [...own, ...base];
}
const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);

describe("the planner's device-buffer tables and addon-types.ts list the same buffers", () => {
  test.each([
    ["kPrefillDevBufs", "PrefillPlanDeviceBuffers"],
    ["kDecodeDevBufs", "DecodePlanDeviceBuffers"],
  ])("%s = %s (keys and which are required)", (table, iface) => {
    const native = devBufKeys(table).sort(byKey);
    expect(native.length).toBeGreaterThan(5);
    expect(native).toEqual(interfaceFields(iface).sort(byKey));
  });
});

describe("the online-MTP key tables and addon-types.ts list the same keys", () => {
  // Each call: its integer table and the table of its other keys (DeviceBuffers; bench's string `op`).
  test.each([
    ["kWritePrefixKeys", "kWritePrefixBuffers", "WritePrefixArgs"],
    ["kMarkKeys", "kMarkBuffers", "MarkPendingArgs"],
    ["kCommitKeys", "kCommitBuffers", "CommitPendingArgs"],
    ["kResetKeys", "kResetBuffers", "ResetSlotsArgs"],
    ["kDecodeKeys", "kDecodeBuffers", "OnlineDecodeArgs"],
    ["kPrefillKeys", "kPrefillBuffers", "OnlinePrefillArgs"],
    ["kBenchKeys", "kBenchStringKeys", "OnlineMtpBenchArgs", onlineBench],
  ])("%s + %s = %s", (ints, others, iface, source = onlineBinding) => {
    const intKeys = keysOfTable(source, ints);
    const otherKeys = keysOfTable(source, others);
    expect(intKeys.length).toBeGreaterThan(1);
    expect(otherKeys.length).toBeGreaterThan(0);
    expect([...intKeys, ...otherKeys].sort()).toEqual(interfaceKeys(iface));
  });
});

describe("the compress key tables and addon-types.ts list the same keys", () => {
  // Each call: its integer table and its buffer table; bench adds its own keys to its op's (CompressBenchOptions).
  test.each([
    ["kPrefillKeys", "kPrefillBuffers", "CompressPrefillArgs"],
    ["kDecodeKeys", "kDecodeBuffers", "CompressDecodeArgs"],
    ["kBenchKeys", "kBenchStringKeys", "CompressBenchOptions", compressBench],
  ])("%s + %s = %s", (ints, others, iface, source = compressBinding) => {
    const intKeys = keysOfTable(source, ints);
    const otherKeys = keysOfTable(source, others);
    expect(intKeys.length).toBeGreaterThan(1);
    expect(otherKeys.length).toBeGreaterThan(0);
    expect([...intKeys, ...otherKeys].sort()).toEqual(interfaceKeys(iface));
  });
  test("a key added on either side is seen (so it breaks the equality above)", () => {
    const row = '{"stateType", &PrefillIn::stateType, 0, 1, true, 0},';
    const table = compressBinding.replace(row, `${row}\n    {"extra", &PrefillIn::stateType, 0, 1, true, 0},`);
    expect(keysOfTable(table, "kPrefillKeys")).toContain("extra");
    const head = "export interface CompressDecodeArgs {\n";
    const iface = types.replace(head, `${head}  extra?: number;\n`);
    expect(interfaceKeys("CompressDecodeArgs", iface)).toContain("extra");
    expect(interfaceKeys("CompressDecodeArgs")).not.toContain("extra");
  });
});

const addon = loadNativeUnchecked();
const cudaTest = addon?.compiledWithCuda ? test : test.skip;
const slot = { cr: 4, ring: 16, sps: 256, reqStyle: 0, legacy: 0, r2tStride: 2048, r2tRows: 1048575, f2sLen: 0 };
const prefillCfg = { ...slot, batch: 1, numQ: 1, pad: 0, tail: 1, hostRules: 0 };

/** What planPrefillDevice / planDecodeDevice throw for `cfg` (ctx is not a Context: reached only past the cfg). */
function refusal(kind: "prefill" | "decode", cfg: object): KernelsCudaError {
  const run = kind === "prefill" ? addon!.planPrefillDevice : addon!.planDecodeDevice;
  try {
    (run as (ctx: unknown, cfg: unknown, bufs: unknown) => void)({}, cfg, {});
  } catch (e) {
    if (KernelsCudaError.isInstance(e)) return e as KernelsCudaError;
    throw e;
  }
  throw new Error("the addon accepted the call");
}
const shape = (e: KernelsCudaError) => ({ code: e.code, field: e.field, suggestion: e.params.suggestion });

describe("the planner binding refuses params its tables do not allow", () => {
  cudaTest("a valid cfg passes the table (the refusal is the context's)", () => {
    expect(shape(refusal("prefill", prefillCfg))).toEqual({
      code: "INVALID_TYPE",
      field: "ctx",
      suggestion: undefined,
    });
  });
  cudaTest("an unknown key, with the closest key as the suggestion", () => {
    expect(shape(refusal("prefill", { ...prefillCfg, bach: 2 }))).toEqual({
      code: "UNKNOWN_KEY",
      field: "cfg.bach",
      suggestion: "batch",
    });
    expect(shape(refusal("prefill", { ...prefillCfg, zzzz: 1 }))).toEqual({
      code: "UNKNOWN_KEY",
      field: "cfg.zzzz",
      suggestion: undefined,
    });
  });
  cudaTest("a key of another call (prefill's numQ on decode)", () => {
    expect(shape(refusal("decode", { ...slot, batch: 1, numQ: 1 }))).toMatchObject({
      code: "UNKNOWN_KEY",
      field: "cfg.numQ",
    });
  });
  cudaTest("a required key that is absent", () => {
    const { batch: _, ...cfg } = prefillCfg;
    expect(shape(refusal("prefill", cfg))).toMatchObject({ code: "INVALID_ARGUMENT", field: "cfg.batch" });
  });
  cudaTest("a value that is not a number (no coercion)", () => {
    expect(shape(refusal("prefill", { ...prefillCfg, tail: true }))).toMatchObject({
      code: "INVALID_TYPE",
      field: "cfg.tail",
    });
    expect(shape(refusal("decode", { ...slot, batch: "1" }))).toMatchObject({
      code: "INVALID_TYPE",
      field: "cfg.batch",
    });
  });
  cudaTest("a value outside the key's range", () => {
    const e = refusal("prefill", { ...prefillCfg, numQ: 65536, batch: 1 });
    expect(shape(e)).toMatchObject({ code: "INVALID_ARGUMENT", field: "cfg.numQ" });
    expect(e.value).toBe(65536);
  });
  cudaTest("an optional key that is absent takes its default; given, it is checked", () => {
    expect(shape(refusal("decode", { ...slot, batch: 1 }))).toMatchObject({ code: "INVALID_TYPE", field: "ctx" });
    expect(shape(refusal("decode", { ...slot, batch: 1, lens64: 2 }))).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "cfg.lens64",
    });
  });
});
