// The CUDA toolchain the platform build uses, as one string: turbo hashes it (DSV4KV_TOOLCHAIN, computed by
// tooling/scripts/turbo.mjs before turbo runs) and scripts/build.mjs refuses to run when it does not match what it
// detects, so a CPU-only binary is never replayed from the cache where nvcc exists, nor the reverse.
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** SASS for sm_90, sm_100 and sm_120 plus compute_90 PTX (JIT-compiled by newer drivers for later GPUs). */
export const DEFAULT_CUDA_ARCH = "90-real;100-real;120-real;90-virtual";

/** The environment variable turbo keys the platform build by. */
export const TOOLCHAIN_ENV = "DSV4KV_TOOLCHAIN";

/** The command that sets DSV4KV_TOOLCHAIN and runs turbo. */
export const WRAPPER_COMMAND = "node tooling/scripts/turbo.mjs run build";

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The nvcc the build would use: CUDACXX when set, else `nvcc` on PATH, else CUDA_HOME/CUDA_PATH. (The
 * conventional /usr/local/cuda is not searched: hiding nvcc from PATH must give a CPU-only build.)
 * @param {NodeJS.ProcessEnv} env
 * @returns {string | null}
 */
export function findNvcc(env = process.env) {
  if (env.CUDACXX) return executable(env.CUDACXX) ? env.CUDACXX : null;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, "nvcc"))) return join(dir, "nvcc");
  }
  for (const root of [env.CUDA_HOME, env.CUDA_PATH]) {
    if (root && executable(join(root, "bin", "nvcc"))) return join(root, "bin", "nvcc");
  }
  return null;
}

/**
 * @typedef {{ nvcc: string | null, release: string | null, cudaVersion: string | null, cudacxx: string,
 *   arch: string }} CudaToolchain
 * @param {NodeJS.ProcessEnv} env
 * @returns {CudaToolchain}
 */
export function detectToolchain(env = process.env) {
  const arch = env.DSV4KV_CUDA_ARCH?.trim() || DEFAULT_CUDA_ARCH;
  const nvcc = findNvcc(env);
  let release = null;
  if (nvcc) {
    try {
      const out = execFileSync(nvcc, ["--version"], { encoding: "utf8", env });
      release =
        out
          .split("\n")
          .find((l) => l.includes("release"))
          ?.trim() ?? null;
    } catch {
      release = null;
    }
  }
  const cudaVersion = release?.match(/release (\d+\.\d+)/)?.[1] ?? null;
  // An nvcc that does not answer --version cannot build: treat it as absent.
  return { nvcc: release ? nvcc : null, release, cudaVersion, cudacxx: env.CUDACXX ?? "", arch };
}

/**
 * The cache key: nvcc presence and release line, CUDACXX, the architecture list.
 * @param {CudaToolchain} t
 */
export function toolchainKey(t) {
  const nvcc = t.nvcc ? `nvcc ${t.release}` : "no nvcc";
  return `${nvcc}|CUDACXX=${t.cudacxx}|arch=${t.arch}`;
}
