/**
 * The bench build's addon for tests, loaded by path (its argument checks come before any context, so no GPU and no
 * context of its own is needed), beside whatever addon the process loaded; and the skip reasons the bench tests give
 * where it, or a GPU run of it, is not there.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type { BenchAddon, OnlineMtpBenchNative } from "../src/addon-types.js";
import { BENCH_BUILD_COMMAND, BENCH_ENTRIES, benchBuildPath, benchEntriesOf } from "../src/bench-addon.js";
import { ADDON_PATH_ENV } from "../src/env.js";
import { guardAddon } from "../src/native-errors.js";
import { loadNativeUnchecked } from "../src/testing.js";

const require = createRequire(import.meta.url);

/** The bench build of this checkout (build-bench/Release), guarded like the released addon; or why there is none. */
export function loadBenchBuild(): { addon: BenchAddon | null; reason: string } {
  const path = benchBuildPath();
  if (!existsSync(path)) return { addon: null, reason: `no bench build at ${path} (build it: ${BENCH_BUILD_COMMAND})` };
  const addon = guardAddon(require(path) as BenchAddon);
  const entries = benchEntriesOf(addon);
  if (entries.length !== BENCH_ENTRIES.length) return { addon: null, reason: `${path} is not a bench build` };
  return { addon, reason: "" };
}

/**
 * The process's addon when it is a bench build (DSV4KV_ADDON_PATH names one: the GPU bench tests need its own
 * Context and DeviceBuffers), else null and the reason.
 */
export function processBenchAddon(): { addon: BenchAddon | null; reason: string } {
  const addon = loadNativeUnchecked();
  if (addon && benchEntriesOf(addon).length === BENCH_ENTRIES.length) return { addon: addon as BenchAddon, reason: "" };
  return {
    addon: null,
    reason:
      `the bench entries are in the bench build only: run with ${ADDON_PATH_ENV}=${benchBuildPath()} ` +
      `(build it: ${BENCH_BUILD_COMMAND})`,
  };
}

/** Whether the benchmark-only kernel shapes are built into `addon` (a DSV4KV_BENCH_VARIANTS bench build). */
export function hasBenchVariants(addon: unknown): boolean {
  const onlineMtp = (addon as { onlineMtp?: Partial<OnlineMtpBenchNative> } | null)?.onlineMtp;
  return onlineMtp?.benchVariants === true;
}
