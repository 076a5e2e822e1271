// Every file input of the CLI reads regular files only (or stdin for `-`), refuses a device,
// FIFO, socket or directory at once by what it is, counts its byte limit on what it reads and bounds symlinks.
// Each command runs in a child process with a timeout, so a reader that blocks on a FIFO fails the test instead
// of hanging it.
import { spawnSync } from "node:child_process";
import { closeSync, createReadStream, ftruncateSync, mkdirSync, mkdtempSync, openSync, symlinkSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { InputError } from "../src/commands/args.js";
import { MAX_INPUT_BYTES } from "../src/commands/input.js";
import { MAX_SYMLINKS, readInputBytes } from "../src/commands/read-input.js";
import { BIN } from "./cli-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "dsv4-read-input-"));
const fifo = join(dir, "fifo");
const socketPath = join(dir, "socket");
const loop = join(dir, "loop-a");
const checkpoint = join(dir, "checkpoint");
const hasFifo = spawnSync("mkfifo", [fifo]).status === 0;
symlinkSync(join(dir, "loop-b"), loop);
symlinkSync(loop, join(dir, "loop-b"));
mkdirSync(checkpoint);
spawnSync("mkfifo", [join(checkpoint, "config.json")]);
const zeroLink = join(dir, "zero-link");
symlinkSync("/dev/zero", zeroLink);

const server = createServer();
beforeAll(() => new Promise<void>((resolve) => server.listen(socketPath, resolve)));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A sparse file one byte over `bytes` (nothing of that size is written). */
function fileOver(bytes: number, name: string): string {
  const path = join(dir, name);
  const fd = openSync(path, "w");
  ftruncateSync(fd, bytes + 1);
  closeSync(fd);
  return path;
}

/** Runs dsv4-kv with a 20 s bound: a reader blocked on a FIFO shows as `timedOut`, never as a hung test. */
function run(args: string[]): { code: number | null; stderr: string; timedOut: boolean } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    timeout: 20_000,
    input: "",
    env: { ...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined },
  });
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
  return { code: r.status, stderr: r.stderr, timedOut };
}

/** Every reader, as `[name, args with the path]`. */
const READERS: ReadonlyArray<readonly [string, (path: string) => string[]]> = [
  ["check --against-log", (p) => ["check", "--against-log", p]],
  ["check --config", (p) => ["check", "--config", p]],
  ["check --model-config", (p) => ["check", "--model-config", p]],
  ["check --model-path", (p) => ["check", "--model-path", p]],
  [
    "check -- <launch command> --model-path",
    (p) => ["check", "--", "python3", "-m", "sglang.launch_server", "--model-path", p],
  ],
  ["plan --input", (p) => ["plan", "--input", p]],
  ["simulate residency --replay", (p) => ["simulate", "residency", "--replay", p]],
];

describe.each(READERS)("%s", (_name, args) => {
  test("/dev/zero is refused at once as a character device", () => {
    const r = run(args("/dev/zero"));
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"/dev/zero": is a character device, not a regular file');
  });

  test.skipIf(!hasFifo)("a FIFO with no writer is refused at once, without blocking", () => {
    const r = run(args(fifo));
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is a FIFO (named pipe), not a regular file");
  });

  test("a socket is refused by what it is", () => {
    const r = run(args(socketPath));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is a socket, not a regular file");
  });

  test("a symbolic link loop is refused with its bound", () => {
    const r = run(args(loop));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is a symbolic link loop/);
  });

  test("a link to /dev/zero names what it links to", () => {
    const r = run(args(zeroLink));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is a character device (a link to /dev/zero)");
  });
});

test.skipIf(!hasFifo)(
  "--model-path: a checkpoint folder whose config.json is a FIFO (also in a pasted launch command)",
  () => {
    for (const args of [
      ["check", "--model-path", checkpoint],
      ["check", "--", "python3", "-m", "sglang.launch_server", "--model-path", checkpoint, "--tp", "8"],
    ]) {
      const r = run(args);
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`"${join(checkpoint, "config.json")}": is a FIFO (named pipe)`);
    }
  },
);

test("a file over the limit is refused (JSON inputs, config files, logs: 256 MiB; a config.json: 4 MiB)", () => {
  const big = fileOver(MAX_INPUT_BYTES, "big.yaml");
  for (const args of [
    ["plan", "--input", big],
    ["check", "--config", big],
    ["check", "--against-log", big],
  ]) {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`holds more than ${MAX_INPUT_BYTES} bytes (256 MiB), the most that is read`);
  }
  const r = run(["check", "--model-path", fileOver(4 * 2 ** 20, "config.json")]);
  expect(r.stderr).toContain("is larger than 4194304 bytes: not a config.json");
});

describe("the reader itself", () => {
  test("a stream (real /dev/zero as stdin, `-`) stops at the limit with a typed error", async () => {
    const zero = createReadStream("/dev/zero", { highWaterMark: 64 * 1024 });
    const error = await readInputBytes({ field: "--input", path: "-", maxBytes: 1 << 20 }, zero).catch((e) => e);
    zero.destroy();
    expect(InputError.isInstance(error)).toBe(true);
    expect((error as InputError).toJSON()).toMatchObject({
      code: "INPUT",
      field: "--input",
      value: "-",
      params: { maxBytes: 1 << 20 },
    });
    expect((error as InputError).params!.bytesSeen as number).toBeLessThanOrEqual((1 << 20) + 64 * 1024);
  });

  test("a chain of links is followed up to the bound, one more is a loop", async () => {
    const chain = join(dir, "chain");
    mkdirSync(chain);
    writeFileSync(join(chain, "file"), "{}");
    let target = join(chain, "file");
    for (let i = 0; i <= MAX_SYMLINKS; i++) {
      const link = join(chain, `link-${i}`);
      symlinkSync(target, link);
      target = link;
    }
    const at = (i: number) => ({ field: "--input", path: join(chain, `link-${i}`), maxBytes: 10 });
    expect((await readInputBytes(at(MAX_SYMLINKS - 1))).toString()).toBe("{}");
    await expect(readInputBytes(at(MAX_SYMLINKS))).rejects.toMatchObject({ params: { errno: "ELOOP" } });
  });

  test("a directory is refused by what it is", async () => {
    await expect(readInputBytes({ field: "--config", path: dir, maxBytes: 10 })).rejects.toMatchObject({
      code: "INPUT",
      params: { fileKind: "directory" },
    });
  });

  test("`-` reads standard input for every reader", () => {
    const ok = spawnSync(process.execPath, [BIN, "check", "--config", "-", "--json"], {
      encoding: "utf8",
      input: "tp-size: 8\n",
      timeout: 60_000,
    });
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).ok).toBe(true);
    const plan = spawnSync(process.execPath, [BIN, "plan", "--input", "-"], {
      encoding: "utf8",
      input: '{"kind":"prefill","compressRatio":4,"ringSize":16,"swaPageSize":256,"seqLens":[518],"extendLens":[6]}',
      timeout: 60_000,
    });
    expect(plan.status).toBe(0);
    expect(JSON.parse(plan.stdout).planC).toBeDefined();
  });

  test("standard input is read once: two flags given `-` are refused", () => {
    const r = run(["check", "--against-log", "-", "--config", "-"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--config = "-": cannot read standard input: --against-log already does');
  });
});

test.skipIf(!hasFifo)("--html to a FIFO without a reader is refused, not a write that blocks forever", () => {
  for (const args of [
    ["check", "--html", fifo],
    ["simulate", "residency", "--steps", "10", "--html", fifo],
  ]) {
    const r = run(args);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is a FIFO (named pipe), not a file a report can be written to");
  }
});
