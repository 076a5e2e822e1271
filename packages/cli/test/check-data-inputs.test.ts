// `dsv4-kv check`'s inputs that arrive as data (a config file, a log, the pipeline's merged values): each refusal
// names the flag, the value and the rule.
import { closeSync, ftruncateSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODEL_PRESETS } from "@dsv4-kv/server-config";
import { describe, expect, test } from "vitest";
import { readAgainstLog } from "../src/check/against-log.js";
import { readConfigFile } from "../src/check/config-file.js";
import { runCheckPipeline } from "../src/check/pipeline.js";
import { InputError, UsageError } from "../src/commands/args.js";
import { MAX_INPUT_BYTES } from "../src/commands/input.js";

const model = MODEL_PRESETS["DeepSeek-V4-Flash"]!;

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("accepted");
}

describe("server arguments server-config's schema refuses", () => {
  test("name the flag and the value, and keep server-config's rule", () => {
    const values = { "speculative-adaptive-candidates": [] };
    const error = thrown(() => runCheckPipeline({ values, model, modelResolvedAs: "preset", ignored: [] }));
    expect(UsageError.isInstance(error)).toBe(true);
    expect((error as UsageError).toJSON()).toMatchObject({
      code: "USAGE",
      field: "--speculative-adaptive-candidates",
      rule: expect.stringMatching(/^server arguments refused: .*>=1/),
    });
    expect((error as UsageError).value).toEqual([]);
  });

  test("an empty list in a config file reaches them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-data-"));
    const path = join(dir, "server.json");
    writeFileSync(path, JSON.stringify({ speculative_adaptive_candidates: [] }));
    const { values, ignored } = await readConfigFile(path);
    const error = thrown(() => runCheckPipeline({ values, model, modelResolvedAs: "preset", ignored }));
    expect((error as UsageError).field).toBe("--speculative-adaptive-candidates");
  });
});

describe("--config and --against-log files are bounded like --input", () => {
  const bigFile = () => {
    const path = join(mkdtempSync(join(tmpdir(), "dsv4-big-")), "big.yaml");
    const fd = openSync(path, "w");
    ftruncateSync(fd, MAX_INPUT_BYTES + 1); // sparse: nothing of that size is written
    closeSync(fd);
    return path;
  };

  test.each([
    ["--config", readConfigFile],
    ["--against-log", readAgainstLog],
  ] as const)("%s: a file over the limit is refused before it is read", async (flag, read) => {
    const error = await read(bigFile()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(InputError.isInstance(error)).toBe(true);
    expect((error as InputError).toJSON()).toMatchObject({
      code: "INPUT",
      field: flag,
      params: { maxBytes: MAX_INPUT_BYTES, bytesSeen: MAX_INPUT_BYTES + 1 },
    });
  });

  test("a missing file names the flag and the errno", async () => {
    const error = await readConfigFile(join(tmpdir(), "dsv4-no-such-dir", "x.yaml")).catch((e: unknown) => e);
    expect((error as InputError).toJSON()).toMatchObject({
      code: "INPUT",
      field: "--config",
      params: { errno: "ENOENT" },
    });
  });
});

describe("a list of integers from data", () => {
  test('a config file\'s string "1,3,5" is not a list (no coercion)', async () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-data-"));
    const path = join(dir, "server.yaml");
    writeFileSync(path, "speculative-adaptive-candidates: '1,3,5'\n");
    const error = await readConfigFile(path).catch((e: unknown) => e);
    expect(InputError.isInstance(error)).toBe(true);
    expect((error as InputError).toJSON()).toMatchObject({
      field: "speculative-adaptive-candidates",
      value: "1,3,5",
      rule: expect.stringMatching(/^must be a list of integers \(in /),
    });
  });

  test("a config file's list is read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dsv4-data-"));
    const path = join(dir, "server.yaml");
    writeFileSync(path, "speculative-adaptive-candidates: [1, 3, 5]\n");
    expect((await readConfigFile(path)).values["speculative-adaptive-candidates"]).toEqual([1, 3, 5]);
  });
});
