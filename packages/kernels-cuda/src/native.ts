/**
 * Loads the native addon lazily and never throws at import. Everything else in this package goes through
 * `loadNative()` (which throws one `KernelsCudaUnavailableError` listing causes and fixes) or `probe()` (which never
 * throws and says why the GPU path is unavailable). The loaded addon is guarded once (native-errors.ts), so every
 * native throw reaches callers as a KernelsCudaError.
 */
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { AddonProbeResult, NativeAddon } from "./addon-types.js";
import { ADDON_PATH_ENV, FORCE_CPU_ENV } from "./env.js";
import { KernelsCudaUnavailableError } from "./errors.js";
import { guardAddon } from "./native-errors.js";

export type { NativeAddon } from "./addon-types.js";

/** The addon's `probe()`, or why no addon could be loaded. */
export interface ProbeResult extends AddonProbeResult {
  /** Path of the addon file that was loaded or looked for. */
  addonPath: string;
}

let cached: { addon: NativeAddon | null; error: unknown; path: string } | undefined;
let cachedProbe: ProbeResult | undefined;

function packageRoot(): string {
  // dist/index.{js,cjs} or src/native.ts: the package root is one level up.
  const here = typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));
  return resolve(here, "..");
}

/** Where the addon is looked for. */
export function addonPath(): string {
  const override = process.env[ADDON_PATH_ENV];
  if (override) return resolve(override);
  return join(packageRoot(), "build", "Release", "dsv4kv_kernels.node");
}

function tryLoad(): { addon: NativeAddon | null; error: unknown; path: string } {
  if (cached) return cached;
  const path = addonPath();
  try {
    if (!existsSync(path)) throw Object.assign(new Error(`no file at ${path}`), { code: "ENOENT" });
    const req = createRequire(join(packageRoot(), "package.json"));
    // The one unchecked step: the module is taken to be what addon-types.ts describes (test/probe.test.ts checks
    // its export names).
    cached = { addon: guardAddon(req(path) as NativeAddon), error: undefined, path };
  } catch (error) {
    cached = { addon: null, error, path };
  }
  return cached;
}

function forcedCpu(): boolean {
  const v = (process.env[FORCE_CPU_ENV] ?? "").trim().toLowerCase();
  return v === "1" || v === "true" || v === "yes";
}

/**
 * Why (or whether) the GPU path can be used. Never throws. Cached after the first call, except that the
 * DSV4KV_FORCE_CPU override is read every time.
 */
export function probe(): ProbeResult {
  if (!cachedProbe) {
    const { addon, error, path } = tryLoad();
    if (!addon) {
      const missing = (error as { code?: string } | undefined)?.code === "ENOENT";
      cachedProbe = {
        compiledWithCuda: false,
        deviceCount: 0,
        ok: false,
        reason: missing
          ? `native addon not built (${path} is missing)`
          : `native addon failed to load (${path}): ${(error as Error)?.message ?? String(error)}`,
        addonPath: path,
      };
    } else {
      try {
        cachedProbe = { ...addon.probe(), addonPath: path };
      } catch (e) {
        cachedProbe = {
          compiledWithCuda: Boolean(addon.compiledWithCuda),
          deviceCount: 0,
          ok: false,
          reason: `probe failed: ${(e as Error).message}`,
          addonPath: path,
        };
      }
    }
  }
  if (forcedCpu()) {
    return { ...cachedProbe, ok: false, reason: `GPU path disabled by ${FORCE_CPU_ENV}=${process.env[FORCE_CPU_ENV]}` };
  }
  return cachedProbe;
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
