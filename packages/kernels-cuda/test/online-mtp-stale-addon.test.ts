/**
 * An addon that loads and probes ok but predates the onlineMtp bindings (an old DSV4KV_ADDON_PATH build): a fake
 * module through the override candidate, so no GPU is needed.
 */
import { describe, expect, test } from "vitest";
import { expectStaleProbe, expectUnavailable, useStaleAddon } from "./stale-addon.js";

const s = useStaleAddon("", () => import("../src/online-mtp.js"));

describe("an addon without the onlineMtp bindings", () => {
  test("probeOnlineMtp says the online kernels cannot run", () => {
    expectStaleProbe(s.mod.probeOnlineMtp(), s.fakePath);
  });
  test("onlineMtpNative throws KernelsCudaUnavailableError (GPU_UNAVAILABLE) instead of returning undefined", () => {
    const e = expectUnavailable(
      s.errors,
      () => s.mod.onlineMtpNative(),
      () => s.mod.probeOnlineMtp(),
    );
    expect(e.probe.addon?.source).toBe("override");
  });
});
