import { describe, expect, test } from "vitest";
import { ADDON_FILE, addonCandidates, type LoaderHost, PLATFORM_PACKAGE, selectAddon } from "../src/addon-loader.js";
import { ADDON_PATH_ENV } from "../src/env.js";
import { noGpuCause } from "../src/native.js";

const ROOT = "/fake/node_modules/@dsv4-kv/kernels-cuda";
const PLATFORM_ROOT = "/fake/node_modules/@dsv4-kv/kernels-cuda-linux-x64";
const SOURCE = `${ROOT}/build/Release/${ADDON_FILE}`;
const CUDA = `${PLATFORM_ROOT}/dist/cuda/${ADDON_FILE}`;
const CPU = `${PLATFORM_ROOT}/dist/cpu/${ADDON_FILE}`;

/** A fake module per path: a string is a dlopen failure message, a boolean is the module's compiledWithCuda. */
function fakeHost(
  files: Record<string, boolean | string>,
  over: Partial<LoaderHost> = {},
): LoaderHost & { opened: string[] } {
  const opened: string[] = [];
  return {
    env: {},
    packageRoot: ROOT,
    platform: "linux-x64",
    glibc: true,
    platformPackageRoot: () => PLATFORM_ROOT,
    exists: (p) => p in files,
    load: (p) => {
      opened.push(p);
      const f = files[p];
      if (typeof f === "string") throw new Error(f);
      return { compiledWithCuda: f };
    },
    opened,
    ...over,
  };
}

const accept = (m: unknown) => {
  const mod = m as { compiledWithCuda: boolean };
  return { addon: mod, kind: mod.compiledWithCuda ? ("cuda" as const) : ("cpu" as const) };
};

function select(host: LoaderHost) {
  return selectAddon(host, addonCandidates(host), accept);
}

describe("addon candidates", () => {
  test("order: DSV4KV_ADDON_PATH, source build, platform CUDA, platform CPU", () => {
    const host = fakeHost({}, { env: { [ADDON_PATH_ENV]: "/my/addon.node" } });
    expect(addonCandidates(host).map((c) => [c.source, c.path])).toEqual([
      ["override", "/my/addon.node"],
      ["source-build", SOURCE],
      ["platform-cuda", CUDA],
      ["platform-cpu", CPU],
    ]);
  });
  test("without the override the source build comes first", () => {
    expect(addonCandidates(fakeHost({})).map((c) => c.source)).toEqual([
      "source-build",
      "platform-cuda",
      "platform-cpu",
    ]);
  });
});

describe("selectAddon", () => {
  test("the first candidate that loads wins and later ones are not opened", () => {
    const host = fakeHost({ [SOURCE]: false, [CUDA]: true, [CPU]: false });
    const r = select(host);
    expect(r.loaded).toEqual({ source: "source-build", path: SOURCE, kind: "cpu" });
    expect(r.rejected).toEqual([]);
    expect(host.opened).toEqual([SOURCE]);
  });
  test("no source build: the platform CUDA binary loads; the missing source build is reported", () => {
    const r = select(fakeHost({ [CUDA]: true, [CPU]: false }));
    expect(r.loaded).toEqual({ source: "platform-cuda", path: CUDA, kind: "cuda" });
    expect(r.rejected).toEqual([
      { source: "source-build", path: SOURCE, reason: "not-found", detail: `no file at ${SOURCE}` },
    ]);
  });
  test("a CUDA binary that fails to load falls back to the CPU binary, keeping the dlopen message", () => {
    const dlopen = "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found";
    const r = select(fakeHost({ [CUDA]: dlopen, [CPU]: false }));
    expect(r.loaded).toEqual({ source: "platform-cpu", path: CPU, kind: "cpu" });
    expect(r.rejected.map((x) => [x.source, x.reason, x.detail])).toEqual([
      ["source-build", "not-found", `no file at ${SOURCE}`],
      ["platform-cuda", "load-failed", dlopen],
    ]);
  });
  test("a package without its CUDA binary (CPU-only build) is reported as not found, never loaded as CUDA", () => {
    const r = select(fakeHost({ [CPU]: false }));
    expect(r.loaded).toEqual({ source: "platform-cpu", path: CPU, kind: "cpu" });
    expect(r.rejected[1]).toEqual({
      source: "platform-cuda",
      path: CUDA,
      reason: "not-found",
      detail: `no file at ${CUDA}`,
    });
  });
  test("the kind is what the module says, not where it lies", () => {
    // A CPU-only file in the cuda slot loads as kind cpu.
    expect(select(fakeHost({ [CUDA]: false })).loaded?.kind).toBe("cpu");
  });
  test("platform package not installed: both platform candidates say so", () => {
    const r = select(fakeHost({}, { platformPackageRoot: () => null }));
    expect(r.addon).toBeNull();
    expect(r.loaded).toBeNull();
    expect(r.rejected.slice(1)).toEqual([
      { source: "platform-cuda", path: null, reason: "not-found", detail: `${PLATFORM_PACKAGE} is not installed` },
      { source: "platform-cpu", path: null, reason: "not-found", detail: `${PLATFORM_PACKAGE} is not installed` },
    ]);
  });
  test("wrong platform: the prebuilt binaries are rejected without being opened", () => {
    const host = fakeHost({ [CUDA]: true, [CPU]: false }, { platform: "darwin-arm64", glibc: false });
    const r = select(host);
    expect(r.addon).toBeNull();
    expect(host.opened).toEqual([]);
    expect(r.rejected.slice(1).map((x) => [x.source, x.reason])).toEqual([
      ["platform-cuda", "wrong-platform"],
      ["platform-cpu", "wrong-platform"],
    ]);
    expect(r.rejected[1]!.detail).toContain("darwin-arm64");
  });
  test("musl: wrong platform too", () => {
    const r = select(fakeHost({ [CUDA]: true }, { glibc: false }));
    expect(r.rejected.map((x) => x.reason)).toEqual(["not-found", "wrong-platform", "wrong-platform"]);
    expect(r.rejected[1]!.detail).toMatch(/glibc/);
  });
  test("a broken override is rejected with its message and the search goes on", () => {
    const host = fakeHost(
      { "/my/addon.node": "invalid ELF header", [CUDA]: true },
      { env: { [ADDON_PATH_ENV]: "/my/addon.node" } },
    );
    const r = select(host);
    expect(r.loaded?.source).toBe("platform-cuda");
    expect(r.rejected[0]).toEqual({
      source: "override",
      path: "/my/addon.node",
      reason: "load-failed",
      detail: "invalid ELF header",
    });
  });
  test("a module the accept step refuses is load-failed", () => {
    const host = fakeHost({ [SOURCE]: true, [CPU]: false });
    const r = selectAddon(host, addonCandidates(host), (m) => {
      if ((m as { compiledWithCuda: boolean }).compiledWithCuda) throw new Error("not the addon");
      return accept(m);
    });
    expect(r.loaded?.source).toBe("platform-cpu");
    expect(r.rejected.map((x) => [x.source, x.reason, x.detail])).toEqual([
      ["source-build", "load-failed", "not the addon"],
      ["platform-cuda", "not-found", `no file at ${CUDA}`],
    ]);
  });
});

describe("why there is no GPU (typed probe fields)", () => {
  const base = { ok: false, reason: "", compiledWithCuda: true, deviceCount: 0, runtimeVersion: 13000 };
  test.each([
    [{ ...base, ok: true, deviceCount: 1 }, null],
    [{ ...base, compiledWithCuda: false }, "cpu-only-binary"],
    [{ ...base, driverVersion: 0 }, "no-driver"],
    [{ ...base }, "no-driver"],
    [{ ...base, driverVersion: 12080 }, "driver-too-old"],
    [{ ...base, driverVersion: 13000 }, "no-device"],
    [
      {
        ...base,
        driverVersion: 13000,
        deviceCount: 1,
        device: { name: "x", sm: 80, memoryBytes: 1, multiProcessorCount: 1 },
      },
      "unsupported-device",
    ],
    [{ ...base, driverVersion: 13000, deviceCount: 1 }, "cuda-error"],
  ] as const)("%j -> %s", (p, cause) => {
    expect(noGpuCause(p)).toBe(cause);
  });
});
