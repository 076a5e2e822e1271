// The command line's ergonomics end to end (the built dist/bin.js): help for every command and group, version,
// typo suggestions, negative values, the pnpm script separator, and colour (FORCE_COLOR / NO_COLOR, never JSON).
import { describe, expect, test } from "vitest";
import { COLOUR_PAINT, colourEnabled, paintFor } from "../src/colour.js";
import { cli } from "./cli-helpers.js";

const ESC = "\x1b[";
const COMMANDS = [
  "plan",
  "check",
  "simulate residency",
  "prove residency",
  "simulate online-mtp",
  "simulate compress",
].map((name) => ({
  name,
  path: name.split(" "),
}));
const PROVE_C4 = ["prove", "residency", "--ratio", "4", "--ring", "16", "--swa-page", "256", "--req-ring"];

describe("help", () => {
  test.each(COMMANDS)("`help $name` prints the same help as `--help`, with its options and exit codes", ({ path }) => {
    const viaHelp = cli(["help", ...path]);
    const viaFlag = cli([...path, "--help"]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: dsv4-kv ${path.join(" ")} `));
    expect(viaHelp.stdout).toMatch(/\nOptions:\n {2}--/);
    expect(viaHelp.stdout).toMatch(/\nExit codes: 0 /);
    expect(cli([...path, "-h"]).stdout).toBe(viaFlag.stdout);
  });

  test.each([
    { group: "simulate", subcommands: ["residency", "online-mtp", "compress"] },
    { group: "prove", subcommands: ["residency"] },
  ])("`$group --help` and `help $group` list the group's commands", ({ group, subcommands }) => {
    for (const args of [
      [group, "--help"],
      ["help", group],
      [group, "-h"],
    ]) {
      const r = cli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: dsv4-kv ${group} <command>`));
      for (const sub of subcommands) expect(r.stdout).toMatch(new RegExp(`\\n {2}${sub} +\\S`));
    }
  });

  test("a group without a command is a usage error that shows the group's help", () => {
    const r = cli(["simulate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dsv4-kv: simulate: needs a command\n\nUsage: dsv4-kv simulate <command>/);
  });

  test("`help` and `help` of an unknown command", () => {
    expect(cli(["help"])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^dsv4-kv: .*\n\nUsage:/) });
    const r = cli(["help", "chek"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dsv4-kv: command = "chek": is not a dsv4-kv command \(did you mean "check"\?\)/);
    expect(cli(["help", "check", "extra"]).code).toBe(2);
  });

  test("help shows each flag's range and default from its table", () => {
    const h = cli(["help", "simulate", "residency"]).stdout;
    expect(h).toMatch(/--steps N +batches after the initial prefill \(range 0\.\.10000000; default 300\)/);
    const prove = cli(["help", "prove", "residency"]).stdout;
    expect(prove).toMatch(/--ratio 2\|4\|128 +compression ratio .*\(range 1\.\.2\^31-1; required\)/);
    // --ring is required except for `--ratio 2 --find-max` (checked in code, so the table shows only its range).
    expect(prove).toMatch(
      /--ring N +ring size in slots \(required but with --ratio 2 --find-max\) \(range 1\.\.2\^31-1\)/,
    );
  });
});

describe("version, typos, values", () => {
  test("-V, --version and -v print the version", () => {
    for (const flag of ["-V", "--version", "-v"]) {
      expect(cli([flag])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\S*\n$/) });
    }
  });

  test("a mistyped command or subcommand gets a suggestion", () => {
    expect(cli(["simulate", "resdency"]).stderr).toMatch(/did you mean "simulate residency"\?/);
    expect(cli(["prove", "residncy"]).stderr).toMatch(/did you mean "prove residency"\?/);
    expect(cli(["plna"]).stderr).toMatch(/did you mean "plan"\?/);
  });

  test.each([
    { args: ["plan"], typed: "--prety", suggestion: "--pretty" },
    { args: ["check"], typed: "--speculative-num-draft-token", suggestion: "--speculative-num-draft-tokens" },
    { args: ["simulate", "residency"], typed: "--draft-token", suggestion: "--draft-tokens" },
    { args: ["prove", "residency"], typed: "--find-mx", suggestion: "--find-max" },
    { args: ["simulate", "online-mtp"], typed: "--reqests=4", suggestion: "--requests" },
  ])("$args: $typed is named as typed, with the suggestion $suggestion", ({ args, typed, suggestion }) => {
    const r = cli([...args, typed]);
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith(`dsv4-kv ${args.join(" ")}: ${typed.split("=")[0]}: is not a flag of `)).toBe(true);
    expect(r.stderr).toContain(`(did you mean "${suggestion}"?) (see dsv4-kv ${args.join(" ")} --help)\n`);
  });

  test("a negative value is a value, refused or taken by the flag's range, named as typed", () => {
    expect(cli(["check", "--tp-size", "-1"]).stderr).toBe(
      "dsv4-kv check: --tp-size = -1: must be in [1, 65535] (see dsv4-kv check --help)\n",
    );
    expect(cli(["simulate", "residency", "--steps=-1"]).stderr).toMatch(/--steps = -1: must be in \[0, 10000000\]/);
    expect(cli(["check", "--chunked-prefill-size", "-1", "--json"]).code).toBe(0);
  });

  test("simulate residency names the first missing ring flag", () => {
    const r = cli(["simulate", "residency", "--ratio", "4"]);
    expect(r.stderr).toMatch(/: --ring: is required when any of --ratio, --ring, --swa-page, --draft-tokens is given/);
  });

  test("the `--` that `pnpm start -- --tp-size 4` passes on is dropped before flags and commands", () => {
    const direct = cli(["--tp-size", "4", "--json"]);
    expect(direct.code).toBe(0);
    expect(cli(["--", "--tp-size", "4", "--json"]).stdout).toBe(direct.stdout);
    expect(cli(["--", "--version"]).stdout).toBe(cli(["--version"]).stdout);
    expect(cli(["--", "help", "plan"]).stdout).toBe(cli(["help", "plan"]).stdout);
  });
});

describe("colour", () => {
  test("colourEnabled: FORCE_COLOR wins, then NO_COLOR, then a TTY that is not dumb", () => {
    const tty = { isTTY: true };
    const pipe = { isTTY: false };
    expect(colourEnabled(tty, {})).toBe(true);
    expect(colourEnabled(pipe, {})).toBe(false);
    expect(colourEnabled({}, {})).toBe(false);
    expect(colourEnabled(tty, { NO_COLOR: "1" })).toBe(false);
    expect(colourEnabled(tty, { NO_COLOR: "" })).toBe(true);
    expect(colourEnabled(tty, { TERM: "dumb" })).toBe(false);
    expect(colourEnabled(pipe, { FORCE_COLOR: "1" })).toBe(true);
    expect(colourEnabled(pipe, { FORCE_COLOR: "" })).toBe(true);
    expect(colourEnabled(tty, { FORCE_COLOR: "0" })).toBe(false);
    expect(colourEnabled(tty, { FORCE_COLOR: "false" })).toBe(false);
    expect(colourEnabled(pipe, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(true);
    expect(paintFor(tty, {}).ok("x")).toBe(COLOUR_PAINT.ok("x"));
    expect(paintFor(pipe, {}).bad("x")).toBe("x");
  });

  test("check: the verdict and error lines are coloured with FORCE_COLOR, plain with NO_COLOR or through a pipe", () => {
    const valid = cli(["check"], undefined, { FORCE_COLOR: "1" });
    expect(valid.stdout).toContain(`Result: ${ESC}32mVALID${ESC}39m`);
    const invalid = cli(["check", "--speculative-num-draft-tokens", "11"], undefined, { FORCE_COLOR: "1" });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain(`Result: ${ESC}31mINVALID${ESC}39m`);
    const errorLines = invalid.stdout.split("\n").filter((line) => line.startsWith(`${ESC}31m  [`));
    expect(errorLines.length).toBeGreaterThan(0);
    for (const line of errorLines) expect(line.endsWith(`${ESC}39m`)).toBe(true);
    expect(invalid.stderr.startsWith(`${ESC}31mdsv4-kv check: the configuration is invalid`)).toBe(true);
    for (const env of [{ NO_COLOR: "1" }, {}, { FORCE_COLOR: "0" }]) {
      const plain = cli(["check", "--speculative-num-draft-tokens", "11"], undefined, env);
      expect(plain.stdout).toMatch(/^Result: INVALID/m);
      expect(plain.stdout + plain.stderr).not.toContain(ESC);
    }
  });

  test("--json is never coloured", () => {
    const r = cli(["check", "--json"], undefined, { FORCE_COLOR: "1" });
    expect(r.stdout).not.toContain(ESC);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
    expect(cli([...PROVE_C4, "--draft-tokens", "11", "--json"], undefined, { FORCE_COLOR: "1" }).stdout).not.toContain(
      ESC,
    );
  });

  test("prove residency: `proved` green, `NOT proved` red", () => {
    expect(cli([...PROVE_C4, "--draft-tokens", "4"], undefined, { FORCE_COLOR: "1" }).stdout).toContain(
      `\n${ESC}32mproved${ESC}39m: no batch sequence`,
    );
    const failed = cli([...PROVE_C4, "--draft-tokens", "11"], undefined, { FORCE_COLOR: "1" });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`\n${ESC}31mNOT proved${ESC}39m (`);
    expect(cli([...PROVE_C4, "--draft-tokens", "11"], undefined, { NO_COLOR: "1" }).stdout).not.toContain(ESC);
  });

  test("a usage error line is red with FORCE_COLOR", () => {
    const r = cli(["plan", "--prety"], undefined, { FORCE_COLOR: "1" });
    expect(r.stderr.startsWith(`${ESC}31mdsv4-kv plan: --prety: `)).toBe(true);
  });
});
