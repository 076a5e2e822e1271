// `check --html` on the Node side: the page's escaping, the payload, and the page's pipeline giving the CLI's
// report for every kind of input (flags, --config, a pasted launch command, --model-config, a model folder,
// --against-log). The page itself is tested in Chromium (test/browser/check-page.test.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODEL_PRESETS, resolveModelName } from "@dsv4-kv/server-config";
import { afterAll, describe, expect, test } from "vitest";
import { runCheckPipeline } from "../src/check/pipeline.js";
import { toJson } from "../src/check/report.js";
import { InputError } from "../src/commands/args.js";
import { type CheckPayload, checkPayload, modelFromPayload } from "../src/report-html/check-payload.js";
import { pipelineInput } from "../src/report-html/page/check-state.js";
import { escapeJsonForHtml, escapeScriptForHtml, findPageBundle, renderWithBundle } from "../src/report-html/render.js";
import { cli } from "./cli-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4kv-report-html-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURES = join(import.meta.dirname, "fixtures");

/** `args` with dsv4-kv options added before a pasted launch command's `--`. */
function withOptions(args: readonly string[], ...options: string[]): string[] {
  const dash = args.indexOf("--");
  return dash < 0 ? [...args, ...options] : [...args.slice(0, dash), ...options, ...args.slice(dash)];
}

/** The payload a page holds (read back as the page reads it). */
function payloadOf(html: string): CheckPayload {
  const match = /<script type="application\/json" id="dsv4kv-data">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error("no payload element");
  return JSON.parse(match[1]!) as CheckPayload;
}

const tiny: CheckPayload = {
  kind: "check",
  inputs: {
    values: { model: "</script><script>alert(1)</script><!-- \u2028 & >" },
    model: { source: "preset", name: "DeepSeek-V4-Flash", resolvedAs: "preset DeepSeek-V4-Flash" },
    ignored: [],
    budget: { kind: "bytes", kvBudgetBytes: 1 },
  },
  report: { model: { name: "x</title><b>" } } as CheckPayload["report"],
};

describe("renderWithBundle", () => {
  test("the payload's text cannot end its element or open a comment, and reads back unchanged", () => {
    const html = renderWithBundle(tiny, "void 0;");
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).not.toContain("<!--");
    expect(payloadOf(html)).toEqual(tiny);
    expect(html).toContain("<title>dsv4-kv check: x&#60;/title&#62;&#60;b&#62;</title>");
  });

  test("the bundle's `</script` (any case) and `<!--` are escaped to the same characters", () => {
    const code = 'var a="</script>",b="</SCRIPT",c=/<!--x/;';
    const escaped = escapeScriptForHtml(code);
    expect(escaped).not.toMatch(/<\/script|<!--/i);
    // The escaped code means the same strings and pattern.
    const run = new Function(`${escaped}; return [a, b, c.source];`) as () => string[];
    expect(run()).toEqual(["</script>", "</SCRIPT", "<\\u0021--x"]);
    expect(new RegExp(run()[2]!).test("<!--x")).toBe(true);
    const html = renderWithBundle(tiny, code);
    expect(html.match(/<\/script/gi)).toHaveLength(2);
  });

  test("JSON escaping keeps JSON.parse's value", () => {
    const value = { s: "<>&\u2028\u2029</script>" };
    const text = escapeJsonForHtml(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  test("nothing in the page is fetched: no src, href, link or import", () => {
    const html = renderWithBundle(tiny, "void 0;");
    expect(html).not.toMatch(/\s(src|href)=|<link|@import|url\(/i);
  });

  test("a missing bundle is an InputError naming --html that says to build the CLI", () => {
    let caught: unknown;
    try {
      findPageBundle(["./no-such-bundle.js"]);
    } catch (error) {
      caught = error;
    }
    expect(InputError.isInstance(caught)).toBe(true);
    expect(caught).toMatchObject({ code: "INPUT", field: "--html" });
    expect((caught as InputError).rule).toContain("build the CLI");
  });
});

describe("the payload", () => {
  const report = {} as CheckPayload["report"];
  const budget = { kind: "bytes", kvBudgetBytes: 1 } as const;

  test("keeps the settings and drops the file and output flags", () => {
    const p = checkPayload({
      values: { "tp-size": 4, config: "a.yaml", html: "r.html", json: true, "against-log": "x.log", sizing: "exact" },
      model: MODEL_PRESETS["DeepSeek-V4-Pro"]!,
      modelResolvedAs: "preset DeepSeek-V4-Pro",
      ignored: [],
      budget,
      report,
    });
    expect(p.inputs.values).toEqual({ "tp-size": 4, sizing: "exact" });
    expect(p.inputs.model).toEqual({ source: "preset", name: "DeepSeek-V4-Pro", resolvedAs: "preset DeepSeek-V4-Pro" });
    expect(modelFromPayload(p.inputs.model).model).toBe(MODEL_PRESETS["DeepSeek-V4-Pro"]);
  });

  test("a name resolves to the preset object itself, so the page needs only the name", () => {
    const match = resolveModelName("deepseek-ai/DeepSeek-V4-Flash-FP8", "--model");
    expect(match.preset).toBe(MODEL_PRESETS["DeepSeek-V4-Flash"]);
  });

  test("a custom model travels whole, a missing checkpoint size as null (JSON has no NaN)", () => {
    const custom = { ...MODEL_PRESETS["DeepSeek-V4-Flash"]!, name: "mine", checkpointGiB: Number.NaN };
    const p = checkPayload({ values: {}, model: custom, modelResolvedAs: "m.json", ignored: [], budget, report });
    const back = JSON.parse(JSON.stringify(p)) as CheckPayload;
    expect(back.inputs.model).toMatchObject({ source: "custom", model: { name: "mine", checkpointGiB: null } });
    const { model } = modelFromPayload(back.inputs.model);
    expect(model).toEqual(custom);
  });
});

describe("the page's pipeline gives the CLI's report for every kind of input", () => {
  const config = join(dir, "server.yaml");
  writeFileSync(config, "tp-size: 4\nspeculative-num-draft-tokens: 6\n");
  const cases: Array<[string, string[]]> = [
    ["the default run", []],
    ["flags (invalid: 11 draft tokens)", ["--speculative-num-draft-tokens", "11", "--tp-size", "4"]],
    ["--config", ["--config", config]],
    [
      "a custom model from --model-config",
      ["--model-config", join(FIXTURES, "models/small-dsv4/config.json"), "--kv-budget-bytes", "20000000000"],
    ],
    ["a model folder", ["--model", join(FIXTURES, "models/flash-deepseek-layout")]],
    ["--against-log", ["--against-log", join(FIXTURES, "logs/gen-b-tp8.log")]],
    [
      "a pasted launch command with an env switch",
      [
        "--",
        "SGLANG_OPT_USE_ONLINE_COMPRESS=1",
        "sglang",
        "serve",
        "--model-path",
        "deepseek-ai/DeepSeek-V4-Flash",
        "--tp",
        "4",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-num-draft-tokens",
        "4",
        "--online-c128-mtp",
      ],
    ],
  ];
  test.each(cases)("%s", (_, args) => {
    const path = join(dir, `${cases.findIndex(([name]) => name === _)}.html`);
    const plain = cli(["check", ...withOptions(args, "--json")]);
    const both = cli(["check", ...withOptions(args, "--json", "--html", path)]);
    // --html changes neither stdout nor the exit code
    expect(both.stdout).toBe(plain.stdout);
    expect(both.code).toBe(plain.code);
    const payload = payloadOf(readFileSync(path, "utf8"));
    const { logComparison, sections: _sections, ...cliJson } = JSON.parse(plain.stdout) as CheckPayload["report"];
    expect(payload.report).toEqual(JSON.parse(plain.stdout));
    expect(toJson(runCheckPipeline(pipelineInput(payload, {})).report)).toEqual(cliJson);
    expect(logComparison === undefined).toBe(!args.includes("--against-log"));
  });

  test("the terminal report is still printed with --html", () => {
    const path = join(dir, "text.html");
    const withHtml = cli(["check", "--speculative-num-draft-tokens", "11", "--html", path]);
    const without = cli(["check", "--speculative-num-draft-tokens", "11"]);
    expect(withHtml.stdout).toBe(without.stdout);
    expect(withHtml.stderr).toBe(without.stderr);
    expect(withHtml.code).toBe(1);
  });

  test("an unwritable --html path is refused by name (exit 2)", () => {
    for (const path of [join(dir, "no-such-folder", "r.html"), dir]) {
      const r = cli(["check", "--html", path]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--html = ${JSON.stringify(path)}: cannot be written`);
    }
  });
});
