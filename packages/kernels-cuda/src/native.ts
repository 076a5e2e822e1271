/**
 * Loads the native addon lazily and never throws at import. The candidates (addon-loader.ts) are tried in order:
 * DSV4KV_ADDON_PATH, a source build in this package (build/Release, `npx dsv4-kv-kernels-build`), the platform
 * package's CUDA binary, its CPU-only binary; why each one was rejected is kept. Everything else in this package
 * goes through `loadNative()` (which throws one `KernelsCudaUnavailableError` listing causes and fixes) or `probe()`
 * (which never throws and says which binary loaded and why the GPU path is unavailable). The loaded addon is guarded
 * once (native-errors.ts), so every native throw reaches callers as a KernelsCudaError.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import {
  type AddonSelection,
  type AddonSource,
  addonCandidates,
  type LoadedAddon,
  type LoaderHost,
  PLATFORM_PACKAGE,
  PREBUILT_PLATFORM,
  type RejectedAddon,
  selectAddon,
} from "./addon-loader.js";
import type { AddonProbeResult, NativeAddon } from "./addon-types.js";
import { FORCE_CPU_ENV } from "./env.js";
import { KernelsCudaUnavailableError } from "./errors.js";
import { guardAddon } from "./native-errors.js";
import { packageRoot } from "./package-root.js";

export type { NativeAddon } from "./addon-types.js";
export type { AddonRejection, AddonSource, LoadedAddon, RejectedAddon } from "./addon-loader.js";

/** Why the GPU path is unavailable, as data (`reason` says it in words). */
export type NoGpuCause =
  | "no-addon"
  | "cpu-only-binary"
  | "no-driver"
  | "driver-too-old"
  | "no-device"
  | "unsupported-device"
  | "cuda-error"
  | "probe-failed"
  | "forced-cpu";

/** What the platform package's dist/manifest.json says about the binary that loaded. */
export interface PrebuiltBinaryInfo {
  cudaVersion: string | null;
  /** Minimum NVIDIA Linux driver (CUDA binary only). */
  minDriver: string | null;
  minGlibc: string | null;
  architectures: { sass: string[]; ptx: string[] } | null;
}

/** The addon's `probe()`, which binary loaded, every rejected candidate, and why there is no GPU. */
export interface ProbeResult extends AddonProbeResult {
  /** Path of the addon file that loaded; null when none did. */
  addonPath: string | null;
  /** Which candidate loaded and what it is; null when none did. */
  addon: (LoadedAddon & { prebuilt?: PrebuiltBinaryInfo }) | null;
  /** The candidates tried before it (all of them when none loaded), each with its reason. */
  rejected: RejectedAddon[];
  /** null when `ok`. */
  noGpu: NoGpuCause | null;
}

let cached: AddonSelection<NativeAddon> | undefined;
let cachedProbe: ProbeResult | undefined;

function packageRequire(): NodeJS.Require {
  return createRequire(join(packageRoot(), "package.json"));
}

function isGlibc(): boolean {
  if (process.platform !== "linux") return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === "string";
}

let platformRoot: string | null | undefined;

/** Resolved once, so the manifest is read from the package the candidates came from. */
function platformPackageRoot(): string | null {
  if (platformRoot === undefined) {
    try {
      platformRoot = dirname(packageRequire().resolve(`${PLATFORM_PACKAGE}/package.json`));
    } catch {
      platformRoot = null;
    }
  }
  return platformRoot;
}

/** The manifest entry a candidate is described by: the platform binaries have one each, other sources none. */
function manifestEntryOf(source: AddonSource): "cuda" | "cpu" | null {
  switch (source) {
    case "platform-cuda":
      return "cuda";
    case "platform-cpu":
      return "cpu";
    case "override":
    case "source-build":
      return null;
  }
}

/** A platform binary's entry in its package's dist/manifest.json; undefined for other sources or when unreadable. */
function prebuiltInfo(source: AddonSource): PrebuiltBinaryInfo | undefined {
  const key = manifestEntryOf(source);
  if (key === null || platformPackageRoot() === null) return undefined;
  try {
    // A literal `require` (resolved from the same package root as the candidates), so the layer check and bundlers
    // see the optional dependency that PLATFORM_PACKAGE names.
    const require = packageRequire();
    const manifest = require("@dsv4-kv/kernels-cuda-linux-x64/dist/manifest.json") as Record<string, unknown>;
    const entry = manifest[key] as Partial<PrebuiltBinaryInfo> | null | undefined;
    if (!entry) return undefined;
    return {
      cudaVersion: entry.cudaVersion ?? null,
      minDriver: entry.minDriver ?? null,
      minGlibc: entry.minGlibc ?? null,
      architectures: entry.architectures ?? null,
    };
  } catch {
    return undefined;
  }
}

/** The real file system, `require` and platform. */
export function defaultLoaderHost(): LoaderHost {
  return {
    env: process.env,
    packageRoot: packageRoot(),
    platform: `${process.platform}-${process.arch}`,
    glibc: process.platform === "linux" && `${process.platform}-${process.arch}` === PREBUILT_PLATFORM && isGlibc(),
    platformPackageRoot,
    exists: existsSync,
    // The one unchecked step: the module is taken to be what addon-types.ts describes (test/probe.test.ts checks
    // its export names).
    load: (path) => packageRequire()(resolve(path)),
  };
}

/** Accepts a module that looks like this addon; its kind is what it says (`compiledWithCuda`). */
function acceptAddon(module: unknown): { addon: NativeAddon; kind: "cuda" | "cpu" } {
  const m = module as Partial<NativeAddon> | null;
  if (!m || typeof m.probe !== "function" || typeof m.compiledWithCuda !== "boolean") {
    throw new Error("the file loaded but is not the dsv4kv_kernels addon (no probe/compiledWithCuda exports)");
  }
  return { addon: guardAddon(m as NativeAddon), kind: m.compiledWithCuda ? "cuda" : "cpu" };
}

function tryLoad(): AddonSelection<NativeAddon> {
  if (!cached) {
    const host = defaultLoaderHost();
    cached = selectAddon(host, addonCandidates(host), acceptAddon);
  }
  return cached;
}

function forcedCpu(): boolean {
  const v = (process.env[FORCE_CPU_ENV] ?? "").trim().toLowerCase();
  return v === "1" || v === "true" || v === "yes";
}

function listRejected(rejected: readonly RejectedAddon[]): string {
  return rejected.map((r) => `${r.source}: ${r.reason} (${r.detail})`).join("; ");
}

/** The cause, read off the addon's typed probe fields (never its message). */
export function noGpuCause(p: AddonProbeResult): NoGpuCause | null {
  if (p.ok) return null;
  if (!p.compiledWithCuda) return "cpu-only-binary";
  if (!p.driverVersion) return "no-driver";
  if (p.runtimeVersion !== undefined && p.driverVersion < p.runtimeVersion) return "driver-too-old";
  if (p.deviceCount === 0) return "no-device";
  if (p.device && p.device.sm < 90) return "unsupported-device";
  return "cuda-error";
}

function probeLoaded(selection: AddonSelection<NativeAddon>): ProbeResult {
  const { addon, loaded, rejected } = selection;
  if (!addon || !loaded) {
    return {
      compiledWithCuda: false,
      deviceCount: 0,
      ok: false,
      reason: `native addon not built or not installed: ${listRejected(rejected)}`,
      addonPath: null,
      addon: null,
      rejected,
      noGpu: "no-addon",
    };
  }
  const prebuilt = prebuiltInfo(loaded.source);
  const which = { ...loaded, ...(prebuilt ? { prebuilt } : {}) };
  const base = { addonPath: loaded.path, addon: which, rejected };
  let p: AddonProbeResult;
  try {
    p = addon.probe();
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      compiledWithCuda: Boolean(addon.compiledWithCuda),
      deviceCount: 0,
      ok: false,
      reason: `probe failed: ${message}`,
      ...base,
      noGpu: "probe-failed",
    };
  }
  const noGpu = noGpuCause(p);
  let reason = p.reason;
  if (noGpu === "cpu-only-binary" && rejected.length > 0) {
    reason = `${reason}; loaded ${loaded.source} ${loaded.path} after rejecting ${listRejected(rejected)}`;
  } else if ((noGpu === "no-driver" || noGpu === "driver-too-old") && prebuilt?.minDriver) {
    reason = `${reason} (this binary needs an NVIDIA driver >= ${prebuilt.minDriver})`;
  }
  return { ...p, reason, ...base, noGpu };
}

/**
 * Which binary loaded, every rejected candidate, and why (or whether) the GPU path can be used. Never throws.
 * Cached after the first call, except that the DSV4KV_FORCE_CPU override is read every time.
 */
export function probe(): ProbeResult {
  cachedProbe ??= probeLoaded(tryLoad());
  if (forcedCpu()) {
    const reason = `GPU path disabled by ${FORCE_CPU_ENV}=${process.env[FORCE_CPU_ENV]}`;
    return { ...cachedProbe, ok: false, reason, noGpu: "forced-cpu" };
  }
  return cachedProbe;
}

/** Path of the addon file that loaded, or null when none could be loaded (probe() says why). */
export function addonPath(): string | null {
  return tryLoad().loaded?.path ?? null;
}

/** The loaded addon when the GPU path is usable; throws KernelsCudaUnavailableError otherwise. */
export function loadNative(): NativeAddon {
  const p = probe();
  const { addon } = tryLoad();
  if (!p.ok || !addon) throw new KernelsCudaUnavailableError(p);
  return addon;
}

/** The loaded addon even without a GPU (CPU-only builds export the same functions); null if it cannot load. */
export function loadNativeUnchecked(): NativeAddon | null {
  return tryLoad().addon;
}
