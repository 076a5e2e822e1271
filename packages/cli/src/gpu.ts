/**
 * The one way the CLI reaches the GPU: `@dsv4-kv/kernels-cuda` is an optional peer dependency (npm does not install
 * it with the CLI), so every GPU path loads it here, dynamically, and a missing package becomes a typed UsageError
 * naming the install command (exit 2, as for other unusable inputs) instead of a module-not-found crash.
 */
import { createRequire } from "node:module";
import { UsageError } from "./commands/args.js";

export const KERNELS_CUDA_PACKAGE = "@dsv4-kv/kernels-cuda";
export const KERNELS_CUDA_INSTALL = `npm install ${KERNELS_CUDA_PACKAGE}`;

/** Whether `name` resolves from the CLI (throws anything but a not-found). */
export type PackageResolver = (name: string) => boolean;

export const resolveFromCli: PackageResolver = (name) => {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch (e) {
    if ((e as { code?: unknown }).code === "MODULE_NOT_FOUND") return false;
    throw e;
  }
};

/** Refuses `flag` = `value` when kernels-cuda is not installed. */
export function requireKernelsCuda(flag: string, value: string, resolves: PackageResolver = resolveFromCli): void {
  if (resolves(KERNELS_CUDA_PACKAGE)) return;
  throw new UsageError(
    flag,
    value,
    `needs ${KERNELS_CUDA_PACKAGE}: install ${KERNELS_CUDA_PACKAGE} (${KERNELS_CUDA_INSTALL})`,
    {
      missingPackage: KERNELS_CUDA_PACKAGE,
      install: KERNELS_CUDA_INSTALL,
    },
  );
}

/** The planner's GPU subpath (it imports kernels-cuda), for `flag` = `value` (e.g. `--path gpu`). */
export async function loadGpuPlanner(
  flag: string,
  value: string,
  resolves: PackageResolver = resolveFromCli,
): Promise<typeof import("@dsv4-kv/planner/gpu")> {
  requireKernelsCuda(flag, value, resolves);
  return import("@dsv4-kv/planner/gpu");
}

/** The controller's GPU backend subpath (it imports kernels-cuda), for `flag` = `value` (`--backend gpu`). */
export async function loadGpuBackend(
  flag: string,
  value: string,
  resolves: PackageResolver = resolveFromCli,
): Promise<typeof import("@dsv4-kv/online-mtp-controller/gpu")> {
  requireKernelsCuda(flag, value, resolves);
  return import("@dsv4-kv/online-mtp-controller/gpu");
}
