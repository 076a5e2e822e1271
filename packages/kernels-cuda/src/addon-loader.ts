/**
 * Which addon file to load: the candidates in order and why each one that did not load was rejected. Pure over a
 * `LoaderHost` (the file system, `require`, the platform), so test/addon-loader.test.ts drives it with fake paths.
 * native.ts supplies the real host and caches the result.
 */
import { join } from "node:path";
import { ADDON_PATH_ENV } from "./env.js";

/** Where a candidate comes from, in the order they are tried. */
export type AddonSource = "override" | "source-build" | "platform-cuda" | "platform-cpu";

/** Why a candidate was not used. */
export type AddonRejection = "not-found" | "load-failed" | "wrong-platform";

/** The platform package holding the prebuilt binaries (an optional dependency of this package). */
export const PLATFORM_PACKAGE = "@dsv4-kv/kernels-cuda-linux-x64";

/** The file every candidate names. */
export const ADDON_FILE = "dsv4kv_kernels.node";

/** Where a source build (`npx dsv4-kv-kernels-build`, cmake-js) puts the addon under this package's root. */
export function sourceBuildPath(packageRoot: string): string {
  return join(packageRoot, "build", "Release", ADDON_FILE);
}

/**
 * Where the bench build (`build:native:bench`, `npx dsv4-kv-kernels-build --bench`) puts its addon under this
 * package's root. Never a loader candidate: only bench-addon.ts `useBenchAddon()` loads it.
 */
export function benchBuildPath(packageRoot: string): string {
  return join(packageRoot, "build-bench", "Release", ADDON_FILE);
}

export interface AddonCandidate {
  source: AddonSource;
  /** null when the location could not be resolved (the platform package is not installed). */
  path: string | null;
  /** Set when this candidate cannot run on this machine (it is rejected without being opened). */
  wrongPlatform?: string;
}

export interface RejectedAddon {
  source: AddonSource;
  path: string | null;
  reason: AddonRejection;
  /** What happened, for people: the missing path, the dlopen message, the platform mismatch. */
  detail: string;
}

export interface LoadedAddon {
  source: AddonSource;
  path: string;
  /** What the loaded file says it is (`compiledWithCuda`), not what its location suggests. */
  kind: "cuda" | "cpu";
}

export interface AddonSelection<T> {
  addon: T | null;
  loaded: LoadedAddon | null;
  /** Every candidate tried before the one that loaded (all of them when none did), in order. */
  rejected: RejectedAddon[];
}

export interface LoaderHost {
  env: Readonly<Record<string, string | undefined>>;
  /** The kernels-cuda package root (holds build/Release for a source build). */
  packageRoot: string;
  /** `${process.platform}-${process.arch}`, and whether the C library is glibc. */
  platform: string;
  glibc: boolean;
  /** The platform package's root directory, or null when it is not installed. */
  platformPackageRoot(): string | null;
  exists(path: string): boolean;
  /** Opens the file (dlopen through `require`); throws what the loader reports as `load-failed`. */
  load(path: string): unknown;
}

/** The platform the prebuilt package is for. */
export const PREBUILT_PLATFORM = "linux-x64";

/** The candidates in the order they are tried: override, source build, platform CUDA, platform CPU. */
export function addonCandidates(host: LoaderHost): AddonCandidate[] {
  const out: AddonCandidate[] = [];
  const override = host.env[ADDON_PATH_ENV];
  if (override) out.push({ source: "override", path: override });
  out.push({ source: "source-build", path: sourceBuildPath(host.packageRoot) });
  const wrong =
    host.platform !== PREBUILT_PLATFORM
      ? `the prebuilt binaries are for ${PREBUILT_PLATFORM} (glibc); this is ${host.platform}`
      : host.glibc
        ? undefined
        : `the prebuilt binaries need glibc; this ${host.platform} uses another C library (musl?)`;
  const root = wrong ? null : host.platformPackageRoot();
  for (const kind of ["cuda", "cpu"] as const) {
    const candidate: AddonCandidate = {
      source: kind === "cuda" ? "platform-cuda" : "platform-cpu",
      path: root === null ? null : join(root, "dist", kind, ADDON_FILE),
    };
    if (wrong) candidate.wrongPlatform = wrong;
    out.push(candidate);
  }
  return out;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Tries each candidate in order; the first that loads wins. `accept` reads the loaded module's kind (CUDA or
 * CPU-only) and may throw to reject a module that is not the addon.
 */
export function selectAddon<T>(
  host: LoaderHost,
  candidates: readonly AddonCandidate[],
  accept: (module: unknown) => { addon: T; kind: "cuda" | "cpu" },
): AddonSelection<T> {
  const rejected: RejectedAddon[] = [];
  for (const c of candidates) {
    const reject = (reason: AddonRejection, detail: string) =>
      rejected.push({ source: c.source, path: c.path, reason, detail });
    if (c.wrongPlatform) {
      reject("wrong-platform", c.wrongPlatform);
      continue;
    }
    if (c.path === null) {
      reject("not-found", `${PLATFORM_PACKAGE} is not installed`);
      continue;
    }
    if (!host.exists(c.path)) {
      reject("not-found", `no file at ${c.path}`);
      continue;
    }
    try {
      const { addon, kind } = accept(host.load(c.path));
      return { addon, loaded: { source: c.source, path: c.path, kind }, rejected };
    } catch (e) {
      reject("load-failed", describe(e));
    }
  }
  return { addon: null, loaded: null, rejected };
}
