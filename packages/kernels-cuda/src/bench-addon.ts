/**
 * The bench build's addon: the released kernels plus the benchmark entries (native/bench/, CMake option DSV4KV_BENCH),
 * built by `pnpm --filter @dsv4-kv/kernels-cuda build:native:bench` into this package's build-bench/Release. The
 * released addon (native.ts loads it) exports kernels only; the benches and their tests take the bench build through
 * `useBenchAddon()`, which makes it the addon this process loads, so its Context and DeviceBuffer objects are the
 * ones its bench entries accept.
 */
import { existsSync } from "node:fs";
import { benchBuildPath as benchBuildPathIn } from "./addon-loader.js";
import type { BenchAddon } from "./addon-types.js";
import { ADDON_PATH_ENV } from "./env.js";
import { addonPath, loadNativeUnchecked } from "./native.js";
import { packageRoot } from "./package-root.js";

export type {
  AddonPlannerBench,
  BenchAddon,
  CompressBenchArgs,
  CompressBenchNative,
  CompressBenchOptions,
  CompressBenchResult,
  OnlineMtpBenchArgs,
  OnlineMtpBenchNative,
  OnlineMtpBenchResult,
  PlanBenchOptions,
  PlanBenchResult,
} from "./addon-types.js";

/** The command that builds the bench addon (CUDA when nvcc is found, else CPU-only). */
export const BENCH_BUILD_COMMAND = "pnpm --filter @dsv4-kv/kernels-cuda build:native:bench";

/** The bench entries, as paths into the addon's exports; the released addon has none of them. */
export const BENCH_ENTRIES = ["bench", "onlineMtp.bench", "onlineMtp.benchVariants", "compress.bench"] as const;

/** Where `build:native:bench` puts the bench addon under this package's root. */
export function benchBuildPath(root: string = packageRoot()): string {
  return benchBuildPathIn(root);
}

/** The bench entries `addon` exports (a released addon: none; a bench build: all of BENCH_ENTRIES). */
export function benchEntriesOf(addon: unknown): string[] {
  return BENCH_ENTRIES.filter((entry) => {
    let v: unknown = addon;
    for (const key of entry.split("."))
      v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
    return v !== undefined;
  });
}

/** The bench addon, or why there is none (in words, with the command that builds it). */
export type BenchAddonSelection =
  | { addon: BenchAddon; path: string; reason: null }
  | { addon: null; path: string | null; reason: string };

/**
 * Makes the bench build the addon of this process and returns it. Call it before anything loads the addon (probe(),
 * a context): the bench build is then what every call of this package uses. DSV4KV_ADDON_PATH, when set, names the
 * bench build to use (two builds timed in one session); otherwise it is build-bench/Release of this package. Never
 * throws: a missing or wrong file, or an addon loaded before, is a reason.
 */
export function useBenchAddon(env: NodeJS.ProcessEnv = process.env): BenchAddonSelection {
  const wanted = env[ADDON_PATH_ENV] || benchBuildPath();
  const howToBuild = `build it with \`${BENCH_BUILD_COMMAND}\` (or set ${ADDON_PATH_ENV} to a DSV4KV_BENCH=ON build)`;
  if (!existsSync(wanted)) return { addon: null, path: null, reason: `no bench addon at ${wanted}: ${howToBuild}` };
  env[ADDON_PATH_ENV] = wanted;
  const loaded = addonPath();
  if (loaded !== wanted) {
    const what = loaded === null ? "no addon loaded" : `${loaded} loaded instead`;
    return { addon: null, path: loaded, reason: `the bench addon ${wanted} is not in use (${what}): ${howToBuild}` };
  }
  const addon = loadNativeUnchecked();
  const missing = BENCH_ENTRIES.filter((e) => !benchEntriesOf(addon).includes(e));
  if (missing.length > 0) {
    const why = `${wanted} is not a bench build (no ${missing.join(", ")}): ${howToBuild}`;
    return { addon: null, path: loaded, reason: why };
  }
  return { addon: addon as BenchAddon, path: wanted, reason: null };
}

/**
 * The addon this process already loaded when it is a bench build (DSV4KV_ADDON_PATH names one), else null and why:
 * the GPU tests of the bench entries need that addon's own Context and DeviceBuffers, so they skip rather than load
 * a second addon beside it.
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
