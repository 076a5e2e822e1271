// The CLI's flag and file inputs under hostile values, run in process through main(). Every run
// must end with exit 0, 1 or 2, and a refusal must be a dsv4-kv error (the CLI prints "internal error" for anything
// else). Seeded and bounded in time (@dsv4-kv/vitest-preset/fuzz); work-size flags keep valid values small (the fuzz looks for
// crashes, not for long runs, which point 2 of the issue bounds).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { MODEL_PRESETS } from "@dsv4-kv/server-config";
import { presetConfigJson } from "@dsv4-kv/server-config/testing";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import type { FlagSpec } from "../../src/commands/flags.js";
import { COMMANDS, type CommandIO } from "../../src/commands/registry.js";
import { main } from "../../src/main.js";
import { fuzzParams, hostileValue, mutated } from "@dsv4-kv/vitest-preset/fuzz";

const dir = mkdtempSync(join(tmpdir(), "dsv4-fuzz-"));
let fileCount = 0;
function file(ext: string, text: string | Uint8Array): string {
  const path = join(dir, `f${fileCount++}.${ext}`);
  writeFileSync(path, text);
  return path;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], stdin = ""): Promise<Run> {
  const out = { stdout: "", stderr: "" };
  const sink = (key: "stdout" | "stderr") => ({
    write: (chunk: string) => {
      if (out[key].length < 100_000) out[key] += chunk;
      return true;
    },
  });
  const io: CommandIO = { stdout: sink("stdout"), stderr: sink("stderr"), stdin: Readable.from([stdin]), env: {} };
  const code = await main(argv, io);
  return { code, ...out };
}

/** The run ended with one of the command's documented exit codes (its spec's table) and no internal error. */
function expectHandled(r: Run, argv: string[], exitCodes: readonly number[] = [0, 1, 2]): void {
  const where = `dsv4-kv ${argv.join(" ")}\n${r.stderr.slice(0, 2000)}`;
  expect(exitCodes, where).toContain(r.code);
  expect(r.stderr, where).not.toMatch(/internal error/);
}

/** Text as it reaches a flag: a hostile value written as a word. */
const hostileWord = hostileValue.map((v) => (typeof v === "string" ? v : (JSON.stringify(v) ?? "undefined")));
const FILE_FLAGS = new Set(["input", "config", "model-config", "against-log", "replay", "model-path"]);

/** Files the file flags name in one run: mutations of real inputs, and plain garbage. */
function inputFiles(): fc.Arbitrary<string[]> {
  const flash = MODEL_PRESETS["DeepSeek-V4-Flash"]!;
  const plan = mutated({
    kind: "prefill",
    compressRatio: 4,
    ringSize: 16,
    swaPageSize: 256,
    seqLens: [518],
    extendLens: [6],
  });
  const configFile = fc
    .dictionary(
      fc.constantFrom(
        "tp-size",
        "tp_size",
        "tp",
        "dp-size",
        "enable-dp-attention",
        "kv-budget-bytes",
        "speculative-num-draft-tokens",
        "context_length",
        "bogus",
      ),
      hostileValue,
      { maxKeys: 4 },
    )
    .map((o) =>
      JSON.parse(JSON.stringify(o, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v)) ?? "{}"),
    );
  const model = mutated(presetConfigJson(flash, "deepseek"));
  const replay = mutated({
    ring: { compressRatio: 4, ringSize: 16, swaPageSize: 256, useReqRing: false },
    writePad: 10,
    counterexample: {
      batches: [
        { kind: "prefill", tokens: 2 },
        { kind: "verify", draftTokens: 12, accept: 1 },
      ],
    },
  });
  const json = (v: unknown) => JSON.stringify(v, (_k, x) => (x === undefined ? null : x)) ?? "null";
  return fc
    .tuple(
      plan,
      configFile,
      fc.boolean(),
      model,
      replay,
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ maxLength: 80 }),
    )
    .map(([p, c, yaml, m, r, bytes, text]) => [
      file("json", json(p)),
      file(yaml ? "yaml" : "json", yaml ? stringify(c) : json(c)),
      file("json", json(m)),
      file("json", json(r)),
      file("bin", bytes),
      file("log", text),
    ]);
}

/** One flag of `spec` as words: valid small values, boundary values, hostile words, `--flag=value` forms. */
function flagWords(name: string, spec: FlagSpec, files: readonly string[], cap: number): fc.Arbitrary<string[]> {
  const flag = `--${name}`;
  const withValue = (value: fc.Arbitrary<string>) =>
    fc.tuple(value, fc.boolean()).map(([v, eq]) => (eq ? [`${flag}=${v}`] : [flag, v]));
  if (spec.type === "bool") return fc.constantFrom([flag], [`${flag}=true`], [`${flag}=1`]);
  // An output file (--html) is always under the fuzz directory: a hostile word names a file there, never in the cwd.
  if (name === "html") {
    const named = hostileWord.map((w) => join(dir, `h-${encodeURIComponent(w)}`));
    return withValue(fc.oneof(fc.constantFrom(join(dir, "out.html"), dir, join(dir, "no", "such.html")), named));
  }
  if (FILE_FLAGS.has(name))
    return withValue(fc.oneof(fc.constantFrom(...files, join(dir, "missing.json")), hostileWord));
  if (spec.type === "int") {
    const hi = Math.min(spec.max, Math.max(spec.min, cap));
    return withValue(fc.oneof(fc.integer({ min: spec.min, max: hi }).map(String), hostileWord));
  }
  if (spec.type === "number")
    return withValue(
      fc.oneof(fc.double({ min: spec.min, max: Math.min(spec.max, 1e6), noNaN: true }).map(String), hostileWord),
    );
  if (spec.type === "intList")
    return withValue(fc.array(fc.integer({ min: -2, max: 12 }), { maxLength: 4 }).map((a) => a.join(",")));
  return withValue(
    fc.oneof(spec.choices ? fc.constantFrom(...spec.choices) : fc.string({ maxLength: 8 }), hostileWord),
  );
}

/** A pasted launch command after `--`, with real flags, hostile values and stray words. */
const launch = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "--tp",
        "--tp-size",
        "--dp",
        "--enable-dp-attention",
        "--speculative-algorithm",
        "EAGLE",
        "--model-path",
        "\\",
        "\r",
        "SGLANG_OPT_USE_ONLINE_COMPRESS=1",
      ),
      hostileWord,
    ),
    { maxLength: 8 },
  )
  .map((words) => ["--", "python3", "-m", "sglang.launch_server", ...words]);

/** Commands whose work grows with their numbers keep valid numbers at most this (prove is exponential in them). */
const WORK_CAP: Record<string, number> = { check: 2 ** 31, "prove residency": 12 };

async function commandArgv(path: readonly string[]) {
  const entry = COMMANDS.find((c) => c.path.join(" ") === path.join(" "))!;
  const { spec } = await entry.load();
  const cap = WORK_CAP[path.join(" ")] ?? 64;
  const exitCodes = spec.exitCodes.map(([code]) => code);
  // check's work-size flag: the residency run's steps.
  const table = Object.entries(spec.flags).filter(([name]) => name !== "help");
  const argvOf = (files: readonly string[]) =>
    fc
      .subarray(table, { maxLength: Math.min(6, table.length) })
      .chain((chosen) =>
        fc.tuple(
          ...chosen.map(([name, s]) => flagWords(name, s, files, name === "residency-steps" ? 64 : cap)),
          fc.option(fc.constantFrom("--bogus-flag", "positional", "-x", "--", ""), { nil: undefined }),
        ),
      )
      .map((parts) => parts.flatMap((p) => (p === undefined ? [] : Array.isArray(p) ? p : [p])));
  return { argvOf, exitCodes };
}

const COMMAND_PATHS = COMMANDS.map((c) => c.path);

describe("fuzz: every command's flags and file inputs", () => {
  test.each(COMMAND_PATHS.map((p) => [p.join(" "), p] as const))(
    "%s",
    async (_name, path) => {
      const { argvOf, exitCodes } = await commandArgv(path);
      const withLaunch = path[0] === "check";
      await fc.assert(
        fc.asyncProperty(
          inputFiles().chain((files) =>
            fc.tuple(fc.constant(files), argvOf(files), withLaunch ? fc.option(launch) : fc.constant(null)),
          ),
          async ([files, argv, pasted]) => {
            const full = [...path, ...argv, ...(pasted ?? [])];
            expectHandled(
              await run(full, path[0] === "plan" ? (files[0] ? String(files[0]) : "") : ""),
              full,
              exitCodes,
            );
          },
        ),
        fuzzParams(),
      );
    },
    120_000,
  );
  test("plan reads hostile JSON cases from stdin", async () => {
    const cases = fc.oneof(
      mutated({ kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] }),
      mutated({ kind: "decode", compressRatio: 128, ringSize: 256, swaPageSize: 256, seqLens: [640] }),
      hostileValue,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(cases, fc.array(cases, { maxLength: 3 })),
        fc.string({ maxLength: 4 }),
        async (c, tail) => {
          const text = (JSON.stringify(c) ?? "null") + (tail.trim() === "" ? "" : tail);
          expectHandled(await run(["plan"], text), ["plan", "<", text.slice(0, 200)]);
        },
      ),
      fuzzParams(),
    );
  });
});
