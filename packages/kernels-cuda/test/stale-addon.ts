/**
 * An addon that loads and probes ok but predates a family of bindings (an old DSV4KV_ADDON_PATH build): a fake
 * module through the override candidate, so no GPU is needed. Shared by the compress and online-MTP stale-addon
 * tests.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, vi } from "vitest";
import { ADDON_PATH_ENV } from "../src/env.js";
import type { ProbeResult } from "../src/index.js";

type Errors = typeof import("../src/errors.js");
type Unavailable = InstanceType<Errors["KernelsCudaUnavailableError"]>;

/** What the hooks load: the module under test, the errors module of the same load, the fake addon's path. */
export interface StaleAddon<M> {
  mod: M;
  errors: Errors;
  fakePath: string;
}

/**
 * Registers beforeAll/afterAll hooks that point DSV4KV_ADDON_PATH at a fake addon (a probe that says ok, plus
 * `extraExports`) and load a fresh copy of the module through `load`; the variable is restored afterwards.
 */
export function useStaleAddon<M>(extraExports: string, load: () => Promise<M>): StaleAddon<M> {
  const source = `exports.compiledWithCuda = true;
exports.probe = () => ({ compiledWithCuda: true, deviceCount: 1, ok: true, reason: "fake device" });
${extraExports}`;
  const s = {} as StaleAddon<M>;
  let saved: string | undefined;
  beforeAll(async () => {
    s.fakePath = join(mkdtempSync(join(tmpdir(), "dsv4kv-old-addon-")), "old-addon.cjs");
    writeFileSync(s.fakePath, source);
    saved = process.env[ADDON_PATH_ENV];
    process.env[ADDON_PATH_ENV] = s.fakePath;
    vi.resetModules();
    s.mod = await load();
    s.errors = await import("../src/errors.js");
  });
  afterAll(() => {
    if (saved === undefined) delete process.env[ADDON_PATH_ENV];
    else process.env[ADDON_PATH_ENV] = saved;
  });
  return s;
}

/** The probe found the fake addon through the override and says the kernels cannot run. */
export function expectStaleProbe(p: ProbeResult, fakePath: string): void {
  expect(p.addon?.source).toBe("override");
  expect(p.addonPath).toBe(fakePath);
  expect(p.ok).toBe(false);
}

/** `call` throws KernelsCudaUnavailableError (GPU_UNAVAILABLE) carrying what `probe` says after it, not undefined. */
export function expectUnavailable(errors: Errors, call: () => unknown, probe: () => ProbeResult): Unavailable {
  let err: unknown;
  let got: unknown;
  try {
    got = call();
  } catch (e) {
    err = e;
  }
  expect(got).toBeUndefined();
  expect(errors.KernelsCudaUnavailableError.isInstance(err)).toBe(true);
  const e = err as Unavailable;
  expect(e.code).toBe("GPU_UNAVAILABLE");
  expect(e.probe).toEqual(probe());
  return e;
}
