/**
 * Loads the native addon lazily and never throws at import. Everything else in this package goes through
 * `loadNative()` (which throws one `KernelsCudaUnavailableError` listing causes and fixes) or `probe()` (which never
 * throws and says why the GPU path is unavailable).
 */
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Environment variable that forces the CPU path (probe().ok === false) when set to 1/true/yes. */
export const FORCE_CPU_ENV = "DSV4KV_FORCE_CPU";
/** Environment variable naming an explicit `.node` file to load instead of build/Release/dsv4kv_kernels.node. */
export const ADDON_PATH_ENV = "DSV4KV_ADDON_PATH";

export interface ProbeResult {
  /** The loaded addon was compiled with nvcc (false also when no addon could be loaded). */
  compiledWithCuda: boolean;
  /** CUDA devices visible to the runtime (0 when unknown). */
  deviceCount: number;
  /** Device 0, when one is visible. */
  device?: { name: string; sm: number; memoryBytes: number };
  /** The GPU path is usable. */
  ok: boolean;
  /** Why the GPU path is unavailable ("" when ok). */
  reason: string;
  /** CUDA runtime the addon was built with (e.g. 13000), when built with CUDA. */
  runtimeVersion?: number;
  /** CUDA driver version (e.g. 13000), 0 when no driver. */
  driverVersion?: number;
  /** Path of the addon file that was loaded or looked for. */
  addonPath: string;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export type NativeAddon = any;

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
    cached = { addon: req(path), error: undefined, path };
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
          ? `native addon not built (${path} is missing): run pnpm --filter @dsv4-kv/kernels-cuda build`
          : `native addon failed to load (${path}): ${(error as Error)?.message ?? String(error)}`,
        addonPath: path,
      };
    } else {
      try {
        cachedProbe = { ...(addon.probe() as Omit<ProbeResult, "addonPath">), addonPath: path };
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

/**
 * The GPU path is unavailable. One error that lists the cause and the possible fixes (sharp style).
 * `code` is "ERR_DSV4KV_GPU_UNAVAILABLE"; `probe` holds the probe result.
 */
export class KernelsCudaUnavailableError extends Error {
  override readonly name = "KernelsCudaUnavailableError";
  readonly code = "ERR_DSV4KV_GPU_UNAVAILABLE";
  constructor(readonly probe: ProbeResult) {
    super(
      [
        `Could not use the @dsv4-kv/kernels-cuda GPU planner: ${probe.reason}`,
        "Possible causes and solutions:",
        "- Addon not built: run `pnpm --filter @dsv4-kv/kernels-cuda build` (needs cmake >= 3.18 and a C++17 compiler).",
        "- Built without CUDA: put nvcc on PATH or set CUDACXX=/usr/local/cuda/bin/nvcc, then rebuild.",
        "- No driver / no device: run on a machine with an NVIDIA driver >= the CUDA runtime and an sm_90+ GPU (check `nvidia-smi`).",
        `- ${FORCE_CPU_ENV} is set: unset it to allow the GPU path.`,
        "- Otherwise use the CPU planner (@dsv4-kv/planner, or `dsv4-kv plan --path cpu`), which produces the same bytes.",
      ].join("\n"),
    );
  }
}

/** The loaded addon when the GPU path is usable; throws KernelsCudaUnavailableError otherwise. */
export function loadNative(): NativeAddon {
  const p = probe();
  if (!p.ok) throw new KernelsCudaUnavailableError(p);
  return tryLoad().addon;
}

/** The loaded addon even without a GPU (CPU-only builds export the same functions); null if it cannot load. */
export function loadNativeUnchecked(): NativeAddon | null {
  return tryLoad().addon;
}
