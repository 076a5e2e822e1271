/**
 * An addon that loads and probes ok but predates the compress bindings (an old DSV4KV_ADDON_PATH build): a fake
 * module through the override candidate, so no GPU is needed.
 */
import { describe, test } from "vitest";
import { expectStaleProbe, expectUnavailable, useStaleAddon } from "./stale-addon.js";

const s = useStaleAddon("exports.onlineMtp = {};\n", () => import("../src/compress.js"));

describe("an addon without the compress bindings", () => {
  test("probeCompress says the compress kernels cannot run", () => {
    expectStaleProbe(s.mod.probeCompress(), s.fakePath);
  });
  test("compressNative throws KernelsCudaUnavailableError (GPU_UNAVAILABLE) instead of returning undefined", () => {
    expectUnavailable(
      s.errors,
      () => s.mod.compressNative(),
      () => s.mod.probeCompress(),
    );
  });
});
