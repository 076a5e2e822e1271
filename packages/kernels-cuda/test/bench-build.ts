/**
 * The bench build's addon for tests, loaded by path (its argument checks come before any context, so no GPU and no
 * context of its own is needed), beside whatever addon the process loaded; and the skip reasons the bench tests give
 * where it, or a GPU run of it, is not there.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type { BenchAddon, OnlineMtpBenchNative } from "../src/addon-types.js";
import { BENCH_BUILD_COMMAND, BENCH_ENTRIES, benchBuildPath, benchEntriesOf } from "../src/bench-addon.js";
import { guardAddon } from "../src/native-errors.js";

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

// The process's addon when it is a bench build: in src/ (./testing), where the GPU tests above this package take it.
export { processBenchAddon } from "../src/testing.js";

/** Whether the benchmark-only kernel shapes are built into `addon` (a DSV4KV_BENCH_VARIANTS bench build). */
export function hasBenchVariants(addon: unknown): boolean {
  const onlineMtp = (addon as { onlineMtp?: Partial<OnlineMtpBenchNative> } | null)?.onlineMtp;
  return onlineMtp?.benchVariants === true;
}
