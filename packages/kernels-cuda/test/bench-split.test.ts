/**
 * The released addon exports kernels only; the benchmark entries (native/bench/) are in the bench build alone
 * (CMake option DSV4KV_BENCH, `build:native:bench`). Checked on every released binary this checkout has (the
 * platform package's prebuilt CUDA and CPU-only binaries, a source build in build/Release) and on the bench build.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { PLATFORM_PACKAGE, sourceBuildPath } from "../src/addon-loader.js";
import { BENCH_ENTRIES, benchEntriesOf, useBenchAddon } from "../src/bench-addon.js";
import { ADDON_PATH_ENV } from "../src/env.js";
import { packageRoot } from "../src/package-root.js";
import { loadBenchBuild } from "./bench-build.js";

const require = createRequire(import.meta.url);

/** The released binaries: the prebuilt ones of the platform package and a source build, where present. */
function releasedBinaries(): [string, string][] {
  const out: [string, string][] = [];
  try {
    const root = dirname(require.resolve(`${PLATFORM_PACKAGE}/package.json`));
    for (const kind of ["cuda", "cpu"]) out.push([`prebuilt ${kind}`, join(root, "dist", kind, "dsv4kv_kernels.node")]);
  } catch {
    // not installed: the rows below say so
  }
  out.push(["source build", sourceBuildPath(packageRoot())]);
  return out;
}

/** Every export path of `m` (`onlineMtp.decode`), for comparing two addons' surfaces. */
function exportPaths(m: object, prefix = ""): string[] {
  return Object.entries(m).flatMap(([k, v]) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? exportPaths(v, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

describe("the released addon exports no bench entry", () => {
  for (const [name, path] of releasedBinaries()) {
    test(`${name} (${path})`, (ctx) => {
      if (!existsSync(path)) return ctx.skip(`not built here: ${path}`);
      const addon = require(path) as object;
      expect(benchEntriesOf(addon)).toEqual([]);
      expect(exportPaths(addon).filter((p) => /bench/i.test(p))).toEqual([]);
    });
  }
  test("the prebuilt CPU-only binary is present and checked (not skipped) here", () => {
    const cpu = releasedBinaries().find(([name]) => name === "prebuilt cpu");
    expect(cpu && existsSync(cpu[1])).toBe(true);
  });
});

describe("the bench build exports every bench entry and every kernel entry of the released addon", () => {
  const bench = loadBenchBuild();
  test("bench, onlineMtp.bench, onlineMtp.benchVariants, compress.bench", (ctx) => {
    if (!bench.addon) return ctx.skip(bench.reason);
    expect(benchEntriesOf(bench.addon)).toEqual([...BENCH_ENTRIES]);
    expect(typeof bench.addon.onlineMtp.benchVariants).toBe("boolean");
  });
  test("the same kernels: its exports are the released ones plus the bench entries", (ctx) => {
    if (!bench.addon) return ctx.skip(bench.reason);
    const released = releasedBinaries().find(([, p]) => existsSync(p));
    if (!released) return ctx.skip("no released binary here to compare with");
    const kernels = exportPaths(require(released[1]) as object).sort();
    const all = exportPaths(bench.addon).sort();
    expect(all.filter((p) => !(BENCH_ENTRIES as readonly string[]).includes(p))).toEqual(kernels);
  });
});

describe("useBenchAddon says what is missing and how to build it, loading nothing", () => {
  test("no file at the bench path", () => {
    const env: NodeJS.ProcessEnv = { [ADDON_PATH_ENV]: join(packageRoot(), "no-such-dir", "dsv4kv_kernels.node") };
    const r = useBenchAddon(env);
    expect(r.addon).toBeNull();
    expect(r.reason).toMatch(/^no bench addon at .*no-such-dir.*: build it with `pnpm --filter @dsv4-kv\/kernels-cuda/);
  });
});
