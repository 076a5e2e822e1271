/**
 * An addon that loads and probes ok but predates the compress bindings (an old DSV4KV_ADDON_PATH build): a fake
 * module through the override candidate, so no GPU is needed.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { ADDON_PATH_ENV } from "../src/env.js";

const OLD_ADDON = `exports.compiledWithCuda = true;
exports.probe = () => ({ compiledWithCuda: true, deviceCount: 1, ok: true, reason: "fake device" });
exports.onlineMtp = {};
`;

let saved: string | undefined;
let mod: typeof import("../src/compress.js");
let errors: typeof import("../src/errors.js");
let fakePath: string;

beforeAll(async () => {
  fakePath = join(mkdtempSync(join(tmpdir(), "dsv4kv-old-addon-")), "old-addon.cjs");
  writeFileSync(fakePath, OLD_ADDON);
  saved = process.env[ADDON_PATH_ENV];
  process.env[ADDON_PATH_ENV] = fakePath;
  vi.resetModules();
  mod = await import("../src/compress.js");
  errors = await import("../src/errors.js");
});

afterAll(() => {
  if (saved === undefined) delete process.env[ADDON_PATH_ENV];
  else process.env[ADDON_PATH_ENV] = saved;
});

describe("an addon without the compress bindings", () => {
  test("probeCompress says the compress kernels cannot run", () => {
    const p = mod.probeCompress();
    expect(p.addon?.source).toBe("override");
    expect(p.addonPath).toBe(fakePath);
    expect(p.ok).toBe(false);
  });
  test("compressNative throws KernelsCudaUnavailableError (GPU_UNAVAILABLE) instead of returning undefined", () => {
    let err: unknown;
    let got: unknown;
    try {
      got = mod.compressNative();
    } catch (e) {
      err = e;
    }
    expect(got).toBeUndefined();
    expect(errors.KernelsCudaUnavailableError.isInstance(err)).toBe(true);
    const e = err as InstanceType<typeof errors.KernelsCudaUnavailableError>;
    expect(e.code).toBe("GPU_UNAVAILABLE");
    expect(e.probe).toEqual(mod.probeCompress());
  });
});
