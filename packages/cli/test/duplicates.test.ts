// A setting given twice is refused naming both (never one taken silently), and a replay file
// refuses a missing field. Every case ran on the parent commit with the first value or the last one taken.
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODEL_PRESETS } from "@dsv4-kv/server-config";
import { presetConfigJson } from "@dsv4-kv/server-config/testing";
import { describe, expect, test } from "vitest";
import { DuplicateKeyError, lineColumn, rejectDuplicateKeys, scanJsonKeys } from "../src/commands/json-keys.js";
import { cli } from "./cli-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4-dup-"));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("rejectDuplicateKeys: one scan for every JSON reader", () => {
  test("names the key, the object and both places", () => {
    const text = '{"a": 1, "b": {"c": [1, {"d": 2, "d": 3}]}}';
    let error: unknown;
    try {
      rejectDuplicateKeys("--input", "x.json", text);
    } catch (e) {
      error = e;
    }
    expect(DuplicateKeyError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "DUPLICATE_KEY",
      field: "--input",
      value: "x.json",
      params: { key: "d", objectPath: "$.b.c[1]", first: { line: 1, column: 26 }, second: { line: 1, column: 34 } },
    });
  });
  test("compares decoded keys (an escape spells the same key) and keeps objects apart", () => {
    expect(() => rejectDuplicateKeys("f", undefined, '{"ab": 1, "a\\u0062": 2}')).toThrow(/"ab" twice in \$/);
    expect(() => rejectDuplicateKeys("f", undefined, '[{"a": 1}, {"a": 2}, {"b": {"a": 3}}]')).not.toThrow();
    expect(() => rejectDuplicateKeys("f", undefined, '{"s": "{\\"a\\": 1, \\"a\\": 2}", "t": "]"}')).not.toThrow();
    expect(() => rejectDuplicateKeys("f", undefined, '{"x y": {"k": 1, "k": 2}}')).toThrow(/\$\["x y"\]/);
  });
  test("scanJsonKeys reports depth and offsets; lineColumn is 1-based", () => {
    const keys: string[] = [];
    scanJsonKeys('{"a": {"b": 1},\n "c": 2}', (k) => {
      keys.push(`${k.key}@${k.depth}:${lineColumn('{"a": {"b": 1},\n "c": 2}', k.offset).line}`);
      return false;
    });
    expect(keys).toEqual(["a@1:1", "b@2:1", "c@1:2"]);
  });
});

describe("a JSON key given twice is refused by every JSON input", () => {
  test("plan input (stdin and --input)", () => {
    const text =
      '{"kind": "decode", "compressRatio": 128, "ringSize": 256, "swaPageSize": 256, "seqLens": [640], "seqLens": [64]}';
    for (const r of [cli(["plan"], text), cli(["plan", "--input", file("plan.json", text)])]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /gives the key "seqLens" twice in \$ \(at line 1, column \d+ and at line 1, column \d+\)/,
      );
    }
  });
  test("a model config.json (--model-config, --model-path)", () => {
    const config = JSON.stringify(presetConfigJson(MODEL_PRESETS["DeepSeek-V4-Flash"]!, "deepseek"), null, 1);
    const twice = config.replace('"head_dim": 512,', '"head_dim": 512,\n "head_dim": 256,');
    expect(twice).not.toBe(config);
    const model = file("model.json", twice);
    const r = cli(["check", "--model-config", model]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--model-config = ".*model\.json": gives the key "head_dim" twice/);
    const ckpt = join(dir, "ckpt");
    mkdirSync(ckpt);
    writeFileSync(join(ckpt, "config.json"), twice);
    const p = cli(["check", "--model-path", ckpt]);
    expect(p.code).toBe(2);
    expect(p.stderr).toMatch(/gives the key "head_dim" twice in \$/);
  });
  test("a replay file", () => {
    const r = cli(["simulate", "residency", "--replay", file("replay.json", '{"ring": {}, "ring": {}}')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/gives the key "ring" twice/);
  });
});

describe("--config: one flag in two spellings SGLang refuses is refused naming both", () => {
  test.each([
    ["tp-size: 8\ntp_size: 1\n", "tp_size", /sets --tp-size again \(tp-size: 8 on line 1 and tp_size: 1 on line 2/],
    [
      "speculative-num-draft-tokens: 4\nspeculative_num_draft_tokens: 11\n",
      "speculative_num_draft_tokens",
      /speculative-num-draft-tokens: 4 on line 1 and speculative_num_draft_tokens: 11 on line 2/,
    ],
    // SGLang's argparse knows no snake_case spelling: `tp_size` in its YAML is an unrecognised argument (D35).
    ["tp_size: 1\ntensor-parallel-size: 4\n", "tensor-parallel-size", /sets --tp-size again \(tp_size: 1 on line 1/],
    ["tp-size: None\ntp_size: 4\n", "tp_size", /tp-size: "None" on line 1 and tp_size: 4 on line 2/],
  ])("%j", (yaml, field, message) => {
    const r = cli(["check", "--config", file(`c${field.length}${yaml.length}.yaml`, yaml)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`${field} = `));
    expect(r.stderr).toMatch(message);
  });
  test("in a JSON config file, across spellings and for the same key", () => {
    const a = cli(["check", "--config", file("c.json", '{"tp-size": 8, "tp_size": 1}')]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/sets --tp-size again \(tp-size: 8 on line 1 and tp_size: 1 on line 1/);
    const b = cli(["check", "--config", file("d.json", '{"tp-size": 8,\n"tp-size": 1}')]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/gives the key "tp-size" twice in \$ \(at line 1, column 2 and at line 2, column 1\)/);
  });
  test("a file giving each flag once still runs, with --json", () => {
    const r = cli(["check", "--config", file("ok.yaml", "tp-size: 8\nspeculative_num_draft_tokens: 4\n"), "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).args.tpSize).toBe(8);
  });
});

// D35: where SGLang's loader takes one of two settings, the check takes the same one and the report says so
// (text, --json `overridden`, --html). Each case was refused with DUPLICATE_KEY, or silent, on the parent commit.
describe("--config: a setting SGLang's loader accepts twice is taken as SGLang takes it, and reported", () => {
  const run = (yaml: string, extra: string[] = []) => {
    const path = file(`ok${yaml.length}-${extra.length}.yaml`, yaml);
    return {
      json: cli(["check", "--config", path, ...extra, "--json"]),
      text: cli(["check", "--config", path, ...extra]),
    };
  };
  test("(a) one YAML key twice: PyYAML keeps the last value", () => {
    const { json, text } = run("tp-size: 8\ntp-size: 4\n");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.args.tpSize).toBe(4);
    expect(report.overridden).toEqual([
      {
        flag: "--tp-size",
        won: { source: "config", name: "tp-size", value: 4, line: 2 },
        lost: [{ source: "config", name: "tp-size", value: 8, line: 1 }],
        rule: "yaml-repeated-key",
      },
    ]);
    expect(text.stdout).toContain(
      "Given more than once (the one SGLang takes wins):\n  --tp-size: tp-size 4 (line 2) wins over tp-size 8 (line 1): " +
        "a YAML key given twice keeps its last value\n",
    );
  });
  test("(b) two of SGLang's own spellings: the later in the file wins", () => {
    const { json, text } = run("tp: 2\ntensor-parallel-size: 4\n");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.args.tpSize).toBe(4);
    expect(report.overridden[0]).toMatchObject({
      flag: "--tp-size",
      won: { name: "tensor-parallel-size", value: 4, line: 2 },
      lost: [{ name: "tp", value: 2, line: 1 }],
      rule: "later-spelling",
    });
    expect(text.stdout).toMatch(
      /--tp-size: tensor-parallel-size 4 \(line 2\) wins over tp 2 \(line 1\): two spellings/,
    );
  });
  test("(a)+(b): a repeated key keeps its first place, so a spelling between them wins", () => {
    // PyYAML's dict: {tp-size: 4, tensor-parallel-size: 2}; argparse sees --tp-size 4 --tensor-parallel-size 2.
    const { json } = run("tp-size: 8\ntensor-parallel-size: 2\ntp-size: 4\n");
    const report = JSON.parse(json.stdout);
    expect(report.args.tpSize).toBe(2);
    expect(report.overridden.map((o: { rule: string }) => o.rule)).toEqual(["yaml-repeated-key", "later-spelling"]);
  });
  test("(c) a config value and a command-line flag: the flag wins, and the report says so", () => {
    const { json, text } = run("tp-size: 8\nspeculative-num-draft-tokens: 4\n", ["--tp", "4"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.args.tpSize).toBe(4);
    expect(report.overridden).toEqual([
      {
        flag: "--tp-size",
        won: { source: "flag", name: "--tp", value: 4, line: null },
        lost: [{ source: "config", name: "tp-size", value: 8, line: 1 }],
        rule: "flag-over-config",
      },
    ]);
    expect(text.stdout).toContain(
      "  --tp-size: --tp 4 wins over tp-size 8 (line 1): a command-line flag wins over --config",
    );
  });
  test("--html lists them; a run with nothing given twice has no `overridden` field", () => {
    const html = join(dir, "over.html");
    const r = cli(["check", "--config", file("over.yaml", "tp-size: 8\ntp-size: 4\n"), "--html", html]);
    expect(r.code).toBe(0);
    const page = readFileSync(html, "utf8");
    expect(page).toContain('"overridden":[{"flag":"--tp-size"');
    const plain = JSON.parse(cli(["check", "--config", file("once.yaml", "tp-size: 8\n"), "--json"]).stdout);
    expect(plain).not.toHaveProperty("overridden");
  });
});

describe("SGLang's own documented config file (test/fixtures/configs, verbatim)", () => {
  const docs = new URL("./fixtures/configs/sglang-docs-config.yaml", import.meta.url).pathname;
  test("flags over the file as SGLang documents: --model over model-path, --tp over tensor-parallel-size", () => {
    const r = cli(["check", "--config", docs, "--model", "DeepSeek-V4-Flash", "--tp", "8", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.args.tpSize).toBe(8);
    expect(report.overridden.map((o: { flag: string; rule: string }) => `${o.flag} ${o.rule}`)).toEqual([
      "--model flag-over-config",
      "--tp-size flag-over-config",
    ]);
    expect(report.ignored.map((i: { name: string }) => i.name)).toEqual([
      "host",
      "port",
      "enable-metrics",
      "log-requests",
    ]);
  });
  test("the same file with a line appended that sets the TP size again: the appended one wins", () => {
    const twice = file("docs-twice.yaml", `${readFileSync(docs, "utf8")}tensor-parallel-size: 8\n`);
    const r = cli(["check", "--config", twice, "--model", "DeepSeek-V4-Flash", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.args.tpSize).toBe(8);
    expect(report.overridden).toContainEqual({
      flag: "--tp-size",
      won: { source: "config", name: "tensor-parallel-size", value: 8, line: 7 },
      lost: [{ source: "config", name: "tensor-parallel-size", value: 2, line: 4 }],
      rule: "yaml-repeated-key",
    });
  });
});

describe("--replay refuses a file with a field missing or mistyped", () => {
  const proof = cli([
    "prove",
    "residency",
    "--ratio",
    "4",
    "--ring",
    "16",
    "--swa-page",
    "256",
    "--draft-tokens",
    "12",
    "--json",
  ]);
  const doc = JSON.parse(proof.stdout) as Record<string, unknown>;
  test.each([
    [
      "writePad",
      (d: Record<string, unknown>) => delete d.writePad,
      /has no writePad \(a prove residency --json file gives it as a number\)/,
    ],
    [
      "ring.swaPageSize",
      (d: Record<string, unknown>) => delete (d.ring as Record<string, unknown>).swaPageSize,
      /has no ring\.swaPageSize/,
    ],
    [
      "ring.useReqRing",
      (d: Record<string, unknown>) => ((d.ring as Record<string, unknown>).useReqRing = "no"),
      /has a string ring\.useReqRing/,
    ],
    [
      "counterexample.batches",
      (d: Record<string, unknown>) => delete (d.counterexample as Record<string, unknown>).batches,
      /has no counterexample\.batches/,
    ],
  ])("%s", (name, cut, message) => {
    const copy = structuredClone(doc);
    cut(copy);
    const r = cli(["simulate", "residency", "--replay", file(`replay-${name}.json`, JSON.stringify(copy))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
  test("the whole file still replays its violation", () => {
    const r = cli(["simulate", "residency", "--replay", file("replay-whole.json", proof.stdout)]);
    expect(r.stdout).toMatch(/result: step \d+/);
  });
});
